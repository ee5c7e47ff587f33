"""The corpus index of a slice made of many small documents (the kb's notes, the governance documents): every
document's chunks in key order, their vectors as one column matrix and one segmented lexical index
(``lib.retrieval.segments``), updated per document rather than rebuilt.

Where ``lib.retrieval.corpus_index`` holds a slice loaded and replaced whole (a policy revision, an
application), this holds one that changes a document at a time under one generation stamp: ``after`` builds
the next index from the last, tokenising only the documents that are not the very objects it held. The
ranking depends on the documents alone, not on how the index was reached, so every replica ranks alike.

Vectors are kept as columns, one C-contiguous ``(dimensions, n)`` float32 array, so a query's exact scores are
``vector @ columns``, the layout OpenBLAS's kernel reads fastest (decision 0009). Columns are padded with zero
columns to a multiple of ``COLUMN_PADDING`` so every real column is computed by the kernel's main path, never
its tail: a column scores the same bits in the whole matrix and in a kept copy of some of its columns
(``columns_of``), so a filter's copy ranks exactly as the whole matrix would.
"""

from __future__ import annotations

from collections.abc import Collection, Hashable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Generic

import numpy as np

from lib.observability import search_leg
from lib.retrieval.corpus_index import LexicalText, plain_text
from lib.retrieval.segments import K, SegmentedIndex, Selection
from lib.stores.chroma import StoredChunk
from lib.stores.embedding_model import DIMENSIONS

Scored = list[tuple[StoredChunk, float]]
COLUMN_PADDING = 64


def stack_columns(rows: np.ndarray) -> np.ndarray:
    """``rows`` (``(n, dimensions)``, any float) as padded float32 columns: ``(dimensions, n + padding)``."""
    extra = (-len(rows)) % COLUMN_PADDING
    columns = np.zeros((rows.shape[1], len(rows) + extra), dtype=np.float32)
    columns[:, : len(rows)] = rows.T
    return columns


def column_scores(columns: np.ndarray, vector: np.ndarray, n: int) -> np.ndarray:
    """The dot product of ``vector`` with each of the first ``n`` columns (a fresh, writable array), on one BLAS
    thread once the process has pinned it (``lib.retrieval.blas``)."""
    return (np.asarray(vector, dtype=np.float32) @ columns)[:n]


def best_rows(scores: np.ndarray, depth: int) -> np.ndarray:
    """The positions of the ``depth`` highest finite ``scores``, highest first, ties by position: one partition
    and one sort of the ``depth`` kept, never a sort of every row."""
    count = min(depth, int(np.isfinite(scores).sum()))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    best = np.argpartition(-scores, count - 1)[:count] if len(scores) > count else np.arange(len(scores))
    return best[np.lexsort((best, -scores[best]))]


@dataclass(frozen=True)
class DocumentChunks(Generic[K]):
    """One document at one version (its generation): its chunks in order and their vectors as rows."""

    key: K
    version: Hashable
    chunks: tuple[StoredChunk, ...]
    vectors: np.ndarray


