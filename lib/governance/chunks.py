"""ChromaDB: the governance collection (``CHROMA_GOVERNANCE_COLLECTION``) of chunks of governance documents.

Chunk ids are ``{doc_id}@{generation}#{chunk_index:04d}``: every re-chunking of a document writes a new
generation beside the old one, and the registry's record says which generation is current, so searches see
the old chunks until the record flips and the new ones after (``lib.governance.ingest``). Metadata carries
what a citation needs (document id, title, type, heading path, file path); the lifecycle fields (status,
dates, chain links) are read from the registry at query time, because another document's arrival changes
whether this one is in force without changing its chunks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from chromadb.api import ClientAPI

from lib.governance.keys import generation_key
from lib.stores.chroma import ChunkCollection, StoredChunk, where_in

GOVERNANCE_COLLECTION = "governance_docs"


class GovernanceChunkStore(ChunkCollection):
    """The governance collection: writes and deletes by document generation, reads with embeddings."""

    def __init__(self, client: ClientAPI, collection_name: str = GOVERNANCE_COLLECTION) -> None:
        super().__init__(client, collection_name)

    def delete_generation(self, doc_id: str, generation: int) -> int:
        return self.delete_ids(self.ids({"doc_gen": generation_key(doc_id, generation)}))

    def delete_document(self, doc_id: str) -> int:
        """Every chunk of every generation of ``doc_id``."""
        return self.delete_ids(self.ids({"doc_id": doc_id}))

    def generation_chunks(self, keys: Sequence[str]) -> list[tuple[StoredChunk, np.ndarray]]:
        """Every chunk of the generations ``keys`` (``generation_key``) with its vector, paged."""
        found: list[tuple[StoredChunk, np.ndarray]] = []
        for start in range(0, len(keys), 500):
            where = where_in("doc_gen", list(keys[start : start + 500]))
            page: Any = self.collection.get(where=where, include=["documents", "metadatas", "embeddings"])
            vectors = page["embeddings"] if page["embeddings"] is not None else []
            for cid, text, meta, vector in zip(
                page["ids"], page["documents"] or [], page["metadatas"] or [], vectors, strict=True
            ):
                found.append((StoredChunk(id=cid, text=text or "", metadata=dict(meta or {})), np.asarray(vector)))
        return found
