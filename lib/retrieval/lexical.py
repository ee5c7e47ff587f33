"""BM25 over blocks of chunks, with IDF and average length taken over exactly the blocks searched.

A block is the lexical index of one unit that is stored and replaced as a whole (a policy revision, an
application's documents, ...): built once from its chunk texts (``LexicalBlock.build``) and never changed.
A search names the blocks its filters allow, and ``bm25_search`` computes N, the average document length
and every query term's document frequency over the union of those blocks at query time. So a filter
(effective date, sources, application, collection) applies before ranking, not after: a superseded
revision neither appears nor shifts any IDF; updating one block costs one block's tokenisation; and two
processes holding the same blocks return the same ranking.

A search may also narrow a block to some of its rows (``masks``: one boolean array per block, ``None`` for
all rows): the masked-out rows are then out of N, the total length and every document frequency, and never
scored, exactly as if the block had been built from the allowed rows alone. So a block may pack many units
(``lib.retrieval.segments``) and a filter still applies before ranking.

Why the scoring is our own rather than ``bm25s``'s: bm25s bakes IDF and the average length of one fixed corpus
into its scores, and per-query statistics need the raw term frequencies, kept here as compressed postings per
block (``LexicalBlock``). Tokens: ``lib.retrieval.tokens``.

Scoring is Lucene's BM25: ``idf(t) = ln(1 + (N - df + 0.5) / (df + 0.5))`` (never negative) times
``tf * (k1 + 1) / (tf + k1 * (1 - b + b * dl / avgdl))``, summed over the query's distinct terms, with ``K1`` 1.2
and ``B`` 0.4 (tuned on BEIR SciFact's train split). Every row holding a query term scores above zero; rows
holding none are never returned. A chunk is indexed under its heading context (``lexical_text``). Figures:
docs/decisions/0005-lexical-heading-context-and-bm25-b.md, 0012-bm25-scored-over-scipy.md.

Each query term's postings over a set of blocks are merged once and kept for the searches that follow
(``TermPostings``): questions share most of their words, and merging costs Python per block (decision 0039).
"""

from __future__ import annotations

import math
import sys
import threading
from collections import Counter
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from cachetools import LRUCache

from lib.observability import search_leg
from lib.observability.metrics import cache_lookups, cache_misses
from lib.retrieval.scratch import Scratch, Take, fresh, lease
from lib.retrieval.selection import highest
from lib.retrieval.tokens import tokenize

K1 = 1.2
B = 0.4
cache_lookups_postings = cache_lookups.labels("term_postings")
cache_misses_postings = cache_misses.labels("term_postings")


def lexical_text(context: Iterable[str], text: str) -> str:
    """What the lexical leg indexes for a chunk: ``context``'s parts (each store names its chunks' headings: a
    policy's ``section_ref`` and ``chapter``, a document's file name), one a line, then ``text``. A chunk of a
    long section rarely repeats the words that name it, so BM25 could not match it on what it is about; the
    dense leg embeds the text alone. Empty parts and parts ``text`` already starts with are left out, so a
    heading is counted once in a chunk that carries it."""
    parts = [part for part in (p.strip() for p in context) if part and not text.startswith(part)]
    return "\n".join([*parts, text])


class LexicalHit(NamedTuple):
    block_index: int
    row: int
    score: float