@dataclass(frozen=True)
class DocumentsIndex(Generic[K]):
    """Documents ordered by key and their lexical index. Immutable; row ``i`` is column ``i`` of ``columns``."""

    documents: tuple[DocumentChunks[K], ...] = ()
    lexical: SegmentedIndex[K] = field(default_factory=SegmentedIndex)

    @classmethod
    def after(
        cls,
        previous: DocumentsIndex[K] | None,
        documents: Sequence[DocumentChunks[K]],
        lexical_text: LexicalText = plain_text,
    ) -> DocumentsIndex[K]:
        """The index of ``documents`` (ordered by key), its lexical index updated from ``previous``'s: only the
        documents that are not the very ``DocumentChunks`` ``previous`` held are tokenised, the gone ones
        dropped. ``lexical_text`` says what the lexical leg indexes for a chunk."""
        held = {d.key: d for d in previous.documents} if previous is not None else {}
        changed = {
            d.key: [lexical_text(c.metadata, c.text) for c in d.chunks] for d in documents if held.get(d.key) is not d
        }
        kept = {d.key for d in documents}
        lexical = previous.lexical if previous is not None else SegmentedIndex[K]()
        return cls(tuple(documents), lexical.updated(changed, [key for key in held if key not in kept]))

    @cached_property
    def columns(self) -> np.ndarray:
        """Every chunk's vector as a column, documents in order (``stack_columns``: zero padding past ``rows``)."""
        parts = [d.vectors for d in self.documents if len(d.chunks)]
        if not parts:
            return np.zeros((DIMENSIONS, 0), dtype=np.float32)
        return stack_columns(np.vstack(parts))

    def columns_of(self, shown: np.ndarray) -> np.ndarray:
        """A copy of just the rows ``shown`` (ascending) as columns, for ``dense(columns=..., shown=...)``."""
        return stack_columns(self.columns[:, shown].T)

    @property
    def rows(self) -> int:
        return len(self.owners)

    def keys(self) -> list[K]:
        return [d.key for d in self.documents]

    @cached_property
    def owners(self) -> np.ndarray:
        """For each row, the position of its document in ``documents``."""
        return np.repeat(np.arange(len(self.documents), dtype=np.int64), [len(d.chunks) for d in self.documents])

    @cached_property
    def offsets(self) -> np.ndarray:
        """Where each document's rows start."""
        return np.concatenate([[0], np.cumsum([len(d.chunks) for d in self.documents])]).astype(np.int64)

    @cached_property
    def row_keys(self) -> np.ndarray:
        """For each row, its document's key."""
        return np.asarray(self.keys())[self.owners] if self.documents else np.zeros(0, dtype=np.int64)

    @cached_property
    def by_key(self) -> dict[K, DocumentChunks[K]]:
        return {d.key: d for d in self.documents}

    def chunk(self, key: K, position: int) -> StoredChunk:
        return self.by_key[key].chunks[position]

    def chunk_at(self, row: int) -> StoredChunk:
        owner = int(self.owners[row])
        return self.documents[owner].chunks[row - int(self.offsets[owner])]

    def hidden(self, allowed: Collection[K] | None) -> np.ndarray | None:
        """The rows of documents outside ``allowed`` (``None``: none hidden), for ``dense``."""
        if allowed is None:
            return None
        return ~np.isin(self.row_keys, np.asarray(list(allowed)))

    @search_leg("dense")
    def dense(
        self,
        vector: np.ndarray,
        depth: int,
        hidden: np.ndarray | None = None,
        *,
        columns: np.ndarray | None = None,
        shown: np.ndarray | None = None,
    ) -> Scored:
        """The ``depth`` chunks nearest to ``vector`` (unit vectors: cosine, clipped to 0..1), nearest first, ties
        by row; rows in ``hidden`` never come. ``columns`` with ``shown``: a kept copy of just the rows
        ``shown`` (``columns_of``), scanned instead of the whole matrix with the same scores."""
        if columns is not None and shown is not None:
            scores = column_scores(columns, vector, len(shown))
            rows = shown
        else:
            scores = column_scores(self.columns, vector, self.rows)
            rows = None
            if hidden is not None:
                scores[hidden] = -np.inf
        best = best_rows(scores, depth)
        picked = best if rows is None else rows[best]
        return [
            (self.chunk_at(int(row)), max(0.0, min(1.0, float(scores[i]))))
            for i, row in zip(best.tolist(), picked.tolist(), strict=True)
        ]

    def ranked_lexical(
        self, query: str, depth: int, allowed: Collection[K] | Selection[K] | None = None
    ) -> tuple[Scored, float]:
        """BM25's ``depth`` best chunks of the ``allowed`` documents (``None``: all; or a ``Selection`` of this
        index's ``lexical``), with IDF over exactly their chunks, and the query's ceiling there."""
        ranking = self.lexical.rank(query, depth, allowed)
        return [(self.chunk(h.key, h.position), h.score) for h in ranking.hits], ranking.ceiling
