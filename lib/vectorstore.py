"""ChromaDB: the ``policy_docs`` collection of chunks, embeddings and their citation metadata.

Chunk metadata follows spec 000's appendix (dates as YYYYMMDD integers, ``99991231`` = in force)
plus ``chapter``, ``page_numbers`` and ``revision_key`` (``{source}:{revision_id}``). Searches
filter on ``revision_key`` values resolved from the registry (``lib.temporal``), never on the date
metadata alone: that metadata is kept in step with the registry for readers and audits, but a
registry date edit can never make a search return a chunk of the wrong revision.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

import chromadb
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from lib.config import Settings
from lib.dates import to_int
from lib.models import Chunk, Policy, Revision

logger = logging.getLogger(__name__)

POLICY_COLLECTION = "policy_docs"
_PAGE = 5000
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


def revision_key(source: str, revision_id: str) -> str:
    return f"{source}:{revision_id}"


def relevance(distance: float) -> float:
    """``max(0, 1 - d/2)`` of Chroma's squared L2 distance: the cosine similarity for unit vectors."""
    return max(0.0, 1.0 - distance / 2.0)


def chunk_metadata(chunk: Chunk, policy: Policy, revision: Revision) -> dict[str, str | int]:
    return {
        "source": policy.source,
        "source_title": policy.title,
        "revision_id": revision.revision_id,
        "revision_key": revision_key(policy.source, revision.revision_id),
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


class PolicyVectorStore:
    """All Chroma access for policy chunks. One instance per process; Chroma clients are thread-safe."""

    def __init__(self, client: ClientAPI, collection_name: str = POLICY_COLLECTION) -> None:
        self._client = client
        self.collection: Collection = client.get_or_create_collection(
            collection_name, embedding_function=None, metadata={"hnsw:space": "l2"}
        )
        self.max_batch = client.get_max_batch_size()

    # -- writes -----------------------------------------------------------------------------------

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
        where = {"revision_key": revision_key(source, revision_id)}
        return list(self._paged_ids(where))

    def count_revision(self, source: str, revision_id: str) -> int:
        return len(self.revision_chunk_ids(source, revision_id))

    def count(self) -> int:
        return self.collection.count()

    def section_chunks(self, source: str, revision_id: str, section_ref: str) -> list[StoredChunk]:
        """Every chunk of one section of one revision, in document order (exact metadata lookup)."""
        return self._revision_chunks(source, revision_id, "section_ref", section_ref)

    def chapter_chunks(self, source: str, revision_id: str, chapter: str) -> list[StoredChunk]:
        """Every chunk whose ``chapter`` is ``chapter`` (its intro, paragraphs, footnotes), in document order."""
        return self._revision_chunks(source, revision_id, "chapter", chapter)

    def _revision_chunks(self, source: str, revision_id: str, field: str, value: str) -> list[StoredChunk]:
        result = self.collection.get(
            where={"$and": [{"revision_key": revision_key(source, revision_id)}, {field: value}]},
            include=["documents", "metadatas"],
        )
        chunks = [
            StoredChunk(id=i, text=t or "", metadata=dict(m or {}))
            for i, t, m in zip(result["ids"], result["documents"] or [], result["metadatas"] or [], strict=True)
        ]
        return sorted(chunks, key=lambda c: c.metadata.get("chunk_index", 0))

    def query(self, embedding: Sequence[float], n_results: int, where: dict[str, Any] | None) -> list[StoredChunk]:
        result = self.collection.query(
            query_embeddings=[list(embedding)],
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
        """Every (id, metadata), paged: for audits over the whole collection."""
        offset = 0
        while True:
            page = self.collection.get(where=where, include=["metadatas"], limit=_PAGE, offset=offset)
            for cid, meta in zip(page["ids"], page["metadatas"] or [], strict=True):
                yield cid, dict(meta or {})
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE

    def _paged_ids(self, where: dict[str, Any]) -> Iterator[str]:
        offset = 0
        while True:
            page = self.collection.get(where=where, include=[], limit=_PAGE, offset=offset)
            yield from page["ids"]
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE


def revision_filter(revision_keys: Sequence[str]) -> dict[str, Any]:
    """The where-clause that restricts a query to chunks of the given revisions."""
    if len(revision_keys) == 1:
        return {"revision_key": revision_keys[0]}
    return {"revision_key": {"$in": list(revision_keys)}}
