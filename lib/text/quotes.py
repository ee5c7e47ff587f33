"""Is a quoted passage in a text, and how faithfully: ``exact``, ``normalised`` (differences only in whitespace,
line-end hyphenation, ligatures, curly quotes, dashes, bullet marks and footnote markers), ``close`` (a few
words differ; the similarity and the differing words), or ``not_found``.

A text is normalised once (``Normalised``), keeping for every normalised character the offset of the original
character it came from, so a match is reported at its place in the original text. The approximate match is
rapidfuzz's best partial alignment of the normalised quote, tried only in the passages that share the most of
the quote's words (``candidates``), so a revision of a few megabytes costs a few set intersections and a
handful of alignments, not an alignment over all of it.
"""

from __future__ import annotations

import bisect
import difflib
import re
import unicodedata
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from itertools import groupby
from typing import Any

from rapidfuzz import fuzz

from lib.errors import InvalidArgumentError
from lib.text.chunking import merge_chunk_spans

CLOSE_AT = 0.85
"""The least similarity (rapidfuzz's partial ratio over normalised text, 0..1) reported as ``close``."""

CANDIDATES = 6
"""How many passages, those sharing most of the quote's words, are aligned for a ``close`` match."""

MIN_QUOTE_CHARS = 12
MAX_QUOTE_CHARS = 4000

CONTEXT_CHARS = 240
"""At most this much of the text on each side of a match is given as its context (cut at a sentence end)."""

_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                         "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
                         "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-",
                         "\u2015": "-", "\u2212": "-", "\u00a0": " "})  # fmt: skip
_BULLETS = frozenset("\u2022\u25e6\u25aa\u25cf\u2023\u2043\u25a0\u25a1\u2219\u00b7\uf0b7")
_SOFT = frozenset("\u00ad\u200b\u200c\u200d\ufeff")
_WORD = re.compile(r"[A-Za-z0-9]+")
_SENTENCE_END = re.compile(r"[.!?;:](?=\s)|\n\s*\n")
_RANK = {"exact": 3, "normalised": 2, "close": 1, "not_found": 0}
_FOOTNOTE = re.compile(r"\[\^\d+\]")
"""A footnote reference as the stored text marks it (``plan[^2],``): printed as a superscript, never quoted."""


class Verdict(StrEnum):
    EXACT = "exact"
    NORMALISED = "normalised"
    CLOSE = "close"
    NOT_FOUND = "not_found"


