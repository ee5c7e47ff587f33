"""Revisions' chunks held in process memory, one block per revision, and the exact search over them.

Why: Chroma's where-filtered query costs 20-60 ms on 20k chunks (the filter runs in SQLite before the
vector search), and even reading 10 chunks back by id costs ~1.6 ms. A search over the blocks of the
allowed revisions costs about 1 ms. ``lib.policies.chunks.PolicyVectorStore.search`` decides when a
block may be used (the registry's stamp) and falls back to Chroma's query when the blocks do not fit.

When ``exact_search`` can answer differently from Chroma's own query over the same chunks
(``ChunkCollection.query`` with a where-clause on the same revisions):

- Approximation: ``exact_search`` returns the true ``n_results`` nearest rows by squared L2 over every row
  of the blocks. Chroma's HNSW index is approximate and may miss a true neighbour (on the real NPPF it
  does, beyond the top ten), returning a farther chunk in its place; where the two differ, the exact
  answer's chunk is the closer one.
- Ties: chunks at exactly the same distance (the same text in two revisions) are ordered by id here and
  in Chroma's index order there; when ``n_results`` cuts through a tie each may keep a different member.
- Rounding: distances are float32 sums in another order than hnswlib's, so they agree to about 1e-6, and
  two chunks whose distances differ by less than that may come in either order. Candidates are picked by
  ``|m|^2 - 2 m.q`` and only the best ``n_results + 8`` re-ranked by direct L2, so a chunk more than eight
  places beyond the cut could only enter by a rounding error of that size.
- Staleness: a block is what Chroma held when it was loaded. It is served while the caller's stamp for the
  revision is unchanged (every write through ``lib.policies.ingest`` records a new one). A change made
  behind the pipeline's back (a chunk deleted or rewritten directly in Chroma) is not seen by
  ``exact_search`` until the block is reloaded. A block's metadata is likewise as loaded: the policy search
  reads citations (label, dates) from the registry, not from it.

Answers are remembered too (``AnswerMemo``), keyed by the query vector and the key and stamp of every
block searched, so an answer is only ever reused for the very blocks that produced it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from lib.stores.chroma import StoredChunk

DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
ROW_BYTES = 384 * 4 + 4 + 64 + 2048
"""What one cached chunk costs, about: its float32 embedding, squared norm, id, text and metadata."""
_META_BYTES = 1024
"""About what one chunk's metadata dict costs in memory."""
_RERANK_SLACK = 8
"""Candidates beyond ``n_results`` re-ranked by direct L2, so float rounding cannot reorder the tail."""

Stamp = tuple[int, str]
"""What the caller's source of truth said about a revision when its block was loaded (``chunk_count``,
``ingested_at``): the block is served only while it says the same."""


@dataclass(frozen=True)
class RevisionBlock:
    """One revision's chunks as loaded from Chroma, with the stamp they were loaded under."""

    key: str
    stamp: Stamp
    ids: list[str]
    scoring: np.ndarray
    """``(rows, 385)`` float32, C-contiguous: each embedding ``m`` times -2, then ``|m|^2``. Its product with
    ``[q, 1]`` is ``|m - q|^2 - |q|^2``, a ranking by distance in one matrix-vector product; ``m`` itself is
    ``-scoring[:, :384] / 2``, exactly (scaling by a power of two loses nothing)."""
    texts: list[str]
    metadatas: list[dict[str, Any]]

    @classmethod
    def from_embeddings(
        cls, key: str, stamp: Stamp, ids: list[str], embeddings: np.ndarray, texts: list[str],
        metadatas: list[dict[str, Any]],
    ) -> RevisionBlock:  # fmt: skip
        matrix = np.asarray(embeddings, dtype=np.float32).reshape(len(ids), -1)
        scoring = np.empty((len(ids), matrix.shape[1] + 1), dtype=np.float32)
        scoring[:, :-1] = -2.0 * matrix
        scoring[:, -1] = np.einsum("ij,ij->i", matrix, matrix)
        return cls(key, stamp, ids, scoring, texts, metadatas)

    def embedding(self, row: int) -> np.ndarray:
        return self.scoring[row, :-1] * np.float32(-0.5)

    @property
    def nbytes(self) -> int:
        return self.scoring.nbytes + sum(len(t) for t in self.texts) + (64 + _META_BYTES) * len(self.ids)

    def chunk(self, row: int, distance: float) -> StoredChunk:
        return StoredChunk(id=self.ids[row], text=self.texts[row], metadata=self.metadatas[row], distance=distance)


