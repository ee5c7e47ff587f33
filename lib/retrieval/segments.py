"""A lexical index of many small documents whose query cost does not grow with how many there are.

Why: a BM25 block per document (a note, a PEP) makes every query walk every document's block in Python, so its
cost grows with the corpus (docs/decisions/0013-segmented-lexical-index.md). Here documents (a key and its chunk
texts) are packed into segments of about ``SEGMENT_DOCUMENTS`` documents, each one ``LexicalBlock`` with a row
-> (document, chunk position) map, and a query takes the set of allowed keys and searches every segment under a
row mask built from it (``bm25_rank(..., masks=...)``): N, the average length and every document frequency are
taken over exactly the allowed rows, so a filter still applies before ranking, and the work is a few array
operations per segment.

Updates replace whole segments, never the index: ``updated`` rebuilds only the segments holding a changed
or removed key, from tokens kept per document (a changed document is tokenised once; its neighbours are not
tokenised again), and shares every other segment with the previous index. Keys past the last one (new ids)
start a new tail segment once the last is full, so appending rebuilds half a segment on average; a segment
grown past twice the size is split, one shrunk under a quarter joined to the next. Rebuilding a segment rather than
marking rows dead keeps no garbage and no compaction to schedule, and costs one ``LexicalBlock`` assembly of
~256 documents (a few milliseconds) whatever the corpus size. The index is immutable: a reader keeps the
one it started with while a newer one is built.

Why the ranking does not depend on the segmentation (so on the order of updates, or the process): each
segment holds a contiguous range of keys in sorted order and its rows in (key, chunk position) order, and
segments are kept in key order. BM25's statistics are sums over the allowed rows of the union, the same
integers however the rows are grouped; each row's score is computed from its own term frequencies and
length and those statistics by the same floating-point operations in the query's term order; and ties (and
a ``k`` cutting through a tie) go by ``(block, row)``, which here is ``(key, position)``. So two indexes of
the same documents return identical hits and scores, bit for bit, however they were built
(``tests/lib/retrieval/test_segments.py`` checks it against one block of everything).
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Generic, NamedTuple, TypeVar

import numpy as np

from lib.retrieval.lexical import LexicalBlock, bm25_rank
from lib.retrieval.tokens import tokenize

SEGMENT_DOCUMENTS = 256

K = TypeVar("K", int, str)
Tokens = tuple[tuple[str, ...], ...]
"""One document's tokens, chunk by chunk."""


def document_tokens(texts: Sequence[str]) -> Tokens:
    """``texts`` tokenised, the strings interned: documents repeat words, and kept tokens should cost a
    pointer each."""
    return tuple(tuple(sys.intern(t) for t in tokenize(text)) for text in texts)


@dataclass(frozen=True)
class Segment(Generic[K]):
    """A contiguous, sorted run of documents and their one block; ``row_document[row]`` indexes ``keys``."""

    keys: tuple[K, ...]
    tokens: tuple[Tokens, ...]
    block: LexicalBlock
    row_document: np.ndarray
    row_position: np.ndarray

    @classmethod
    def of(cls, documents: Mapping[K, Tokens]) -> Segment[K]:
        keys = tuple(sorted(documents))
        tokens = tuple(documents[key] for key in keys)
        counts = [len(t) for t in tokens]
        return cls(
            keys,
            tokens,
            LexicalBlock.from_tokens([chunk for document in tokens for chunk in document]),
            np.repeat(np.arange(len(keys), dtype=np.int64), counts),
            np.concatenate([np.arange(n, dtype=np.int64) for n in counts]) if keys else np.zeros(0, np.int64),
        )

    def documents(self) -> dict[K, Tokens]:
        return dict(zip(self.keys, self.tokens, strict=True))


class SegmentHit(NamedTuple, Generic[K]):
    key: K
    position: int
    score: float


class SegmentRanking(NamedTuple, Generic[K]):
    hits: list[SegmentHit[K]]
    ceiling: float
    """``bm25_rank``'s ceiling over the allowed rows: the least upper bound of a score for this query."""


@dataclass(frozen=True, eq=False)
class Selection(Generic[K]):
    """What one filter lets a ranking of ``index`` see (``SegmentedIndex.select``): the segments holding an
    allowed document and, for each, a row mask (``None``: every row)."""

    index: SegmentedIndex[K]
    segments: tuple[Segment[K], ...]
    masks: tuple[np.ndarray | None, ...]


