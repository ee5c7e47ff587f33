"""The passages a quote may be in (a policy section, an application document), each rejoined from its chunks
with where each chunk starts and the page it is on, and the best match of a quote among them.

A quote is looked for only in the passages sharing at least half its distinct words (``candidates``): exact or
normalised in any of them, else aligned word by word (``lib.quotes.classify.find_close``) in the ``CANDIDATES``
sharing the most. A passage folds its text and cuts its tokens once, when a quote first needs them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from lib.quotes.classify import Quote, QuoteMatch, Verdict, find_close, find_exact, rank
from lib.quotes.normalise import Normalised, normalise
from lib.quotes.words import Token, tokens, word_set
from lib.text.chunking import merge_chunk_spans
from lib.text.printed_pages import from_stored

CANDIDATES = 6
"""How many passages, those sharing most of the quote's words, are aligned word by word."""

CONTEXT_CHARS = 240
"""At most this much of the text on each side of a match is given as its context (cut at a sentence end)."""

_SENTENCE_END = re.compile(r"[.!?;:](?=\s)|\n\s*\n")


def candidates(quote: Quote, passages: Sequence[frozenset[str]], limit: int) -> list[int]:
    """The indexes of the ``limit`` passages (each given as its set of lower-cased words) sharing most of the
    quote's distinct words; none sharing fewer than half."""
    wanted = quote.words
    if not wanted:
        return []
    shared = [(len(wanted & passage), i) for i, passage in enumerate(passages)]
    shared = [(n, i) for n, i in shared if 2 * n >= len(wanted)]
    shared.sort(key=lambda pair: (-pair[0], pair[1]))
    return [i for _, i in shared[:limit]]


@dataclass
class Passage:
    key: str
    text: str
    words: frozenset[str]
    chunk_starts: list[int]
    chunk_pages: list[int]
    chunk_printed: list[str | None] = field(default_factory=list)
    _normalised: Normalised | None = field(default=None, repr=False)
    _tokens: list[Token] | None = field(default=None, repr=False)

    @property
    def normalised(self) -> Normalised:
        if self._normalised is None:
            self._normalised = normalise(self.text)
        return self._normalised

    @property
    def tokens(self) -> list[Token]:
        if self._tokens is None:
            self._tokens = tokens(self.normalised.text)
        return self._tokens

    def _chunk_at(self, offset: int) -> int:
        return max(0, bisect.bisect_right(self.chunk_starts, offset) - 1)

    def page_at(self, offset: int) -> int:
        """The PDF page of the chunk holding ``offset``."""
        return self.chunk_pages[self._chunk_at(offset)]

    def printed_page_at(self, offset: int) -> str | None:
        """The page as the document prints it, of the chunk holding ``offset`` (None where none is printed)."""
        return self.chunk_printed[self._chunk_at(offset)] if self.chunk_printed else None

    def context(self, start: int, end: int) -> str:
        """The match with the rest of its sentence(s), at most ``CONTEXT_CHARS`` more on each side."""
        before = self.text[max(0, start - CONTEXT_CHARS) : start]
        cuts = list(_SENTENCE_END.finditer(before))
        left = start - len(before) + (cuts[-1].end() if cuts else 0)
        after = self.text[end : end + CONTEXT_CHARS]
        cut = _SENTENCE_END.search(after)
        right = end + (cut.end() if cut else len(after))
        return " ".join(self.text[left:right].split())

    def matched(self, start: int, end: int) -> str:
        return " ".join(self.text[start:end].split())


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
            printed = [from_stored(m.get("printed_page")) for _, m in chunks]
            passages.append(Passage(name, text, word_set(text), starts, pages, printed))
        return cls(passages, [p.words for p in passages])

    def best(self, quote: Quote, *, close: bool) -> tuple[Passage, QuoteMatch] | None:
        """The best match of ``quote`` among the passages sharing most of its words: exact, else normalised,
        else (with ``close``) the most alike word alignment, ``close`` or ``altered``."""
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
            found = find_close(quote, passage.normalised, passage.tokens)
            if found is not None and (found_best is None or better(found, found_best[1])):
                found_best = (passage, found)
        return found_best


def better(a: QuoteMatch, b: QuoteMatch) -> bool:
    """Whether ``a`` is a better match than ``b``: a higher verdict, else more alike."""
    return (rank(a.verdict), a.similarity) > (rank(b.verdict), b.similarity)