class RevisionChunkCache:
    """Least-recently-used revision blocks within a byte budget. Thread-safe; loads run outside the lock."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._blocks: OrderedDict[str, RevisionBlock] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def fits(self, rows: int) -> bool:
        """Whether ``rows`` chunks could be held at once (estimated at ``ROW_BYTES`` each)."""
        return rows * ROW_BYTES <= self.max_bytes

    def get(self, key: str, stamp: Stamp) -> RevisionBlock | None:
        with self._lock:
            block = self._blocks.get(key)
            if block is None or block.stamp != stamp:
                return None
            self._blocks.move_to_end(key)
            return block

    def put(self, block: RevisionBlock) -> bool:
        """Keep ``block`` unless it alone is over budget; evict the least recently used to make room."""
        if block.nbytes > self.max_bytes:
            return False
        with self._lock:
            self._drop(block.key)
            while self._blocks and self._bytes + block.nbytes > self.max_bytes:
                self._drop(next(iter(self._blocks)))
            self._blocks[block.key] = block
            self._bytes += block.nbytes
        return True

    @property
    def nbytes(self) -> int:
        return self._bytes

    def __len__(self) -> int:
        return len(self._blocks)

    def _drop(self, key: str) -> None:
        block = self._blocks.pop(key, None)
        if block is not None:
            self._bytes -= block.nbytes


class AnswerMemo:
    """The last ``size`` exact-search answers, keyed by the query vector, ``n_results`` and the revision key and
    stamp of every block searched. An answer is reused only for the very same blocks, so it is the answer the
    search would compute again (a review agent asks the same checklist of every application, and every date
    in a revision's range resolves to the same blocks). Thread-safe."""

    def __init__(self, size: int = 1024) -> None:
        self.size = size
        self._answers: OrderedDict[tuple[object, ...], tuple[StoredChunk, ...]] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: tuple[object, ...]) -> list[StoredChunk] | None:
        with self._lock:
            answer = self._answers.get(key)
            if answer is None:
                return None
            self._answers.move_to_end(key)
            return list(answer)

    def put(self, key: tuple[object, ...], answer: Sequence[StoredChunk]) -> None:
        with self._lock:
            self._answers[key] = tuple(answer)
            self._answers.move_to_end(key)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)

    def __len__(self) -> int:
        return len(self._answers)


def exact_search(query: np.ndarray, n_results: int, blocks: Sequence[RevisionBlock]) -> list[StoredChunk]:
    """The ``n_results`` rows of ``blocks`` nearest to ``query`` by squared L2, nearest first, ties by id.

    One product per block ranks every row by ``|m|^2 - 2 m.q``, one partition picks the best
    ``n_results + slack`` over all of them, and those are re-ranked by direct squared L2 (what Chroma
    reports). The work in Python is per block and per candidate, never per row.
    """
    blocks = [b for b in blocks if b.ids]
    if not blocks:
        return []
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    extended = np.append(query, np.float32(1.0))
    scores = np.concatenate([b.scoring @ extended for b in blocks])
    wanted = n_results + _RERANK_SLACK
    best = np.argpartition(scores, wanted)[:wanted] if len(scores) > wanted else np.arange(len(scores))
    starts = np.cumsum([0] + [len(b.ids) for b in blocks])
    owners = np.searchsorted(starts, best, side="right") - 1
    candidates = [(blocks[o], int(p - starts[o])) for o, p in zip(owners.tolist(), best.tolist(), strict=True)]
    diff = np.stack([block.embedding(row) for block, row in candidates]) - query
    exact = np.einsum("ij,ij->i", diff, diff).tolist()
    ranked = sorted(
        ((d, block.ids[row], block, row) for d, (block, row) in zip(exact, candidates, strict=True)),
        key=lambda c: c[:2],
    )[:n_results]
    return [block.chunk(row, d) for d, _, block, row in ranked]