@dataclass(frozen=True)
class LexicalBlock:
    """The term frequencies of one block's rows (chunks), over a vocabulary of the block's own.

    The postings are compressed-sparse rows by term: the chunks holding term ``t`` are
    ``rows[indptr[t]:indptr[t + 1]]``, how often each ``counts[...]``, so a query reads one slice per term.
    ``lengths`` are the rows' token counts. Rows are ``uint16`` while a block has at most 65,536 of them and
    counts ``uint16`` (a count past 65,535 is held as 65,535), and the vocabulary's terms are interned, so a
    term's string is held once however many blocks hold it: 4 bytes a posting instead of scipy's 8, and a
    vocabulary entry about half the size (decision 0036).
    """

    vocabulary: Mapping[str, int]
    indptr: np.ndarray
    rows_of: np.ndarray
    counts: np.ndarray
    lengths: np.ndarray
    doc_freqs: np.ndarray = field(repr=False)
    total_length: int = 0

    @classmethod
    def build(cls, texts: Sequence[str]) -> LexicalBlock:
        return cls.from_tokens([tokenize(text) for text in texts])

    @classmethod
    def from_tokens(cls, token_lists: Sequence[Sequence[str]]) -> LexicalBlock:
        """The block of rows already tokenised (``tokenize``): lets a caller that keeps tokens rebuild a block
        without tokenising again."""
        vocabulary: dict[str, int] = {}
        terms: list[int] = []
        rows: list[int] = []
        counts: list[int] = []
        lengths = np.zeros(len(token_lists), dtype=np.int32)
        for row, tokens in enumerate(token_lists):
            lengths[row] = len(tokens)
            for term, count in Counter(tokens).items():
                column = vocabulary.get(term)
                if column is None:
                    column = vocabulary[sys.intern(term)] = len(vocabulary)
                terms.append(column)
                rows.append(row)
                counts.append(count)
        order = np.lexsort((np.asarray(rows, np.int64), np.asarray(terms, np.int64)))
        doc_freqs = np.bincount(np.asarray(terms, np.int64), minlength=len(vocabulary)).astype(np.int32)
        indptr = np.zeros(len(vocabulary) + 1, dtype=np.int64)
        np.cumsum(doc_freqs, out=indptr[1:])
        row_type = np.uint16 if len(token_lists) <= _NARROW + 1 else np.uint32
        return cls(
            vocabulary,
            indptr,
            np.asarray(rows, dtype=row_type)[order],
            np.minimum(np.asarray(counts, dtype=np.int64), _NARROW).astype(np.uint16)[order],
            lengths,
            doc_freqs,
            int(lengths.sum()),
        )

    @property
    def rows(self) -> int:
        return len(self.lengths)

    def postings(self, term: str) -> tuple[np.ndarray, np.ndarray]:
        """The rows holding ``term`` (ascending) and how often each holds it; empty for a term not here."""
        column = self.vocabulary.get(term)
        if column is None:
            return np.zeros(0, self.rows_of.dtype), np.zeros(0, self.counts.dtype)
        start, stop = self.indptr[column], self.indptr[column + 1]
        return self.rows_of[start:stop], self.counts[start:stop]

    @property
    def nbytes(self) -> int:
        """About what the block costs in memory: its arrays and ~50 bytes per vocabulary entry (the dict's
        slot; the interned term is shared)."""
        arrays = self.indptr.nbytes + self.rows_of.nbytes + self.counts.nbytes
        return arrays + self.lengths.nbytes + self.doc_freqs.nbytes + 50 * len(self.vocabulary)


_NARROW = int(np.iinfo(np.uint16).max)


Masks = Sequence[np.ndarray | None] | None
"""For each block searched, a boolean array over its rows (``True``: searched) or ``None`` for every row."""


def _masks(blocks: Sequence[LexicalBlock], masks: Masks) -> list[np.ndarray | None]:
    if masks is None:
        return [None] * len(blocks)
    if len(masks) != len(blocks):
        raise ValueError(f"{len(masks)} masks for {len(blocks)} blocks")
    checked: list[np.ndarray | None] = []
    for block, mask in zip(blocks, masks, strict=True):
        if mask is not None:
            mask = np.asarray(mask, dtype=bool)
            if mask.shape != (block.rows,):
                raise ValueError(f"a mask of shape {mask.shape} for a block of {block.rows} rows")
        checked.append(mask)
    return checked


class Postings(NamedTuple):
    """One term's postings over blocks laid end to end: each row's place (its block's start plus its row),
    ascending, and how often it holds the term."""

    places: np.ndarray
    counts: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.places.nbytes + self.counts.nbytes)


def starts_of(blocks: Sequence[LexicalBlock]) -> np.ndarray:
    """Where each block's rows begin when the blocks are laid end to end, and (last) their total."""
    starts = np.zeros(len(blocks) + 1, dtype=np.int64)
    np.cumsum([block.rows for block in blocks], out=starts[1:])
    return starts


