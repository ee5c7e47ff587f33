"""ChromaDB: the ``policy_docs`` collection of chunks, embeddings and their citation metadata.

Chunk metadata follows spec 000's appendix (dates as YYYYMMDD integers, ``99991231`` = in force)
plus ``chapter``, ``page_numbers`` and ``revision_ref`` (``{source}:{revision_id}``). Searches
filter on ``revision_ref`` values resolved from the registry (``lib.policies.temporal``), never on the date
metadata alone: that metadata is kept in step with the registry for readers and audits, but a
registry date edit can never make a search return a chunk of the wrong revision.

Searching (``search``): Chroma's own where-filtered query costs 20-60 ms on 20k chunks (the filter
is evaluated in SQLite before the vector search), and even reading 10 chunks back by id costs ~1.6 ms.
So a search answers from process memory: ``RevisionChunkCache`` holds, per revision, the chunks
as Chroma stored them (ids, embeddings, texts, metadata), and a search computes the exact nearest
neighbours over the blocks of the allowed revisions. The cache is only a cache:

- a revision's block is loaded from Chroma in one read and used only while the registry shows the
  same ``chunk_count`` and ``ingested_at`` it was loaded under, and only if that read returned
  exactly ``chunk_count`` chunks (a revision mid-write is never cached). Every write of a revision's
  chunks goes through ``lib.policies.ingest`` (ingestion, reindex, the audit's re-ingest repair), which ends
  by recording a new ``ingested_at``; removal takes the revision out of the registry first. So the
  registry stamp, read fresh on every search (``PolicyRegistry.snapshot``), says when a block is
  out of date, in every replica, without asking Chroma;
- in every case it cannot serve (over budget, counts that disagree), the search runs as Chroma's
  filtered query instead.

Answers are remembered too (``AnswerMemo``), keyed by the query vector and the key and stamp of every
block searched, so an answer is only ever reused for the very blocks that produced it.

Results equal the filtered query's (same ids, same order, same distances up to float32 rounding),
which ``tests/mcp_service/test_search_fast_path.py`` checks on the real NPPF.
"""

from __future__ import annotations

import logging
import re
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import chromadb
import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from lib.config import Settings
from lib.dates import to_int
from lib.models import Chunk
from lib.policies.models import Policy, Revision

logger = logging.getLogger(__name__)

POLICY_COLLECTION = "policy_docs"
DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
_PAGE = 5000
ROW_BYTES = 384 * 4 + 4 + 64 + 2048
"""What one cached chunk costs, about: its float32 embedding, squared norm, id, text and metadata."""
_META_BYTES = 1024
"""About what one chunk's metadata dict costs in memory."""
_RERANK_SLACK = 8
"""Candidates beyond ``n_results`` re-ranked by direct L2, so float rounding cannot reorder the tail."""
_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9.\-]+")


def open_chroma(settings: Settings) -> ClientAPI:
    """A Chroma server client when ``CHROMA_HOST`` is set, else the embedded persistent client."""
    chroma_settings = chromadb.Settings(anonymized_telemetry=False, allow_reset=False)
    if settings.chroma_host:
        return chromadb.HttpClient(host=settings.chroma_host, port=settings.chroma_port, settings=chroma_settings)
    assert settings.chroma_persist_dir is not None
    settings.chroma_persist_dir.mkdir(parents=True, exist_ok=True)
    return chromadb.PersistentClient(path=str(settings.chroma_persist_dir), settings=chroma_settings)


def section_id_part(section_ref: str) -> str:
    return _UNSAFE_ID_CHARS.sub("_", section_ref).strip("_") or "section"


def chunk_id(source: str, revision_id: str, section_ref: str, chunk_index: int) -> str:
    """``{source}__{revision_id}__{section_ref}__{chunk_index:03d}`` (spec 000 FR-005), deterministic."""
    return f"{source}__{revision_id}__{section_id_part(section_ref)}__{chunk_index:03d}"


def revision_ref(source: str, revision_id: str) -> str:
    return f"{source}:{revision_id}"


