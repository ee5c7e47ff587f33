"""ChromaDB: the ``application_docs`` collection of application-document chunks (spec 003 FR-008).

Chunk ids are ``{sanitized_ref}_{file_hash_6}_{page_number:03d}_{chunk_index:03d}`` (the page is the
first one the chunk touches), so re-ingesting a file writes the same ids and can never duplicate a
chunk. Metadata is exactly spec 003's ten fields; ``page_numbers`` is comma-separated because Chroma
has no list values.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Sequence
from typing import Any

from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

from lib.models import Chunk
from lib.vectorstore import StoredChunk

logger = logging.getLogger(__name__)

DOCUMENT_COLLECTION = "application_docs"
_PAGE = 5000


def document_chunk_id(document_id: str, page_number: int, chunk_index: int) -> str:
    """``document_id`` already is ``{sanitized_ref}_{file_hash_6}``."""
    return f"{document_id}_{page_number:03d}_{chunk_index:03d}"


def document_chunk_metadata(
    chunk: Chunk,
    *,
    application_ref: str,
    document_id: str,
    source_file: str,
    document_type: str,
    total_chunks: int,
    extraction_method: str,
) -> dict[str, str | int]:
    """Spec 003 FR-008's chunk metadata, field for field."""
    return {
        "application_ref": application_ref,
        "document_id": document_id,
        "source_file": source_file,
        "document_type": document_type,
        "page_numbers": ",".join(str(p) for p in chunk.page_numbers),
        "chunk_index": chunk.chunk_index,
        "total_chunks": total_chunks,
        "extraction_method": extraction_method,
        "char_count": len(chunk.text),
        "word_count": len(chunk.text.split()),
    }


class DocumentChunkStore:
    """All Chroma access for application-document chunks. Chroma clients are thread-safe."""

    def __init__(self, client: ClientAPI, collection_name: str = DOCUMENT_COLLECTION) -> None:
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

    def delete_document(self, document_id: str) -> int:
        """Delete every chunk of one document; 0 when it has none."""
        return self.delete_ids(self.chunk_ids(document_id))

    def chunk_ids(self, document_id: str) -> list[str]:
        return [chunk_id for chunk_id, _ in self.iter_metadata({"document_id": document_id})]

    def count_document(self, document_id: str) -> int:
        return len(self.chunk_ids(document_id))

    def count(self) -> int:
        return self.collection.count()

    def document_chunks(self, document_id: str) -> list[StoredChunk]:
        """Every chunk of one document in ``chunk_index`` order."""
        chunks: list[StoredChunk] = []
        offset = 0
        while True:
            page = self.collection.get(
                where={"document_id": document_id}, include=["documents", "metadatas"], limit=_PAGE, offset=offset
            )
            for cid, text, meta in zip(page["ids"], page["documents"] or [], page["metadatas"] or [], strict=True):
                chunks.append(StoredChunk(id=cid, text=text or "", metadata=dict(meta or {})))
            if len(page["ids"]) < _PAGE:
                break
            offset += _PAGE
        return sorted(chunks, key=lambda c: int(c.metadata.get("chunk_index", 0)))

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
        """Every (id, metadata), paged: for deletes and audits over the whole collection."""
        offset = 0
        while True:
            page = self.collection.get(where=where, include=["metadatas"], limit=_PAGE, offset=offset)
            for cid, meta in zip(page["ids"], page["metadatas"] or [], strict=True):
                yield cid, dict(meta or {})
            if len(page["ids"]) < _PAGE:
                return
            offset += _PAGE
