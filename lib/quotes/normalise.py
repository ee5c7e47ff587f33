"""A text with its typography folded away (``normalise``), keeping for every folded character the offset of the
original character it came from, so a match in folded text is reported at its place in the original.

Folded: ligatures and compatibility forms (NFKC), curly quotes and primes, dashes, no-break spaces, soft
hyphens, bullet marks, the ``[^N]`` footnote markers of the stored text (printed as superscripts, never
quoted), a hyphen that splits a word at a line end (``develop-\\nment``), and every run of whitespace.
"""

from __future__ import annotations

import re
import unicodedata
from array import array
from dataclasses import dataclass

_QUOTES = str.maketrans(
    dict.fromkeys("\u2018\u2019\u201a\u201b\u2032", "'")
    | dict.fromkeys("\u201c\u201d\u201e\u201f\u2033", '"')
    | dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212", "-")
    | {"\u00a0": " "}
)
_BULLETS = frozenset("\u2022\u25e6\u25aa\u25cf\u2023\u2043\u25a0\u25a1\u2219\u00b7\uf0b7")
_SOFT = frozenset("\u00ad\u200b\u200c\u200d\ufeff")
_FOOTNOTE = re.compile(r"\[\^\d+\]")
_SPACE = re.compile(r"\s+")
_PLAIN = re.compile(r"[\x21-\x2c\x2e-\x5a\x5c-\x7e]+")
"""Printable ASCII but ``-`` (maybe a line-end hyphen) and ``[`` (maybe a footnote marker): copied as it is."""


@dataclass(frozen=True)
class Normalised:
    """A text with typography folded away, and where each of its characters came from in the original."""

    text: str
    origin: array[int]
    """``origin[i]``: the offset in the original text of normalised character ``i`` (4 bytes a character)."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of normalised ``[start, end)``."""
        if end <= start:
            at = self.origin[start] if start < len(self.origin) else (self.origin[-1] + 1 if self.origin else 0)
            return at, at
        return self.origin[start], self.origin[end - 1] + 1


def _line_end_hyphen(text: str, i: int) -> int | None:
    """Where the second half of a word broken at a line end by the hyphen at ``i`` starts, else None."""
    n = len(text)
    j = i + 1
    while j < n and text[j] in " \t\r":
        j += 1
    if j >= n or text[j] != "\n":
        return None
    k = j + 1
    while k < n and text[k].isspace():
        k += 1
    return k if k < n and text[k].islower() else None


def normalise(text: str) -> Normalised:
    """``text`` folded (see the module), every run of whitespace one space, trimmed. Runs of printable ASCII
    other than ``[`` and ``-`` need no folding and are copied whole, runs of whitespace become one space; the
    rest is read a character at a time."""
    out: list[str] = []
    origin = array("I")
    last = " "  # the last character written; a space at the start drops leading whitespace
    i, n = 0, len(text)
    while i < n:
        if plain := _PLAIN.match(text, i):
            out.append(plain.group(0))
            origin.extend(range(i, plain.end()))
            last, i = text[plain.end() - 1], plain.end()
            continue
        if space := _SPACE.match(text, i):
            if last != " ":
                out.append(" ")
                origin.append(i)
                last = " "
            i = space.end()
            continue
        char = text[i]
        if char in _SOFT or char in _BULLETS:
            i += 1
            continue
        if char == "[" and (marker := _FOOTNOTE.match(text, i)):
            i = marker.end()
            continue
        if char == "-" and last.isalpha() and (joined := _line_end_hyphen(text, i)) is not None:
            i = joined
            continue
        for folded in unicodedata.normalize("NFKC", char).translate(_QUOTES) if not char.isspace() else " ":
            if not folded.isspace():
                out.append(folded)
                origin.append(i)
                last = folded
            elif last != " ":
                out.append(" ")
                origin.append(i)
                last = " "
        i += 1
    folded_text = "".join(out)
    if folded_text.endswith(" "):
        folded_text = folded_text[:-1]
        origin.pop()
    return Normalised(folded_text, origin)
