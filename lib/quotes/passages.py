"""The passages a quote may be in (a policy section, an application document), each rejoined from its chunks
with where each chunk starts and the page it is on, and the best match of a quote among them.

A quote is looked for only in the passages sharing at least half its distinct words (``candidates``, counted
over each word's postings): exact in any of them, else normalised, else aligned word by word
(``lib.quotes.classify.find_close``) in the ``CANDIDATES`` sharing the most. A passage folds its text and cuts
its tokens once, when a quote first needs them.
"""

from __future__ import annotations

import bisect
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from lib.quotes.classify import Quote, QuoteMatch, find_close, find_normalised, find_verbatim, rank
from lib.quotes.normalise import Normalised, normalise
from lib.quotes.words import Token, tokens, word_set
from lib.text.chunking import merge_chunk_spans
from lib.text.printed_pages import from_stored

CANDIDATES = 6
"""How many passages, those sharing most of the quote's words, are aligned word by word."""

CONTEXT_CHARS = 240
"""At most this much of the text on each side of a match is given as its context (cut at a sentence end)."""

_SENTENCE_END = re.compile(r"[.!?;:](?=\s)|\n\s*\n")


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
    _token_texts: list[str] | None = field(default=None, repr=False)

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

    @property
    def token_texts(self) -> list[str]:
        if self._token_texts is None:
            self._token_texts = [t.text for t in self.tokens]
        return self._token_texts

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
    postings: dict[str, list[int]]
    """Each lower-cased word to the passages holding it, in order."""

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
        passages: list[Passage] = []
        postings: dict[str, list[int]] = {}
        for name, group in groupby(rows, key=lambda row: key(row[1])):
            chunks = list(group)
            text, starts = merge_chunk_spans([t for t, _ in chunks])
            pages = [_first_page(m) for _, m in chunks]
            printed = [from_stored(m.get("printed_page")) for _, m in chunks]
            words = word_set(text)
            for word in words:
                postings.setdefault(word, []).append(len(passages))
            passages.append(Passage(name, text, words, starts, pages, printed))
        return cls(passages, postings)

    def candidates(self, quote: Quote) -> list[int]:
        """The passages sharing at least half the quote's distinct words, those sharing most first (then in
        order). Counted over the postings of the quote's words, not passage by passage."""
        shared: Counter[int] = Counter()
        for word in quote.words:
            shared.update(self.postings.get(word, ()))
        enough = (len(quote.words) + 1) // 2
        return sorted((i for i, n in shared.items() if n >= enough), key=lambda i: (-shared[i], i))

    def best(self, quote: Quote, *, close: bool) -> tuple[Passage, QuoteMatch] | None:
        """The best match of ``quote`` among the passages sharing most of its words: exact in any, else
        normalised in the first that has it, else (with ``close``) the most alike word alignment among the
        ``CANDIDATES`` sharing most, ``close`` or ``altered``."""
        chosen = self.candidates(quote) if quote.words else []
        for i in chosen:
            if (found := find_verbatim(quote, self.passages[i].text)) is not None:
                return self.passages[i], found
        for i in chosen:
            if (found := find_normalised(quote, self.passages[i].normalised)) is not None:
                return self.passages[i], found
        if not close:
            return None
        best: tuple[Passage, QuoteMatch] | None = None
        for i in chosen[:CANDIDATES]:
            passage = self.passages[i]
            found = find_close(quote, passage.normalised, passage.tokens, passage.token_texts)
            if found is not None and (best is None or better(found, best[1])):
                best = (passage, found)
        return best


def better(a: QuoteMatch, b: QuoteMatch) -> bool:
    """Whether ``a`` is a better match than ``b``: a higher verdict, else more alike."""
    return (rank(a.verdict), a.similarity) > (rank(b.verdict), b.similarity)