def merged_postings(term: str, blocks: Sequence[LexicalBlock], starts: np.ndarray) -> Postings:
    """``term``'s postings in every block, laid end to end (``Postings``)."""
    rows: list[np.ndarray] = []
    counts: list[np.ndarray] = []
    sizes: list[int] = []
    offsets: list[int] = []
    for block, start in zip(blocks, starts[:-1].tolist(), strict=True):
        column = block.vocabulary.get(term)
        if column is None:
            continue
        low, high = int(block.indptr[column]), int(block.indptr[column + 1])
        rows.append(block.rows_of[low:high])
        counts.append(block.counts[low:high])
        sizes.append(high - low)
        offsets.append(start)
    if not rows:
        return Postings(np.zeros(0, np.int64), np.zeros(0, np.uint16))
    places = np.concatenate(rows).astype(np.int64)
    places += np.repeat(np.asarray(offsets, dtype=np.int64), sizes)
    return Postings(places, np.concatenate(counts))


def _allowed(
    blocks: Sequence[LexicalBlock], masks: Sequence[np.ndarray | None], take: Take = fresh
) -> np.ndarray | None:
    """The masks laid end to end as the blocks' rows are (``None``: every row is allowed)."""
    if all(mask is None for mask in masks):
        return None
    parts = [np.ones(block.rows, bool) if mask is None else mask for block, mask in zip(blocks, masks, strict=True)]
    return np.concatenate(parts, out=take(sum(block.rows for block in blocks), np.bool_))


def _idf(
    terms: Sequence[str],
    blocks: Sequence[LexicalBlock],
    masks: Sequence[np.ndarray | None],
    postings: Sequence[Postings],
    allowed: np.ndarray | None,
    take: Take = fresh,
) -> tuple[dict[str, float], float]:
    """Each term's IDF over the union of the allowed rows of ``blocks`` (terms in none of them left out), and
    the average length."""
    n_docs = 0
    total = 0
    for block, mask in zip(blocks, masks, strict=True):
        n_docs += block.rows if mask is None else int(np.count_nonzero(mask))
        total += block.total_length if mask is None else int(block.lengths[mask].sum())
    freqs = [
        len(p.places) if allowed is None else int(np.count_nonzero(_gathered(allowed, p.places, take)))
        for p in postings
    ]
    idf = {term: math.log(1.0 + (n_docs - df + 0.5) / (df + 0.5)) for term, df in zip(terms, freqs, strict=True) if df}
    return idf, (total / n_docs if n_docs else 0.0)


def query_terms(query: str) -> list[str]:
    """The distinct tokens of ``query``, in order: a repeated word does not count twice."""
    return list(dict.fromkeys(tokenize(query)))


class LexicalRanking(NamedTuple):
    hits: list[LexicalHit]
    ceiling: float
    """The least upper bound of any score for this query over these blocks, ``(K1 + 1)`` times the sum of its
    terms' IDF, so ``score / ceiling`` is in 0..1 and says how much of the query a chunk carries; 0 without hits."""


def bm25_search(query: str, blocks: Sequence[LexicalBlock], k: int, *, masks: Masks = None) -> list[LexicalHit]:
    """The ``k`` best rows of ``blocks`` for ``query`` by BM25 over their union, best first, ties by
    ``(block_index, row)``; rows with a zero score (no query term) are never returned. With ``masks``, only
    the allowed rows are searched and counted."""
    return bm25_rank(query, blocks, k, masks=masks).hits


@search_leg("lexical")
def bm25_rank(
    query: str,
    blocks: Sequence[LexicalBlock],
    k: int,
    *,
    masks: Masks = None,
    memo: TermPostings | None = None,
    key: Hashable = None,
    scratch: Scratch | None = None,
) -> LexicalRanking:
    """``bm25_search``'s hits with the query's ceiling, tokenising the query and computing IDF once. With
    ``memo``, each term's postings over these blocks (named by ``key``: it must change whenever the blocks do)
    are merged once and kept (``TermPostings``); with ``scratch``, the arrays the scoring works in
    are borrowed (``lib.retrieval.scratch``). The answer is the same to the last bit."""
    checked = _masks(blocks, masks)
    terms = query_terms(query)
    starts = starts_of(blocks)
    if memo is None or key is None:
        postings = [merged_postings(term, blocks, starts) for term in terms]
    else:
        postings = [memo.get(term, blocks, starts, key) for term in terms]
    with lease(scratch) as take:
        allowed = _allowed(blocks, checked, take)
        idf, avgdl = _idf(terms, blocks, checked, postings, allowed, take)
        hits = _scored(terms, postings, idf, avgdl, blocks, allowed, starts, k, take)
    return LexicalRanking(hits, (K1 + 1.0) * sum(idf.values()) if hits else 0.0)


