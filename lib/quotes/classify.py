"""How faithfully a quote is in one passage: ``exact`` (character for character), ``normalised`` (the same once
typography is folded, ``lib.quotes.normalise``, or its parts between ellipses in order), else the best word
alignment, ``altered`` when a difference changes the meaning (``lib.quotes.meaning``) and ``close`` when none
does; ``None`` when nothing in the passage is alike enough.

The alignment is found in two steps: rapidfuzz's best partial alignment of the quote's word tokens in the
passage's (fast, in C) places a window, then ``difflib`` aligns the quote word by word with that window taken a
little wider (``lib.quotes.diff``). A quote with ellipses is aligned part by part, each part after the last, and
what the ellipsis stands for is not a difference.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import StrEnum

from rapidfuzz import fuzz

from lib.errors import InvalidArgumentError
from lib.quotes.diff import Op, Stretch, WordChange, align, changes, verbatim
from lib.quotes.meaning import MeaningChange, meaning_changes
from lib.quotes.normalise import Normalised, normalise
from lib.quotes.words import ELLIPSIS, Token, fragments, tokens, word_set

CLOSE_AT = 0.8
"""The least similarity (rapidfuzz's ratio of the folded quote and the aligned text, 0..1) of a ``close`` or an
``altered`` quote; below it the passage does not hold the quote."""

MIN_QUOTE_CHARS = 12
MAX_QUOTE_CHARS = 4000
_WINDOW_CUTOFF = 50.0
"""The least token alignment score (0..100) of the window the word alignment is made in."""


class Verdict(StrEnum):
    EXACT = "exact"
    NORMALISED = "normalised"
    CLOSE = "close"
    ALTERED = "altered"
    NOT_FOUND = "not_found"
    NOT_IN_FORCE = "not_in_force"


_RANK = {
    Verdict.EXACT: 5,
    Verdict.NORMALISED: 4,
    Verdict.CLOSE: 3,
    Verdict.ALTERED: 3,
    Verdict.NOT_IN_FORCE: 1,
    Verdict.NOT_FOUND: 0,
}


def rank(verdict: str) -> int:
    """``exact`` > ``normalised`` > ``close`` = ``altered`` (told apart by similarity) > ``not_found``."""
    return _RANK[Verdict(verdict)]


def check_quote(quote: str) -> str:
    """The quote, trimmed; ``invalid_argument`` when too short to be specific or too long to be a passage."""
    if not isinstance(quote, str) or len(quote.strip()) < MIN_QUOTE_CHARS:
        raise InvalidArgumentError(f"quote must hold at least {MIN_QUOTE_CHARS} characters of the passage")
    if len(quote) > MAX_QUOTE_CHARS:
        raise InvalidArgumentError(f"quote must be at most {MAX_QUOTE_CHARS} characters (a passage, not a document)")
    return quote.strip()


@dataclass(frozen=True)
class Quote:
    """A quote read once per check: as given, folded, its parts between ellipses, and its word tokens (those of
    the folded quote, ellipses left out) with the token range of each part (punctuation at its ends left out:
    it is aligned on words)."""

    text: str
    folded: str
    parts: list[str]
    tokens: list[Token]
    part_ranges: list[tuple[int, int]]
    words: frozenset[str]

    @classmethod
    def read(cls, text: str) -> Quote:
        folded = normalise(text).text
        omitted = [m.span() for m in ELLIPSIS.finditer(folded)]
        toks: list[Token] = []
        ranges: list[tuple[int, int]] = []
        begun = 0
        for token in tokens(folded):
            while omitted and token.start >= omitted[0][1]:
                omitted.pop(0)
                ranges.append((begun, len(toks)))
                begun = len(toks)
            if not (omitted and omitted[0][0] <= token.start < omitted[0][1]):
                toks.append(token)
        ranges.append((begun, len(toks)))
        parts = [r for r in (_worded(toks, a, b) for a, b in ranges) if r[1] > r[0]]
        return cls(text, folded, fragments(folded), toks, parts, word_set(folded))


def _worded(toks: Sequence[Token], a: int, b: int) -> tuple[int, int]:
    """``toks[a:b]`` without the punctuation at either end: a quote's closing full stop is not a word of it."""
    while a < b and not any(c.isalnum() for c in toks[a].text):
        a += 1
    while b > a and not any(c.isalnum() for c in toks[b - 1].text):
        b -= 1
    return a, b


@dataclass(frozen=True)
class QuoteMatch:
    """Where and how a quote was found in one passage (offsets in the passage's original text)."""

    verdict: Verdict
    start: int = 0
    end: int = 0
    similarity: float = 1.0
    changes: list[WordChange] = field(default_factory=list)
    meaning: list[MeaningChange] = field(default_factory=list)


def _in_order(parts: Sequence[str], text: str) -> tuple[int, int] | None:
    """The span from the first part to the last when every part is in ``text``, each after the one before."""
    at = text.find(parts[0])
    while at >= 0:
        end, ok = at + len(parts[0]), True
        for part in parts[1:]:
            found = text.find(part, end)
            if found < 0:
                ok = False
                break
            end = found + len(part)
        if ok:
            return at, end
        at = text.find(parts[0], at + 1)
    return None


def find_verbatim(quote: Quote, text: str) -> QuoteMatch | None:
    """``exact``: the quote as given, character for character, else None."""
    at = text.find(quote.text)
    return QuoteMatch(Verdict.EXACT, at, at + len(quote.text)) if at >= 0 else None


def find_normalised(quote: Quote, folded: Normalised) -> QuoteMatch | None:
    """``normalised``: the folded quote in the folded text, or its parts between ellipses in order (one of them
    at least ``MIN_QUOTE_CHARS`` long, so that a few common words between ellipses do not match), else None."""
    span = _in_order([quote.folded], folded.text) if quote.folded else None
    if span is None and quote.parts != [quote.folded] and max(map(len, quote.parts), default=0) >= MIN_QUOTE_CHARS:
        span = _in_order(quote.parts, folded.text)
    if span is None:
        return None
    start, end = folded.span(*span)
    return QuoteMatch(Verdict.NORMALISED, start, end)


def find_exact(quote: Quote, text: str, folded: Normalised) -> QuoteMatch | None:
    """``exact``, else ``normalised``, else None."""
    return find_verbatim(quote, text) or find_normalised(quote, folded)


def _cut_word(stretch: Stretch, a: int, b: int, quote: Quote, text: str, toks: Sequence[Token]) -> Stretch | None:
    """``stretch`` without the part that is only the quote starting or ending inside a word of the text (``2.``
    quoted of ``2.9 ha``, ``ment of`` of ``development of``); None when nothing else is left of it."""
    if stretch.op != "replaced" or (stretch.i2 != b and stretch.i1 != a):
        return stretch
    i1, i2, j1, j2 = stretch.i1, stretch.i2, stretch.j1, stretch.j2
    if stretch.i2 == b:  # the quote's last words: a beginning of the text at some token of the stretch
        for m in range(i2 - i1, 0, -1):
            tail = verbatim(quote.folded, quote.tokens, i2 - m, i2)
            j = next((j for j in range(j1, j2) if text.startswith(tail, toks[j].start)), None)
            if j is not None:
                i2, j2 = i2 - m, j
                break
    else:  # the quote's first words: an end of the text at some token of the stretch
        for m in range(i2 - i1, 0, -1):
            head = verbatim(quote.folded, quote.tokens, i1, i1 + m)
            j = next((j for j in range(j2, j1, -1) if text.endswith(head, 0, toks[j - 1].end)), None)
            if j is not None:
                i1, j1 = i1 + m, j
                break
    if i1 == i2 and j1 == j2:
        return None
    op: Op = "replaced" if i1 < i2 and j1 < j2 else ("inserted" if i1 < i2 else "removed")
    return Stretch(op, i1, i2, j1, j2)


def find_close(
    quote: Quote, folded: Normalised, toks: Sequence[Token], token_texts: Sequence[str] | None = None
) -> QuoteMatch | None:
    """The quote aligned word by word with the passage (``folded``, its tokens ``toks``, their texts
    ``token_texts`` when the caller keeps them): ``altered`` or ``close`` with each difference, or None when not
    ``CLOSE_AT`` alike."""
    words = [t.text for t in quote.tokens]
    source = token_texts if token_texts is not None else [t.text for t in toks]
    at, weighted, total = 0, 0.0, 0
    stretches: list[tuple[WordChange, tuple[str, str]]] = []
    first = last = -1
    for a, b in quote.part_ranges:
        part = words[a:b]
        window = fuzz.partial_ratio_alignment(part, source[at:], score_cutoff=_WINDOW_CUTOFF)
        if window is None:
            return None
        pad = (b - a) // 4 + 2
        lo, hi = max(at, at + window.dest_start - pad), min(len(source), at + window.dest_end + pad)
        aligned = align(part, source, lo, hi)
        if aligned.hi <= aligned.lo or 2 * aligned.equal < b - a:
            return None
        quoted_text = verbatim(quote.folded, quote.tokens, a, b)
        found_text = verbatim(folded.text, toks, aligned.lo, aligned.hi)
        weighted += fuzz.ratio(quoted_text, found_text) / 100 * len(quoted_text)
        total += len(quoted_text)
        shifted = [Stretch(s.op, s.i1 + a, s.i2 + a, s.j1, s.j2) for s in aligned.stretches]
        shifted = [t for s in shifted if (t := _cut_word(s, a, b, quote, folded.text, toks)) is not None]
        for change in changes(quote.folded, quote.tokens, folded.text, toks, shifted):
            stretches.append((change, (change.quoted, change.source)))
        first = aligned.lo if first < 0 else first
        last, at = aligned.hi, aligned.hi
    similarity = round(weighted / total, 3) if total else 0.0
    if similarity < CLOSE_AT:
        return None
    start, end = folded.span(toks[first].start, toks[last - 1].end)
    word_changes = [c for c, _ in stretches]
    meaning = meaning_changes([pair for _, pair in stretches])
    if not word_changes:
        return QuoteMatch(Verdict.NORMALISED, start, end)
    verdict = Verdict.ALTERED if meaning else Verdict.CLOSE
    return QuoteMatch(verdict, start, end, similarity, word_changes, meaning)