@dataclass(frozen=True)
class Normalised:
    """A text with typography folded away, and where each of its characters came from in the original."""

    text: str
    origin: tuple[int, ...]
    """``origin[i]``: the offset in the original text of normalised character ``i``."""

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The original span of normalised ``[start, end)``."""
        if end <= start:
            at = self.origin[start] if start < len(self.origin) else (self.origin[-1] + 1 if self.origin else 0)
            return at, at
        return self.origin[start], self.origin[end - 1] + 1


def normalise(text: str) -> Normalised:
    """Fold ligatures and compatibility forms (NFKC), curly quotes, dashes and no-break spaces; drop soft
    hyphens, bullet marks, and a hyphen that ends a line inside a word (``develop-\\nment``); collapse every run
    of whitespace to one space; trim."""
    out: list[str] = []
    origin: list[int] = []
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in _SOFT or char in _BULLETS:
            i += 1
            continue
        if char == "[" and (marker := _FOOTNOTE.match(text, i)):
            i = marker.end()
            continue
        if char == "-" and out and out[-1].isalpha():
            j = i + 1
            while j < n and text[j] in " \t\r":
                j += 1
            if j < n and text[j] == "\n":
                k = j + 1
                while k < n and text[k].isspace():
                    k += 1
                if k < n and text[k].islower():  # a word broken over a line: join its halves
                    i = k
                    continue
        if char.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                origin.append(i)
            i += 1
            continue
        for folded in unicodedata.normalize("NFKC", char).translate(_QUOTES):
            if folded.isspace():
                if out and out[-1] != " ":
                    out.append(" ")
                    origin.append(i)
            else:
                out.append(folded)
                origin.append(i)
        i += 1
    while out and out[-1] == " ":
        out.pop()
        origin.pop()
    return Normalised("".join(out), tuple(origin))


def words(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


@dataclass(frozen=True)
class QuoteMatch:
    """Where and how a quote was found in one passage (offsets in the passage's original text)."""

    verdict: Verdict
    start: int = 0
    end: int = 0
    similarity: float = 0.0
    differences: list[str] = field(default_factory=list)
    """For ``close``: each differing stretch, ``'quoted' -> 'text'`` (a side empty when words are missing)."""


def differing_words(quoted: str, found: str) -> list[str]:
    """The stretches of words in which ``quoted`` and ``found`` differ."""
    a, b = quoted.split(), found.split()
    out = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op != "equal":
            out.append(f"{' '.join(a[i1:i2])!r} -> {' '.join(b[j1:j2])!r}")
    return out


def find_exact(quote: str, text: str, normalised: Normalised) -> QuoteMatch | None:
    """``exact`` (the quote as given) or ``normalised`` (the folded quote in the folded text), else None."""
    at = text.find(quote)
    if at >= 0:
        return QuoteMatch(Verdict.EXACT, at, at + len(quote), 1.0)
    folded = normalise(quote).text
    at = normalised.text.find(folded) if folded else -1
    if at >= 0:
        start, end = normalised.span(at, at + len(folded))
        return QuoteMatch(Verdict.NORMALISED, start, end, 1.0)
    return None


def find_close(quote: str, normalised: Normalised) -> QuoteMatch | None:
    """The best approximate alignment of the folded quote in ``normalised``, if at least ``CLOSE_AT`` alike."""
    folded = normalise(quote).text
    if not folded or not normalised.text:
        return None
    aligned = fuzz.partial_ratio_alignment(folded, normalised.text, score_cutoff=CLOSE_AT * 100)
    if aligned is None:
        return None
    found = normalised.text[aligned.dest_start : aligned.dest_end]
    start, end = normalised.span(aligned.dest_start, aligned.dest_end)
    return QuoteMatch(Verdict.CLOSE, start, end, round(aligned.score / 100, 3), differing_words(folded, found))


def candidates(quote: str, passages: Sequence[frozenset[str]], limit: int = CANDIDATES) -> list[int]:
    """The indexes of the ``limit`` passages (each given as its set of lower-cased words) sharing most of the
    quote's distinct words; none sharing fewer than half."""
    wanted = set(words(quote))
    if not wanted:
        return []
    shared = [(len(wanted & passage), i) for i, passage in enumerate(passages)]
    shared = [(n, i) for n, i in shared if 2 * n >= len(wanted)]
    shared.sort(key=lambda pair: (-pair[0], pair[1]))
    return [i for _, i in shared[:limit]]


def check_quote(quote: str) -> str:
    """The quote, trimmed; ``invalid_argument`` when too short to be specific or too long to be a passage."""
    if not isinstance(quote, str) or len(quote.strip()) < MIN_QUOTE_CHARS:
        raise InvalidArgumentError(f"quote must hold at least {MIN_QUOTE_CHARS} characters of the passage")
    if len(quote) > MAX_QUOTE_CHARS:
        raise InvalidArgumentError(f"quote must be at most {MAX_QUOTE_CHARS} characters (a passage, not a document)")
    return quote.strip()


def rank(verdict: str) -> int:
    """``exact`` > ``normalised`` > ``close`` > ``not_found``."""
    return _RANK[verdict]


@dataclass
class Passage:
    """One passage a quote may be in (a policy section, an application document), rejoined from its chunks, with
    where each chunk starts in it and the page each chunk is on."""

    key: str
    text: str
    words: frozenset[str]
    chunk_starts: list[int]
    chunk_pages: list[int]
    _normalised: Normalised | None = field(default=None, repr=False)

    @property
    def normalised(self) -> Normalised:
        if self._normalised is None:
            self._normalised = normalise(self.text)
        return self._normalised

    def page_at(self, offset: int) -> int:
        """The page of the chunk holding ``offset``."""
        return self.chunk_pages[max(0, bisect.bisect_right(self.chunk_starts, offset) - 1)]

    def context(self, start: int, end: int) -> str:
        """The match with the rest of its sentence(s), at most ``CONTEXT_CHARS`` more on each side."""
        before = self.text[max(0, start - CONTEXT_CHARS) : start]
        cuts = list(_SENTENCE_END.finditer(before))
        left = start - len(before) + (cuts[-1].end() if cuts else 0)
        after = self.text[end : end + CONTEXT_CHARS]
        cut = _SENTENCE_END.search(after)
        right = end + (cut.end() if cut else len(after))
        return " ".join(self.text[left:right].split())


def _first_page(metadata: Mapping[str, Any]) -> int:
    """A chunk's page: ``page_number`` (policies) or the first of ``page_numbers`` (application documents)."""
    if metadata.get("page_number"):
        return int(metadata["page_number"])
    first = str(metadata.get("page_numbers") or "0").split(",", 1)[0]
    return int(first) if first.isdigit() else 0


@dataclass
class Passages:
    passages: list[Passage]
    words: list[frozenset[str]]

    @classmethod
    def read(
        cls,
        texts: Sequence[str],
        metadatas: Sequence[Mapping[str, Any]],
        key: Callable[[Mapping[str, Any]], str],
        order: Callable[[Mapping[str, Any]], tuple[Any, ...]],
    ) -> Passages:
        """The chunks (any order) grouped into passages by ``key``, in ``order`` (which must keep each passage's
        chunks together), rejoined without the splitter's overlap."""
        rows = sorted(zip(texts, metadatas, strict=True), key=lambda row: order(row[1]))
        passages = []
        for name, group in groupby(rows, key=lambda row: key(row[1])):
            chunks = list(group)
            text, starts = merge_chunk_spans([t for t, _ in chunks])
            pages = [_first_page(m) for _, m in chunks]
            passages.append(Passage(name, text, frozenset(words(text)), starts, pages))
        return cls(passages, [p.words for p in passages])

    def best(self, quote: str, *, close: bool) -> tuple[Passage, QuoteMatch] | None:
        """The best match of ``quote`` among the passages sharing most of its words: exact, else normalised,
        else (with ``close``) the closest alignment among the ``CANDIDATES`` sharing the most."""
        found_best: tuple[Passage, QuoteMatch] | None = None
        chosen = candidates(quote, self.words, limit=len(self.words))
        for i in chosen:
            passage = self.passages[i]
            found = find_exact(quote, passage.text, passage.normalised)
            if found is not None and (found_best is None or rank(found.verdict) > rank(found_best[1].verdict)):
                found_best = (passage, found)
                if found.verdict == Verdict.EXACT:
                    return found_best
        if found_best is not None or not close:
            return found_best
        for i in chosen[:CANDIDATES]:
            passage = self.passages[i]
            found = find_close(quote, passage.normalised)
            if found is not None and (found_best is None or found.similarity > found_best[1].similarity):
                found_best = (passage, found)
        return found_best
