"""Where a compared section went, in words an officer leads with (issue 44): kept, reworded, renumbered, moved
to another chapter, split over several sections, removed, or new; read from ``lib.policies.compare``'s
``Comparison`` (its reference status and the best-matching sections it found). Pure functions.

A match counts as the section's counterpart from ``COUNTERPART`` up (the cosine similarity of its best
passage to one of the section's, as ``compare.best_matches`` scores it); below it the words are not said
again anywhere and the section is called removed. Two or more counterparts within ``SPLIT_MARGIN`` of the
best, of a section of several passages, are read as a split: each says a part of it about as well."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from lib.policies.compare import Comparison, ReferenceStatus, SectionMatch, WordDiff, passages, word_diff

COUNTERPART = 0.6
SPLIT_MARGIN = 0.05
_NUMBERING = re.compile(r"^\s*(chapter|part|section)?\s*[0-9]+[A-Za-z]?[.:)]?\s+", re.IGNORECASE)


def _chapter(name: str) -> str:
    """A chapter's title without its number: renumbering every chapter does not move a section."""
    return " ".join(_NUMBERING.sub("", name).split()).casefold()


@dataclass(frozen=True)
class Movement:
    kind: str  # unchanged, reworded, renumbered, moved, split, removed, new, replaced
    sentence: str
    targets: list[SectionMatch] = field(default_factory=list)


def _refs(matches: list[SectionMatch]) -> str:
    names = [m.section_ref for m in matches]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def where_it_went(c: Comparison) -> Movement:
    """The movement of ``c.section_ref`` from ``c.from_revision`` to ``c.to_revision``, first in the page."""
    ref, old, new = c.section_ref, c.from_revision.version_label, c.to_revision.version_label
    if c.reference_status == ReferenceStatus.UNCHANGED:
        return Movement("unchanged", f"{ref} is {ref} in both the {old} and the {new}, word for word.")
    if c.reference_status == ReferenceStatus.CHANGED:
        counts = f"{c.diff.words_removed} word(s) removed, {c.diff.words_added} added" if c.diff else ""
        return Movement("reworded", f"{ref} is still {ref} in the {new}; its wording changed ({counts}).")
    found = [m for m in c.matches if m.score >= COUNTERPART]
    if c.reference_status == ReferenceStatus.MISSING_IN_FROM:
        came = f" It says what {_refs(found[:1])} of the {old} said." if found else ""
        return Movement("new", f"{ref} is new in the {new}: the {old} has no {ref}.{came}", found[:1])
    reused = (
        f" {ref} of the {new} says something else."
        if c.reference_status == ReferenceStatus.DIFFERENT
        else f" The {new} has no {ref}."
    )
    if not found:
        return Movement("removed", f"{ref} of the {old} was removed: nothing in the {new} says it again.{reused}")
    best = found[0]
    together = [m for m in found if best.score - m.score <= SPLIT_MARGIN]
    several = c.from_section is not None and len(passages(c.from_section.text)) > 1
    if len(together) > 1 and several:
        return Movement(
            "split",
            f"{ref} of the {old} was split: its parts are now {_refs(together)} of the {new}.{reused}",
            together,
        )
    chapter_from = c.from_section.chapter if c.from_section else ""
    if chapter_from and best.chapter and _chapter(best.chapter) != _chapter(chapter_from):
        return Movement(
            "moved",
            f"{ref} of the {old} moved to {best.chapter}: it is now {best.section_ref} of the {new}.{reused}",
            [best],
        )
    within = f", in {best.chapter}" if best.chapter else ""
    return Movement(
        "renumbered",
        f"{ref} of the {old} was renumbered: it is now {best.section_ref} of the {new}{within}.{reused}",
        [best],
    )


def _closest(text: str, target: str) -> str:
    """The passage of ``text`` whose words are most like ``target``'s (the whole text when it has one)."""
    aim = target.split()
    return max(passages(text), key=lambda p: difflib.SequenceMatcher(None, p.split(), aim, autojunk=False).ratio())


def changes_within(c: Comparison, movement: Movement) -> WordDiff | None:
    """The word-level changes inside the section once it is found: ``c.diff`` where the reference stayed, else
    the section's closest passage against its counterpart's (renumbered, moved, new); none for a removal or a
    split (its parts are listed instead)."""
    if movement.kind in ("unchanged", "reworded"):
        return c.diff
    if movement.kind not in ("renumbered", "moved", "new") or not movement.targets:
        return None
    passage = movement.targets[0].passage
    if movement.kind == "new" and c.to_section is not None:
        return word_diff(passage, _closest(c.to_section.text, passage))
    if c.from_section is None:
        return None
    return word_diff(_closest(c.from_section.text, passage), passage)