def _scored(
    terms: Sequence[str],
    postings: Sequence[Postings],
    idf: Mapping[str, float],
    avgdl: float,
    blocks: Sequence[LexicalBlock],
    allowed: np.ndarray | None,
    starts: np.ndarray,
    k: int,
    take: Take = fresh,
) -> list[LexicalHit]:
    """The ``k`` best rows, scored in one pass over the query terms' postings laid end to end, term after term
    (``merged_postings``), so numpy works per search and Python at most per block and term. A row's terms are
    summed in query order, as a pass per block would sum them (decision 0038). Each posting's score is
    ``weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avgdl))``, computed operation by operation in
    that order, in arrays ``take`` gives (decision 0040)."""
    if not idf or k <= 0:
        return []
    used = [(p, idf[term]) for term, p in zip(terms, postings, strict=True) if idf.get(term) and len(p.places)]
    if not used:
        return []
    sizes = [len(p.places) for p, _ in used]
    places = np.concatenate([p.places for p, _ in used], out=take(sum(sizes), np.int64))
    tf = np.concatenate([p.counts for p, _ in used], out=take(sum(sizes), np.float64))
    if allowed is not None:
        kept = _gathered(allowed, places, take)
        ends = np.cumsum(sizes).tolist()
        sizes = [int(np.count_nonzero(kept[end - size : end])) for size, end in zip(sizes, ends, strict=True)]
        places = np.compress(kept, places, out=take(sum(sizes), np.int64))
        tf = np.compress(kept, tf, out=take(sum(sizes), np.float64))
    lengths = np.concatenate([block.lengths for block in blocks], out=take(int(starts[-1]), np.int32))
    norm = np.multiply(_gathered(lengths, places, take), B, out=take(len(places), np.float64))
    np.divide(norm, avgdl, out=norm)
    np.add(norm, 1.0 - B, out=norm)
    np.multiply(norm, K1, out=norm)
    np.add(tf, norm, out=norm)  # the denominator, tf + norm
    at = 0
    for size, (_, weight) in zip(sizes, used, strict=True):
        np.multiply(tf[at : at + size], weight, out=tf[at : at + size])  # the term's weight times tf
        at += size
    np.multiply(tf, K1 + 1.0, out=tf)
    np.divide(tf, norm, out=tf)
    scores = take(int(starts[-1]), np.float64)
    scores.fill(0.0)
    np.add.at(scores, places, tf)  # as ``np.bincount`` sums, in order, but into an array not mapped afresh
    best = highest(scores, k, take)
    best = best[np.lexsort((best, -scores[best]))[:k]]
    owners = np.searchsorted(starts, best, side="right") - 1
    picked = zip(owners.tolist(), (best - starts[owners]).tolist(), scores[best].tolist(), strict=True)
    return [LexicalHit(o, r, s) for o, r, s in picked]


def _gathered(values: np.ndarray, places: np.ndarray, take: Take) -> np.ndarray:
    """``values[places]`` in an array ``take`` gives (``places`` are in range: no check made)."""
    return np.take(values, places, out=take(len(places), values.dtype), mode="clip")


class TermPostings:
    """``merged_postings`` remembered, at most ``max_bytes`` of them, least recently used out first (thread-safe).
    An entry is named by the term and a ``key`` naming the very blocks it was merged from (their serials: a
    reloaded slice has a new one); it holds arrays, not the blocks."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._kept: LRUCache[tuple[str, Hashable], Postings] = LRUCache(max_bytes, getsizeof=_postings_size)
        self._lock = threading.Lock()

    def get(self, term: str, blocks: Sequence[LexicalBlock], starts: np.ndarray, key: Hashable) -> Postings:
        """``merged_postings(term, blocks, starts)``; ``key`` names ``blocks`` (it must change when they do)."""
        cache_lookups_postings.inc()
        with self._lock:
            found = self._kept.get((term, key))
        if found is not None:
            return found
        cache_misses_postings.inc()
        merged = merged_postings(term, blocks, starts)
        merged.places.flags.writeable = False  # shared by every search that reads it
        merged.counts.flags.writeable = False
        if _postings_size(merged) <= self.max_bytes:
            with self._lock:
                self._kept[(term, key)] = merged
        return merged

    @property
    def nbytes(self) -> int:
        with self._lock:
            return int(self._kept.currsize)


def _postings_size(postings: Postings) -> int:
    return postings.nbytes + 200  # the entry's own objects