def relevance(distance: float) -> float:
    """``max(0, 1 - d/2)`` of Chroma's squared L2 distance: the cosine similarity for unit vectors."""
    return max(0.0, 1.0 - distance / 2.0)


def chunk_metadata(chunk: Chunk, policy: Policy, revision: Revision) -> dict[str, str | int]:
    return {
        "source": policy.source,
        "source_title": policy.title,
        "revision_id": revision.revision_id,
        "revision_ref": revision_ref(policy.source, revision.revision_id),
        "version_label": revision.version_label,
        "effective_from": to_int(revision.effective_from),
        "effective_to": to_int(revision.effective_to),
        "section_ref": chunk.section_ref,
        "chapter": chunk.chapter,
        "page_number": chunk.page_number,
        "page_numbers": ",".join(str(p) for p in chunk.page_numbers),
        "chunk_index": chunk.chunk_index,
        "char_count": len(chunk.text),
    }


@dataclass(frozen=True)
class StoredChunk:
    id: str
    text: str
    metadata: dict[str, Any]
    distance: float | None = None


@dataclass(frozen=True)
class RevisionBlock:
    """One revision's chunks as loaded from Chroma, with what the registry said at the time."""

    key: str
    stamp: tuple[int, str]
    ids: list[str]
    scoring: np.ndarray
    """``(rows, 385)`` float32, C-contiguous: each embedding ``m`` times -2, then ``|m|^2``. Its product with
    ``[q, 1]`` is ``|m - q|^2 - |q|^2``, a ranking by distance in one matrix-vector product; ``m`` itself is
    ``-scoring[:, :384] / 2``, exactly (scaling by a power of two loses nothing)."""
    texts: list[str]
    metadatas: list[dict[str, Any]]

    @classmethod
    def from_embeddings(
        cls, key: str, stamp: tuple[int, str], ids: list[str], embeddings: np.ndarray, texts: list[str],
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


def revision_stamp(revision: Revision) -> tuple[int, str]:
    """What must be unchanged for a cached block to still be the revision's chunks."""
    return revision.chunk_count, revision.ingested_at.isoformat() if revision.ingested_at else ""


class RevisionChunkCache:
    """Least-recently-used revision blocks within a byte budget. Thread-safe; loads run outside the lock."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_BYTES) -> None:
        self.max_bytes = max_bytes
        self._blocks: OrderedDict[str, RevisionBlock] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()

    def get(self, key: str, stamp: tuple[int, str]) -> RevisionBlock | None:
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


class ChunkCollection:
    """One Chroma collection of chunks: batched writes, paged reads. Shared by policy and document chunks.

    Chroma clients are thread-safe; one instance per process and collection.
    """

    def __init__(self, client: ClientAPI, collection_name: str) -> None:
        self._client = client
        self.collection: Collection = client.get_or_create_collection(
            collection_name, embedding_function=None, metadata={"hnsw:space": "l2"}
        )
        self.max_batch = client.get_max_batch_size()

    def upsert(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        embeddings: Sequence[Sequence[float]],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        """Upsert in batches under Chroma's limit (5,461 locally)."""
        for start in range(0, len(ids), self.max_batch):
            end = start + self.max_batch
            self.collection.upsert(
                ids=list(ids[start:end]),
                documents=list(texts[start:end]),
                embeddings=[list(e) for e in embeddings[start:end]],
                metadatas=list(metadatas[start:end]),
            )

    def delete_ids(self, ids: Sequence[str]) -> int:
        for start in range(0, len(ids), self.max_batch):
            self.collection.delete(ids=list(ids[start : start + self.max_batch]))
        return len(ids)

    def count(self) -> int:
        return self.collection.count()

    def query(
        self, embedding: Sequence[float] | np.ndarray, n_results: int, where: dict[str, Any] | None
    ) -> list[StoredChunk]:
        """Chroma's own (HNSW, where-filtered) nearest-neighbour query."""
        result = self.collection.query(
            query_embeddings=[np.asarray(embedding, dtype=np.float32).tolist()],
            n_results=n_results,
            where=where,
            include=["documents", "metadatas", "distances"],
        )
        return [
            StoredChunk(id=i, text=t or "", metadata=dict(m or {}), distance=d)
            for i, t, m, d in zip(
                result["ids"][0],
                (result["documents"] or [[]])[0],
                (result["metadatas"] or [[]])[0],
                (result["distances"] or [[]])[0],
                strict=True,
            )
        ]

    def iter_metadata(self, where: dict[str, Any] | None = None) -> Iterator[tuple[str, dict[str, Any]]]:
        """Every (id, metadata) matching ``where``, paged: for deletes and audits over the whole collection."""
        offset = 0
        while True:
            page = self.collection.get(where=where, include=["metadatas"], limit=_PAGE, offset=offset)
            for cid, meta in zip(page["ids"], page["metadatas"] or [], strict=True):
                yield cid, dict(meta or {})
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE

    def ids(self, where: dict[str, Any]) -> list[str]:
        ids: list[str] = []
        offset = 0
        while True:
            page = self.collection.get(where=where, include=[], limit=_PAGE, offset=offset)
            ids.extend(page["ids"])
            if len(page["ids"]) < _PAGE:
                return ids
            offset += _PAGE

    def chunks(self, where: dict[str, Any]) -> list[StoredChunk]:
        """Every chunk matching ``where`` with its text, in ``chunk_index`` (document) order."""
        chunks: list[StoredChunk] = []
        offset = 0
        while True:
            page = self.collection.get(where=where, include=["documents", "metadatas"], limit=_PAGE, offset=offset)
            for cid, text, meta in zip(page["ids"], page["documents"] or [], page["metadatas"] or [], strict=True):
                chunks.append(StoredChunk(id=cid, text=text or "", metadata=dict(meta or {})))
            if len(page["ids"]) < _PAGE:
                break
            offset += _PAGE
        return sorted(chunks, key=lambda c: int(c.metadata.get("chunk_index", 0)))


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


class PolicyVectorStore(ChunkCollection):
    """The ``policy_docs`` collection, with the exact-search cache of the fast path."""

    def __init__(
        self, client: ClientAPI, collection_name: str = POLICY_COLLECTION, *, cache_bytes: int = DEFAULT_CACHE_BYTES
    ) -> None:
        super().__init__(client, collection_name)
        self.cache = RevisionChunkCache(cache_bytes)
        self.answers = AnswerMemo(1024 if cache_bytes else 0)
        self.exact_searches = 0
        self.fallback_searches = 0
        """How many searches the cache answered and how many went to Chroma's filtered query (approximate
        under concurrency; for health reports and tests)."""

    # -- writes -----------------------------------------------------------------------------------

    def delete_revision(self, source: str, revision_id: str) -> int:
        """Delete every chunk of a revision; 0 when it has none (spec 000 FR-006)."""
        removed = self.delete_ids(self.revision_chunk_ids(source, revision_id))
        logger.info("vectorstore.revision_deleted source=%s revision_id=%s chunks=%d", source, revision_id, removed)
        return removed

    def sync_revision_metadata(self, policy: Policy, revision: Revision) -> int:
        """Rewrite the dates, label and title carried by a revision's chunks after a registry change."""
        ids = self.revision_chunk_ids(policy.source, revision.revision_id)
        patch = {
            "effective_from": to_int(revision.effective_from),
            "effective_to": to_int(revision.effective_to),
            "version_label": revision.version_label,
            "source_title": policy.title,
        }
        for start in range(0, len(ids), self.max_batch):
            batch = ids[start : start + self.max_batch]
            self.collection.update(ids=batch, metadatas=[patch] * len(batch))
        return len(ids)

    # -- reads ------------------------------------------------------------------------------------

    def revision_chunk_ids(self, source: str, revision_id: str) -> list[str]:
        return self.ids({"revision_ref": revision_ref(source, revision_id)})

    def count_revision(self, source: str, revision_id: str) -> int:
        return len(self.revision_chunk_ids(source, revision_id))

    def section_chunks(self, source: str, revision_id: str, section_ref: str) -> list[StoredChunk]:
        """Every chunk of one section of one revision, in document order (exact metadata lookup)."""
        return self._revision_chunks(source, revision_id, "section_ref", section_ref)

    def chapter_chunks(self, source: str, revision_id: str, chapter: str) -> list[StoredChunk]:
        """Every chunk whose ``chapter`` is ``chapter`` (its intro, paragraphs, footnotes), in document order."""
        return self._revision_chunks(source, revision_id, "chapter", chapter)

    def _revision_chunks(self, source: str, revision_id: str, field: str, value: str) -> list[StoredChunk]:
        return self.chunks({"$and": [{"revision_ref": revision_ref(source, revision_id)}, {field: value}]})

    # -- search -----------------------------------------------------------------------------------

    def search(
        self, embedding: Sequence[float] | np.ndarray, n_results: int, revisions: Mapping[str, Revision]
    ) -> list[StoredChunk]:
        """The ``n_results`` chunks nearest to ``embedding`` among the chunks of ``revisions``
        (``{revision_ref: Revision}``): what ``query(..., revision_filter(revisions))`` returns, faster."""
        if not revisions:
            return []
        query = np.asarray(embedding, dtype=np.float32).reshape(-1)
        blocks = self._cached_blocks(revisions)
        if blocks is not None:
            self.exact_searches += 1
            key = (query.tobytes(), n_results, *((b.key, b.stamp) for b in blocks))
            answer = self.answers.get(key)
            if answer is None:
                answer = self._exact_search(query, n_results, blocks)
                self.answers.put(key, answer)
            return answer
        self.fallback_searches += 1
        return self.query(query, n_results, revision_filter(sorted(revisions)))

    def warm(self, revisions: Mapping[str, Revision]) -> int:
        """Load the blocks of ``revisions`` into the cache now; returns how many are cached."""
        return len(self._cached_blocks(revisions) or [])

    def _cached_blocks(self, revisions: Mapping[str, Revision]) -> list[RevisionBlock] | None:
        """Every revision's block, loading what is missing; ``None`` if they cannot all be cached at once
        (over budget, or a revision whose stored chunks do not match its ``chunk_count``)."""
        if sum(r.chunk_count for r in revisions.values()) * ROW_BYTES > self.cache.max_bytes:
            return None
        blocks = []
        for key, revision in revisions.items():
            stamp = revision_stamp(revision)
            block = self.cache.get(key, stamp)
            if block is None:
                block = self._load_block(key, stamp)
                if block is None or not self.cache.put(block):
                    return None
            blocks.append(block)
        return blocks

    def _load_block(self, key: str, stamp: tuple[int, str]) -> RevisionBlock | None:
        result = self.collection.get(where={"revision_ref": key}, include=["embeddings", "documents", "metadatas"])
        ids = list(result["ids"])
        if len(ids) != stamp[0]:
            logger.info("vectorstore.block_not_cached revision_ref=%s stored=%d registry=%d", key, len(ids), stamp[0])
            return None
        return RevisionBlock.from_embeddings(
            key, stamp, ids, np.asarray(result["embeddings"] if ids else np.zeros((0, 0)), dtype=np.float32),
            texts=[t or "" for t in result["documents"] or []],
            metadatas=[dict(m or {}) for m in result["metadatas"] or []],
        )  # fmt: skip

    @staticmethod
    def _exact_search(query: np.ndarray, n_results: int, blocks: list[RevisionBlock]) -> list[StoredChunk]:
        """Exact top-n over the blocks: one product per block ranks every row by ``|m|^2 - 2 m.q``, one
        partition picks the best ``n_results + slack`` over all of them, and those are re-ranked by direct
        squared L2 (what Chroma reports), ties broken by id. The work in Python is per block and per
        candidate, never per row."""
        blocks = [b for b in blocks if b.ids]
        if not blocks:
            return []
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


def revision_filter(revision_refs: Sequence[str]) -> dict[str, Any]:
    """The where-clause that restricts a query to chunks of the given revisions."""
    if len(revision_refs) == 1:
        return {"revision_ref": revision_refs[0]}
    return {"revision_ref": {"$in": list(revision_refs)}}