@dataclass(frozen=True)
class SegmentedIndex(Generic[K]):
    """Documents by key (all ``int`` or all ``str``), in segments of about ``size`` documents. Immutable."""

    segments: tuple[Segment[K], ...] = ()
    size: int = SEGMENT_DOCUMENTS

    @classmethod
    def build(cls, documents: Mapping[K, Sequence[str]], *, size: int = SEGMENT_DOCUMENTS) -> SegmentedIndex[K]:
        return cls((), size).updated(documents)

    def __len__(self) -> int:
        return sum(len(s.keys) for s in self.segments)

    @property
    def rows(self) -> int:
        return sum(s.block.rows for s in self.segments)

    def keys(self) -> list[K]:
        return [key for s in self.segments for key in s.keys]

    @cached_property
    def _key_array(self) -> np.ndarray:
        """Every key in order, as one array, so a filter becomes masks in one ``np.isin``."""
        return np.asarray(self.keys()) if len(self) else np.zeros(0, dtype=np.int64)

    @cached_property
    def _starts(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum([len(s.keys) for s in self.segments])]).astype(np.int64)

    def updated(self, changed: Mapping[K, Sequence[str]], removed: Iterable[K] = ()) -> SegmentedIndex[K]:
        """This index with ``changed`` documents added or replaced (key -> chunk texts) and ``removed`` ones
        gone (unknown keys are ignored). Only the segments those keys fall in are rebuilt; the rest are shared."""
        gone: set[K] = set(removed)
        if clash := gone & set(changed):
            raise ValueError(f"keys both changed and removed: {sorted(clash)[:5]}")
        fresh: dict[K, Tokens] = {key: document_tokens(texts) for key, texts in changed.items()}
        if not fresh and not gone:
            return self
        groups: list[Segment[K] | dict[K, Tokens]] = list(self.segments) or [{}]
        firsts = [s.keys[0] for s in self.segments]
        if self.segments and len(self.segments[-1].keys) >= self.size:
            beyond = [key for key in fresh if key > self.segments[-1].keys[-1]]
            if beyond:
                groups.append({})
                firsts.append(min(beyond))
        for key in gone:
            at = max(bisect_right(firsts, key) - 1, 0)
            held = groups[at]
            if not isinstance(held, Segment) or key in held.keys:
                groups[at] = group = held.documents() if isinstance(held, Segment) else held
                group.pop(key, None)
        for key, tokens in fresh.items():
            at = max(bisect_right(firsts, key) - 1, 0)
            held = groups[at]
            groups[at] = group = held.documents() if isinstance(held, Segment) else held
            group[key] = tokens
        return SegmentedIndex(tuple(_segments(_merged(groups, self.size), self.size)), self.size)

    def select(self, allowed: Collection[K] | None) -> Selection[K]:
        """The segments and row masks that let a ranking see exactly the documents in ``allowed`` (``None``:
        all). Worth keeping for a filter asked again: building it tests every key (figures: docs/performance.md ›
        Governance), ranking with it does not."""
        if allowed is None:
            return Selection(self, tuple(self.segments), (None,) * len(self.segments))
        searched: list[Segment[K]] = []
        masks: list[np.ndarray | None] = []
        kept = np.isin(self._key_array, np.asarray(list(allowed)))
        for segment, start, end in zip(self.segments, self._starts[:-1], self._starts[1:], strict=True):
            keep = kept[start:end]
            if keep.any():
                searched.append(segment)
                masks.append(None if keep.all() else keep[segment.row_document])
        return Selection(self, tuple(searched), tuple(masks))

    def rank(self, query: str, k: int, allowed: Collection[K] | Selection[K] | None = None) -> SegmentRanking[K]:
        """The ``k`` best chunks for ``query`` among the documents in ``allowed`` (``None``: all; or a
        ``select``-ion made from this index) by BM25 over exactly their chunks, best first, ties by (key,
        position)."""
        if isinstance(allowed, Selection):
            if allowed.index is not self:
                raise ValueError("a selection ranks only in the index it was made from")
            selection = allowed
        else:
            selection = self.select(allowed)
        searched = selection.segments
        ranking = bm25_rank(query, [s.block for s in searched], k, masks=list(selection.masks))
        hits = []
        for hit in ranking.hits:
            segment = searched[hit.block_index]
            key = segment.keys[int(segment.row_document[hit.row])]
            hits.append(SegmentHit(key, int(segment.row_position[hit.row]), hit.score))
        return SegmentRanking(hits, ranking.ceiling)


def _merged(groups: list[Segment[K] | dict[K, Tokens]], size: int) -> list[Segment[K] | dict[K, Tokens]]:
    """``groups`` with every rebuilt group under a quarter of ``size`` joined to the next one, so removals never
    leave a trail of tiny segments, and empty ones dropped. The last group is left as it is: it is the tail
    that new keys (ids counting up) join one at a time."""
    out: list[Segment[K] | dict[K, Tokens]] = []
    carry: dict[K, Tokens] = {}
    for position, group in enumerate(groups):
        if carry:
            group = {**carry, **(group.documents() if isinstance(group, Segment) else group)}
            carry = {}
        if isinstance(group, dict) and len(group) < max(size // 4, 1) and position < len(groups) - 1:
            carry = group
            continue
        out.append(group)
    return [g for g in out if isinstance(g, Segment) or g]


def _segments(groups: list[Segment[K] | dict[K, Tokens]], size: int) -> Iterable[Segment[K]]:
    """Every group as segments: kept ones as they are, rebuilt ones over ``2 * size`` documents split into
    nearly equal runs of about ``size``."""
    for group in groups:
        if isinstance(group, Segment):
            yield group
            continue
        keys = sorted(group)
        pieces = -(-len(keys) // size) if len(keys) > 2 * size else 1
        for run in np.array_split(np.arange(len(keys)), pieces):
            yield Segment.of({keys[i]: group[keys[i]] for i in run.tolist()})
