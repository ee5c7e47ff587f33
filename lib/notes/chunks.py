"""ChromaDB: the ``kb_docs`` collection (``CHROMA_KB_COLLECTION``) of note and file chunks.

A chunk id is ``kb_{document_id}_{generation}_{chunk_index:05d}``: each rewrite of a note writes a new
generation beside the live one, so the registry can switch searches to it in one write and the old one
is removed afterwards (``lib.notes.ingest.update_note``). The metadata names the document, the generation,
the chunk's index and, for PDFs, its first page. Tags are not copied here: they live in the registry and
filter searches at query time, so changing them never touches Chroma.
"""

from __future__ import annotations

from collections.abc import Sequence

from chromadb.api import ClientAPI
from chromadb.api.types import Metadata

from lib.stores.chroma import ChunkCollection, StoredChunk

KB_COLLECTION = "kb_docs"


def chunk_id(document_id: int, generation: int, chunk_index: int) -> str:
    return f"kb_{document_id}_{generation}_{chunk_index:05d}"


class NoteChunkStore(ChunkCollection):
    """The kb's chunk collection; one instance per process."""

    def __init__(self, client: ClientAPI, collection_name: str = KB_COLLECTION) -> None:
        super().__init__(client, collection_name)

    def write(
        self,
        document_id: int,
        generation: int,
        texts: Sequence[str],
        pages: Sequence[int | None],
        embeddings: Sequence[Sequence[float]],
    ) -> None:
        """Store one generation of a document's chunks (ids are deterministic: a retry overwrites)."""
        ids = [chunk_id(document_id, generation, i) for i in range(len(texts))]
        metadatas: list[Metadata] = []
        for index, page in enumerate(pages):
            meta: dict[str, str | int] = {"document_id": document_id, "generation": generation, "chunk_index": index}
            if page is not None:
                meta["page"] = page
            metadatas.append(meta)
        self.upsert(ids, texts, embeddings, metadatas)

    def chunks_of(self, document_id: int, generation: int) -> list[StoredChunk]:
        """One generation's chunks in index order, texts and metadata only."""
        return self.chunks({"$and": [{"document_id": document_id}, {"generation": generation}]})

    def delete_generation(self, document_id: int, generation: int) -> int:
        """Every chunk of one generation, however many were written before a failure."""
        return self.delete_ids(self.ids({"$and": [{"document_id": document_id}, {"generation": generation}]}))

    def delete_stale(self, document_id: int, live_generation: int) -> int:
        """Every chunk of the document outside its live generation."""
        where = {"$and": [{"document_id": document_id}, {"generation": {"$ne": live_generation}}]}
        return self.delete_ids(self.ids(where))
