"""Section references as people type them, matched to the refs a revision has.

A reference is read as an optional kind word and a code: ``Policy RES9``, ``policy res9``, ``RES9`` and
``Policy RES9 Replacement dwellings`` are the policy ``RES9``; ``3.60``, ``Para 3.60`` and ``paragraph 3.60``
the paragraph ``3.60``; ``CS 1`` is ``CS1`` and ``SP1`` is ``SP01``. A typed reference names a section only
when exactly one of the revision's refs reads as the same kind and code (or, for refs that are not codes, the
same text in any case); otherwise the lookup says which refs are nearest, never picks one.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence
from dataclasses import dataclass

_WORDS = {
    "policy": "policy",
    "policies": "policy",
    "para": "para",
    "para.": "para",
    "paras": "para",
    "paragraph": "para",
    "paragraphs": "para",
    "§": "para",
    "chapter": "chapter",
    "annex": "annex",
    "appendix": "appendix",
    "footnote": "footnote",
    "table": "table",
    "figure": "figure",
    "page": "page",
}
_CODE = r"[A-Za-z]{0,6}[\s/]?\d+(?:[.\-/]\d+)*[A-Za-z]?"
_REF = re.compile(
    rf"^(?:(?P<word>{'|'.join(re.escape(w) for w in sorted(_WORDS, key=len, reverse=True))})\s*)?"
    rf"(?P<code>{_CODE})(?=$|[\s:,;–—-])[\s:,;–—-]*(?P<rest>.*)$",
    re.IGNORECASE,
)
_BARE_KINDS = (None, "policy", "para")
"""What a bare code (no kind word) may name: a policy, a paragraph or a ref that is a code alone (``MM74``)."""
SUGGESTIONS = 5
_MODIFICATION = re.compile(r"^(?P<prefix>(?:[A-Za-z]{1,5}/)?)(?P<letters>[Mm]{1,2})(?P<num>\d{1,3})$")


@dataclass(frozen=True)
class TypedRef:
    """A reference split into its kind word (``None`` when none was typed), code and trailing words."""

    word: str | None
    code: str
    rest: str

    @property
    def key(self) -> str:
        """The code as compared: leading zeros and a slash after the letters dropped (``SP01`` is ``SP1``,
        ``01.03`` is ``1.3``, ``H/9`` is ``H9``)."""
        return re.sub(r"(?<!\d)0+(?=\d)", "", re.sub(r"(?<=[A-Z])/(?=\d)", "", self.code))


def normalise(text: str) -> str:
    """Whitespace collapsed, as every stored ref is."""
    return " ".join(text.split())


def split_ref(text: str) -> TypedRef | None:
    """``Policy RES9 Replacement dwellings`` -> (policy, RES9, Replacement dwellings); ``None`` when the text
    holds no code (``Glossary: Affordable housing``)."""
    match = _REF.match(normalise(text))
    if match is None:
        return None
    word = match["word"]
    code = re.sub(r"\s+", "", match["code"]).upper()
    return TypedRef(_WORDS[word.lower()] if word else None, code, match["rest"])


def canonical_ref(text: str) -> str:
    """The form refs are stored and cited in: ``Policy RES9``, ``Para 3.60``; other text unchanged."""
    typed = split_ref(text)
    if typed is None or (typed.rest and typed.word != "policy"):
        return normalise(text)
    if typed.word == "policy" or (typed.word is None and re.fullmatch(r"[A-Z]+/?\d+(?:\.\d+)*[A-Z]?", typed.code)):
        return f"Policy {typed.code}"
    if typed.word == "para" or (typed.word is None and re.fullmatch(r"\d+(?:\.\d+)*", typed.code)):
        return f"Para {typed.code}"
    return normalise(text) if typed.word is None else f"{typed.word.capitalize()} {typed.code}"


def _same(typed: TypedRef, stored: TypedRef) -> bool:
    if typed.key != stored.key or stored.rest:
        return False
    if typed.word is None:
        return stored.word in _BARE_KINDS
    return typed.word == stored.word


def match_ref(typed: str, refs: Sequence[str]) -> list[str]:
    """The revision's refs that ``typed`` names: the exact ref, else every ref read as its kind and code,
    else every ref equal to it ignoring case. More than one means the reference is ambiguous."""
    typed = normalise(typed)
    if typed in refs:
        return [typed]
    split = split_ref(typed)
    if split is not None:
        found = [ref for ref in refs if (stored := split_ref(ref)) is not None and _same(split, stored)]
        if found:
            return found
    folded = typed.casefold()
    same = [ref for ref in refs if ref.casefold() == folded]
    other = _other_modification_spelling(typed)
    if same or other is None:
        return same
    return [ref for ref in refs if ref.casefold() == other.casefold()]


def _other_modification_spelling(typed: str) -> str | None:
    """``M74`` for ``MM74`` and back: an inspector's report cites main modifications as ``MM74`` while its
    appendix may number them ``M74`` (and says they are the same); asked only when the revision has no ref
    in the spelling typed."""
    match = _MODIFICATION.match(typed)
    if match is None:
        return None
    letters = "M" if len(match["letters"]) == 2 else "MM"
    return f"{match['prefix']}{letters}{match['num']}"


def nearest_refs(typed: str, refs: Sequence[str], limit: int = SUGGESTIONS) -> list[str]:
    """The refs most like ``typed``: the same code under another kind, codes with the same letters and the
    nearest number (``RES8``, ``RES10`` for ``RES9``), then the closest spellings."""
    split = split_ref(typed)
    ranked: list[str] = []
    if split is not None:
        parsed = [(ref, s) for ref in refs if (s := split_ref(ref)) is not None]
        ranked += [ref for ref, s in parsed if s.key == split.key]
        letters, number = _letters_number(split.key)
        kinds = _BARE_KINDS if split.word is None else (split.word,)
        near = []
        for ref, s in parsed:
            other_letters, other = _letters_number(s.key)
            if other_letters == letters and other != number and s.word in kinds:
                near.append((abs(other - number), ref))
        ranked += [ref for _, ref in sorted(near)[:limit]]
    by_text = {ref.casefold(): ref for ref in refs}
    close = difflib.get_close_matches(normalise(typed).casefold(), list(by_text), n=limit, cutoff=0.5)
    ranked += [by_text[c] for c in close]
    return list(dict.fromkeys(ranked))[:limit]


def _letters_number(code: str) -> tuple[str, float]:
    """``RES9`` -> (RES, 9); ``3.60`` -> ("3.", 60): paragraphs are near within their chapter."""
    match = re.fullmatch(r"([A-Z]*)(\d+)", code)
    if match:
        return match[1], float(match[2])
    head, _, tail = code.rpartition(".")
    return (head + ".", float(tail)) if head and tail.isdigit() else (code, -1.0)
