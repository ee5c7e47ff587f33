"""A quote's or a passage's word tokens, each with its place in the text, and a quote cut at its ellipses.

A token is a number as written (``10%``, ``1,000``, ``£2.5m``, ``2024/25``, ``3rd``), a word with its inner
apostrophes and hyphens (``can't``, ``well-designed``), or one punctuation mark. Differences are aligned on these
tokens, so a changed word is reported whole and a dropped comma apart from the word before it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(r"[£$€]?\d+(?:[.,/:]\d+)*(?:%|st|nd|rd|th|m|bn|k)?(?![\w])|\w+(?:['-]\w+)*|[^\w\s]")
_WORD = re.compile(r"[A-Za-z0-9]+")
ELLIPSIS = re.compile(r"\[\s*\.(?:\s?\.){2,}\s*\]|\.(?:\s?\.){2,}")
"""An omission marked in a folded quote: ``...``, ``. . .`` or ``[...]`` (``…`` folds to ``...``)."""


@dataclass(frozen=True)
class Token:
    text: str
    start: int
    end: int


def tokens(text: str) -> list[Token]:
    """The word tokens of ``text`` (see the module), in order."""
    return [Token(m.group(0), m.start(), m.end()) for m in _TOKEN.finditer(text)]


def word_set(text: str) -> frozenset[str]:
    """The lower-cased letters-and-digits words of ``text``: what passages are picked by."""
    return frozenset(w.lower() for w in _WORD.findall(text))


def fragments(folded: str) -> list[str]:
    """The parts of a folded quote between its ellipses (none empty); one part when it has no ellipsis."""
    return [part.strip() for part in ELLIPSIS.split(folded) if part.strip(" .")]
