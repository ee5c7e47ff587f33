"""Reasoned justification: which policy each paragraph of a plan supports (``Section.supports``).

A plan explains each policy in numbered paragraphs before or after it. Found from the document alone:
a paragraph in a chapter holding one policy supports that one; else the one policy its heading names, by code
(``LP06 - Supported Housing``) or by title (``6.3 Community Safety`` over ``Policy LP17 - Community Safety``);
else the one policy it names; else the one policy in its numbered part (``3.4.8`` beside a policy among the
``3.4`` paragraphs); else its neighbour on the side where this document puts justification, decided by the
paragraphs that name their policy.
"""

from __future__ import annotations

import re
from collections import Counter

from lib.models import Section
from lib.text.policy_codes import code_key

LONG_TITLE_WORDS = 5
_WORD_RE = re.compile(r"[a-z]+")
_MINOR_WORDS = frozenset({"a", "an", "and", "the", "of", "in", "for", "to", "on", "at", "by", "with", "policy"})
_CODE_IN_TEXT_RE = re.compile(
    r"(?<![A-Za-z0-9])(?:([A-Z]{1,5})[ /]?|Policy\s+)(\d{1,3}[A-Za-z]?(?:\.\d{1,2})?)(?![0-9])"
)
"""A policy code as a text cites it: ``LP5``, ``CS 1``, ``H/9``, ``Policy 12``."""


def with_supports(sections: list[Section]) -> list[Section]:
    """Each paragraph of a chapter that holds policies supports one of them (its reasoned justification):
    the chapter's only policy, else the one policy the paragraph names, else the one policy in its numbered
    part (``3.4.8`` and a policy among the ``3.4`` paragraphs), else its neighbour on the side the document
    puts justification (after its policy or before it, decided by the paragraphs that name one)."""
    chapters: dict[str, list[int]] = {}
    for index, section in enumerate(sections):
        if section.kind == "policy":
            chapters.setdefault(section.chapter, []).append(index)
    after = _justification_follows(sections, chapters)
    parts = {policy: _parts(sections, policy) for policies in chapters.values() for policy in policies}
    supported: list[Section] = []
    for index, section in enumerate(sections):
        policies = chapters.get(section.chapter, [])
        if section.kind == "paragraph" and policies:
            policy = _supported_policy(sections, index, {policy: parts[policy] for policy in policies}, after)
            section = section.model_copy(update={"supports": policy}) if policy else section
        supported.append(section)
    return supported


def _named_policy(sections: list[Section], index: int, policies: list[int]) -> int | None:
    named_codes = {code_key("".join(match.groups(""))) for match in _CODE_IN_TEXT_RE.finditer(sections[index].text)}
    named = [policy for policy in policies if code_key(sections[policy].section_ref.split(" (")[0]) in named_codes]
    return named[0] if len(named) == 1 else None


def _policy_in_heading(sections: list[Section], index: int, policies: list[int]) -> int | None:
    """The one policy the paragraph's heading names: by its code leading the heading, else by the words of the
    policy's title (small words aside) standing in the heading."""
    heading = sections[index].title
    if not heading:
        return None
    lead = _CODE_IN_TEXT_RE.match(heading)
    if lead is not None:
        code = code_key("".join(lead.groups("")))
        coded = [p for p in policies if code_key(sections[p].section_ref.split(" (")[0]) == code]
        if len(coded) == 1:
            return coded[0]
    words = _content_words(heading)
    titled = [p for p in policies if _heading_holds_title(words, _content_words(sections[p].title))]
    return titled[0] if len(titled) == 1 else None


def _heading_holds_title(heading: set[str], title: set[str]) -> bool:
    """Every word of the title is in the heading; of a long title (five words or more), all but one (a heading
    that wraps onto a second line, or a page, loses its last word)."""
    missing = len(title - heading)
    return bool(title) and (missing == 0 or (missing == 1 and len(title) >= LONG_TITLE_WORDS))


def _content_words(text: str) -> set[str]:
    return set(_WORD_RE.findall(text.lower())) - _MINOR_WORDS


def _parts(sections: list[Section], index: int) -> set[str]:
    """The numbered parts a section sits in, where paragraphs are numbered in three levels or more: ``3.4``
    for paragraph ``3.4.8``; for a policy, the parts of the paragraphs just before and just after it."""
    if sections[index].kind == "paragraph":
        return {part for part in [_part_of(sections[index])] if part}
    parts: set[str] = set()
    for step in (-1, 1):
        candidate = index + step
        while 0 <= candidate < len(sections) and sections[candidate].chapter == sections[index].chapter:
            if sections[candidate].kind == "paragraph":
                parts |= {part for part in [_part_of(sections[candidate])] if part}
                break
            candidate += step
    return parts


def _part_of(paragraph: Section) -> str | None:
    number = paragraph.section_ref.removeprefix("Para ").split(" (")[0].split(".")
    return ".".join(number[:-1]) if len(number) >= 3 else None


def _policy_in_part(sections: list[Section], index: int, policies: dict[int, set[str]]) -> int | None:
    """The one policy in the paragraph's numbered part; of several, the one wholly inside it."""
    part = _parts(sections, index)
    if not part:
        return None
    inside = [(policy, parts) for policy, parts in policies.items() if part <= parts]
    if len(inside) > 1:
        inside = [(policy, parts) for policy, parts in inside if parts == part]
    return inside[0][0] if len(inside) == 1 else None


def _justification_follows(sections: list[Section], chapters: dict[str, list[int]]) -> bool:
    votes = Counter[bool]()
    for index, section in enumerate(sections):
        policies = chapters.get(section.chapter, [])
        if section.kind == "paragraph" and len(policies) > 1:
            named = _named_policy(sections, index, policies)
            if named is not None:
                votes[named < index] += 1
    return votes[True] >= votes[False]


def _supported_policy(sections: list[Section], index: int, policies: dict[int, set[str]], after: bool) -> str | None:
    """``policies``: the indexes of the chapter's policies, each with its numbered parts."""
    if len(policies) == 1:
        return sections[next(iter(policies))].section_ref
    named = _policy_in_heading(sections, index, list(policies))
    if named is None:
        named = _named_policy(sections, index, list(policies))
    if named is None:
        named = _policy_in_part(sections, index, policies)
    if named is None:
        before = [policy for policy in policies if policy < index]
        later = [policy for policy in policies if policy > index]
        sides = (before[-1:], later[:1]) if after else (later[:1], before[-1:])
        named = next((side[0] for side in sides if side), None)
    return sections[named].section_ref if named is not None else None
