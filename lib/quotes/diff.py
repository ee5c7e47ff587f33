"""The word-by-word difference between a quote and the stretch of a text it was aligned with.

Both sides are cut into word tokens (``lib.quotes.words``) and aligned with ``difflib`` on whole tokens, so a
change is always whole words, given verbatim (as folded: straight quotes and dashes) from each side: the words
the quote ``replaced``, ``inserted`` (not in the text) or ``removed`` (in the text, not in the quote). The
stretch of text is taken a little wider than the quote and trimmed to the words aligned with it, so a word the
quote left out at either end of the stretch is not reported as removed.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, Field

from lib.quotes.words import Token

Op = Literal["replaced", "inserted", "removed"]
_OPS: dict[str, Op] = {"replace": "replaced", "delete": "inserted", "insert": "removed"}


class WordChange(BaseModel):
    """One stretch where the quote and the text differ, word for word."""

    op: Op = Field(
        description="replaced | inserted (in the quote, not the text) | removed (in the text, not the quote)"
    )
    quoted: str = Field(description="The quote's words here, verbatim (empty when removed)")
    source: str = Field(description="The text's words here, verbatim (empty when inserted)")


@dataclass(frozen=True)
class Stretch:
    """One difference as token ranges: ``quoted[i1:i2]`` stands where the text has ``source[j1:j2]``."""

    op: Op
    i1: int
    i2: int
    j1: int
    j2: int


@dataclass(frozen=True)
class Alignment:
    """A quote aligned word by word with ``source[lo:hi]``: the tokens equal on both sides, and the stretches
    that differ."""

    lo: int
    hi: int
    equal: int
    stretches: list[Stretch]


def _trim(opcodes: Sequence[tuple[str, int, int, int, int]]) -> list[tuple[str, int, int, int, int]]:
    """Drop the text's words beyond the quote's first and last words (the stretch was taken wider)."""
    ops = list(opcodes)
    if ops and ops[0][0] == "insert":
        ops = ops[1:]
    if ops and ops[-1][0] == "insert":
        ops = ops[:-1]
    if not ops:
        return ops
    tag, i1, i2, j1, j2 = ops[0]
    if tag == "replace" and j2 - j1 > i2 - i1:
        ops[0] = (tag, i1, i2, j2 - (i2 - i1), j2)
    tag, i1, i2, j1, j2 = ops[-1]
    if tag == "replace" and j2 - j1 > i2 - i1:
        ops[-1] = (tag, i1, i2, j1, j1 + (i2 - i1))
    return ops


def align(quoted: Sequence[str], source: Sequence[str], lo: int = 0, hi: int | None = None) -> Alignment:
    """``quoted`` (token texts) aligned with ``source[lo:hi]``, trimmed to the words the quote spans."""
    hi = len(source) if hi is None else hi
    window = list(source[lo:hi])
    ops = _trim(difflib.SequenceMatcher(a=list(quoted), b=window, autojunk=False).get_opcodes())
    if not ops:
        return Alignment(lo, lo, 0, [])
    stretches = [Stretch(_OPS[t], i1, i2, lo + j1, lo + j2) for t, i1, i2, j1, j2 in ops if t != "equal"]
    equal = sum(i2 - i1 for t, i1, i2, _, _ in ops if t == "equal")
    return Alignment(lo + ops[0][3], lo + ops[-1][4], equal, stretches)


def verbatim(text: str, toks: Sequence[Token], i1: int, i2: int) -> str:
    """The words ``toks[i1:i2]`` as ``text`` has them (with the spacing between them), or ``""``."""
    return text[toks[i1].start : toks[i2 - 1].end] if i2 > i1 else ""


def changes(
    quote: str, quote_tokens: Sequence[Token], text: str, text_tokens: Sequence[Token], stretches: Sequence[Stretch]
) -> list[WordChange]:
    """Each differing stretch with the words of both sides, verbatim."""
    return [
        WordChange(
            op=s.op, quoted=verbatim(quote, quote_tokens, s.i1, s.i2), source=verbatim(text, text_tokens, s.j1, s.j2)
        )
        for s in stretches
    ]


def legacy(change: WordChange) -> str:
    """The change as the older ``differences`` strings gave it: ``'quoted' -> 'source'``."""
    return f"{change.quoted!r} -> {change.source!r}"
