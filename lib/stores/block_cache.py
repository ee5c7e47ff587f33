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
  two chunks whose distances differ by less than that may come in either order. Candidates are first
  ranked by ``|m|^2 - 2 m.q`` (one product, slightly less precise) and only the best ``n_results + 8``
  re-ranked by direct L2, so that shortcut could only drop a true neighbour if its float32 error moved it
  more than eight places, which takes nine distances equal to within ~1e-6.
- Staleness: a block is what Chroma held when it was loaded. It is served while the caller's stamp for the
  revision is unchanged (every write through ``lib.policies.ingest`` records a new one) and never more
  than ``max_age_s`` (30 s, like the registry snapshot) after loading. A change made behind the
  pipeline's back (a chunk deleted or rewritten directly in Chroma) is therefore seen by Chroma's query at
  once and by ``exact_search`` up to 30 s later. A block's metadata is likewise as loaded: the policy
  search reads citations (label, dates) from the registry, not from it.

Answers can be remembered (``answer_key``): keyed by the query vector and the ``serial`` of every block
searched, an answer is only ever reused for the very blocks that produced it (a block reloaded for a new
stamp or for its age has a new serial), so remembering adds no difference of its own.

Each block also has a lexical twin (``RevisionBlock.lexical``, a ``lib.retrieval.LexicalBlock``), built
on first use from the very chunks the block loaded, each under its heading context (``policy_lexical_text``:
citation and chapter, from the chunk's metadata), so the lexical leg (``lexical_search``) sees exactly the
chunks the dense leg sees, ages and reloads with them, and a changed revision costs only its own
tokenisation. Every process derives the same twin from the same stored chunks. Its cost is budgeted with
the block (``LEXICAL_BYTES_PER_CHAR``) whether or not it has been built yet.

Out of step: the blocks (and so the lexical index, which exists nowhere else) can only disagree with Chroma
in a process that holds them, when a revision's chunks were changed behind the pipeline's back while its
stamp stayed the same. ``stale_blocks`` finds such blocks by comparing each served block's ids and a digest
of its indexed texts (heading context and text) with what Chroma stores for its key now; ``evict_stale``
drops them (the next search reloads from Chroma). The consistency audit reports and repairs them
(``stale_search_index``).
"""

from __future__ import annotations

import hashlib
import itertools
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import numpy as np
from cachetools import TTLCache

from lib.retrieval.heading import lexical_text
from lib.retrieval.lexical import LexicalBlock, bm25_rank
from lib.stores.chroma import StoredChunk

DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_AGE_S = 30.0
LEXICAL_BYTES_PER_CHAR = 2
"""What the lexical twin costs per character of text, about (postings and vocabulary; 1.9 measured on
``benchmarks/query_latency.py``'s 21k chunks)."""
ROW_BYTES = 384 * 4 + 4 + 64 + 2048 + 800 * LEXICAL_BYTES_PER_CHAR
"""What one cached chunk costs, about: its float32 embedding, squared norm, id, text, metadata and lexical
postings (an 800-character chunk)."""
_META_BYTES = 1024
"""About what one chunk's metadata dict costs in memory."""
_RERANK_SLACK = 8
"""Candidates beyond ``n_results`` re-ranked by direct L2, so float rounding cannot reorder the tail."""

_SERIALS = itertools.count()

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
    serial: int
    """Unique to this load in this process: what an answer computed from the block is remembered under."""

    @classmethod
    def from_embeddings(
        cls, key: str, stamp: Stamp, ids: list[str], embeddings: np.ndarray, texts: list[str],
        metadatas: list[dict[str, Any]],
    ) -> RevisionBlock:  # fmt: skip
        matrix = np.asarray(embeddings, dtype=np.float32).reshape(len(ids), -1) if ids else np.zeros((0, 0), np.float32)
        scoring = np.empty((len(ids), matrix.shape[1] + 1), dtype=np.float32)
        scoring[:, :-1] = -2.0 * matrix
        scoring[:, -1] = np.einsum("ij,ij->i", matrix, matrix)
        return cls(key, stamp, ids, scoring, texts, metadatas, next(_SERIALS))

    @classmethod
    def from_texts(
        cls, key: str, stamp: Stamp, ids: list[str], texts: list[str], metadatas: list[dict[str, Any]]
    ) -> RevisionBlock:
        """A block for the lexical leg only (no embeddings): ``scoring`` is empty and never searched."""
        return cls(key, stamp, ids, np.zeros((len(ids), 0), np.float32), texts, metadatas, next(_SERIALS))

    @cached_property
    def digest(self) -> str:
        """``block_digest`` of the chunks the block loaded, as the lexical leg indexes them."""
        return block_digest(self.ids, self.indexed_texts())

    def indexed_texts(self) -> list[str]:
        """Each chunk's text under its heading context (``policy_lexical_text``): what the lexical twin
        indexes."""
        return [policy_lexical_text(m, t) for t, m in zip(self.texts, self.metadatas, strict=True)]

    def embedding(self, row: int) -> np.ndarray:
        return self.scoring[row, :-1] * np.float32(-0.5)

    @cached_property
    def lexical(self) -> LexicalBlock:
        """The block's chunks indexed for BM25, each under its heading context (``indexed_texts``). Built
        by whoever loads the block (``BlockLoader``), before any search sees it: tokenising a revision is
        ~100 ms, too long for a request to wait for. (Two threads may both build it; the results are equal.)"""
        return LexicalBlock.build(self.indexed_texts())

    def holds(self, ids: Sequence[str], texts: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> bool:
        """Whether these rows (in any order) are exactly the block's: the same ids, each with the same text and
        metadata. What a refresh checks before deciding the block needs no reload."""
        if len(ids) != len(self.ids):
            return False
        held = dict(zip(self.ids, zip(self.texts, self.metadatas, strict=True), strict=True))
        return all(held.get(i) == (t, m) for i, t, m in zip(ids, texts, metadatas, strict=True))

    @property
    def nbytes(self) -> int:
        chars = sum(len(t) for t in self.texts)
        return self.scoring.nbytes + chars * (1 + LEXICAL_BYTES_PER_CHAR) + (64 + _META_BYTES) * len(self.ids)

    def chunk(self, row: int, distance: float | None = None) -> StoredChunk:
        return StoredChunk(id=self.ids[row], text=self.texts[row], metadata=self.metadatas[row], distance=distance)


def policy_lexical_text(metadata: Mapping[str, Any], text: str) -> str:
    """What the lexical leg indexes for a policy chunk: its citation (``section_ref``, e.g. ``Para 116``) and
    its ``chapter`` (e.g. ``9. Promoting sustainable transport``) before its text
    (``lib.retrieval.heading.lexical_text``), so every chunk of a long paragraph answers to the paragraph's
    number and every chunk of a chapter to its heading, not only the first, which starts with them."""
    return lexical_text((str(metadata.get("section_ref", "")), str(metadata.get("chapter", ""))), text)


def block_digest(ids: Sequence[str], texts: Sequence[str]) -> str:
    """SHA-256 over a block's ``(id, text)`` pairs in id order: equal exactly when the chunks are, whatever
    order a store returned them in."""
    digest = hashlib.sha256()
    for chunk_id, text in sorted(zip(ids, texts, strict=True)):
        digest.update(f"{len(chunk_id)}:{chunk_id}{len(text)}:{text}".encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class StaleBlock:
    """A held block whose chunks are no longer what the store holds for its key."""

    block: RevisionBlock
    stored_rows: int
    detail: str


def stale_blocks(
    cache: RevisionBlockCache,
    served: Mapping[str, Stamp],
    read: Callable[[str], tuple[Sequence[str], Sequence[str]]],
) -> list[StaleBlock]:
    """The held blocks that would be served (their stamp is ``served[key]``, the caller's source of truth
    now) but whose ids or indexed texts differ from what ``read(key)`` returns from the store now: the ids
    and each chunk's ``policy_lexical_text`` (so a heading rewritten behind the pipeline's back counts too).
    Blocks under an old stamp are left out: they are never served again and reload on next use."""
    stale = []
    for block in cache.blocks():
        if served.get(block.key) != block.stamp:
            continue
        ids, texts = read(block.key)
        if set(ids) != set(block.ids):
            lost, new = len(set(block.ids) - set(ids)), len(set(ids) - set(block.ids))
            detail = f"{len(block.ids)} chunks held, {len(ids)} stored ({lost} gone, {new} new)"
        elif block_digest(ids, texts) != block.digest:
            detail = f"{len(block.ids)} chunks held with the stored ids but other texts or headings"
        else:
            continue
        stale.append(StaleBlock(block, len(ids), detail))
    return stale


def evict_stale(cache: RevisionBlockCache, stale: Iterable[StaleBlock]) -> int:
    """Drop each stale block still held (a newer load of its key is kept); how many were dropped."""
    return sum(cache.evict(s.block) for s in stale)


def _block_bytes(block: RevisionBlock) -> int:
    return block.nbytes


class RevisionBlockCache:
    """Revision blocks within a byte budget: least recently used evicted first, none kept past ``max_age_s``.

    A ``cachetools.TTLCache`` (LRU order, per-item expiry from the time of loading, sized by each block's
    bytes) behind a lock, since cachetools caches are not thread-safe. Loads run outside the lock.
    ``clock`` is injectable for tests.
    """

    def __init__(
        self,
        max_bytes: int = DEFAULT_CACHE_BYTES,
        *,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_bytes = max_bytes
        self.max_age_s = max_age_s
        self._blocks: TTLCache[str, RevisionBlock, float] = TTLCache(max_bytes, max_age_s, clock, _block_bytes)
        self._lock = threading.Lock()

    def fits(self, rows: int) -> bool:
        """Whether ``rows`` chunks could be held at once (estimated at ``ROW_BYTES`` each)."""
        return rows * ROW_BYTES <= self.max_bytes

    def get(self, key: str, stamp: Stamp) -> RevisionBlock | None:
        """The block of ``key`` if it was loaded under ``stamp`` and is younger than ``max_age_s``."""
        with self._lock:
            block = self._blocks.get(key)
        return block if block is not None and block.stamp == stamp else None

    def put(self, block: RevisionBlock) -> bool:
        """Keep ``block`` unless it alone is over budget; the least recently used make room."""
        if block.nbytes > self.max_bytes:
            return False
        with self._lock:
            self._blocks[block.key] = block
        return True

    @property
    def nbytes(self) -> int:
        with self._lock:
            return int(self._blocks.currsize)

    def blocks(self) -> list[RevisionBlock]:
        """The blocks held now (none past their age)."""
        with self._lock:
            return list(self._blocks.values())

    def evict(self, block: RevisionBlock) -> bool:
        """Drop ``block`` if it is still the one held for its key (not a newer load); whether it was."""
        with self._lock:
            if (held := self._blocks.get(block.key)) is None or held.serial != block.serial:
                return False
            del self._blocks[block.key]
            return True

    def __len__(self) -> int:
        with self._lock:
            return len(self._blocks)


def answer_key(query: np.ndarray, n_results: int, blocks: Sequence[RevisionBlock]) -> tuple[object, ...]:
    """What a remembered ``exact_search`` answer is filed under: the query vector, ``n_results`` and the
    ``serial`` of every block searched, so it is only ever reused for the very blocks that produced it."""
    return (query.tobytes(), n_results, *(b.serial for b in blocks))


def lexical_answer_key(query: str, n_results: int, blocks: Sequence[RevisionBlock]) -> tuple[object, ...]:
    """What a remembered ``lexical_search`` answer is filed under, like ``answer_key``: the query text,
    ``n_results`` and every block's ``serial`` (tagged apart from the dense answers' keys)."""
    return ("lexical", query, n_results, *(b.serial for b in blocks))


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


@dataclass(frozen=True)
class LexicalAnswer:
    """The lexical leg's best chunks with their BM25 scores, and ``ceiling``, the least upper bound of any
    score for that query over those blocks (``lib.retrieval.lexical.bm25_ceiling``)."""

    hits: list[tuple[StoredChunk, float]]
    ceiling: float


def lexical_search(query: str, n_results: int, blocks: Sequence[RevisionBlock]) -> LexicalAnswer:
    """The ``n_results`` chunks of ``blocks`` best for ``query`` by BM25, with IDF over exactly these blocks;
    best first, ties in block then row order; chunks holding no query term are never returned."""
    hits, ceiling = bm25_rank(query, [b.lexical for b in blocks], n_results)
    return LexicalAnswer([(blocks[h.block_index].chunk(h.row), h.score) for h in hits], ceiling)
