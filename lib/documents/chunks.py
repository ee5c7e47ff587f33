"""ChromaDB: the ``application_docs`` collection of application-document chunks (spec 003 FR-008).

Chunk ids are ``{sanitized_ref}_{file_hash_6}_{page_number:03d}_{chunk_index:03d}`` (the page is the
first one the chunk touches), so re-ingesting a file writes the same ids and can never duplicate a
chunk. Metadata is spec 003's ten fields and the pages as printed (``printed_page``, ``printed_pages``:
``lib.text.printed_pages.stored``, "" where a page prints none); ``page_numbers`` is comma-separated because
Chroma has no list values.
"""

from __future__ import annotations

from chromadb.api import ClientAPI

from lib.models import Chunk
from lib.stores.chroma import ChunkCollection, StoredChunk
from lib.text.printed_pages import stored, stored_list

DOCUMENT_COLLECTION = "application_docs"


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
    """Spec 003 FR-008's chunk metadata, field for field, and the pages as the document prints them."""
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
        "printed_page": stored(chunk.printed_page),
        "printed_pages": stored_list(chunk.printed_pages),
    }


class DocumentChunkStore(ChunkCollection):
    """The ``application_docs`` collection."""

    def __init__(self, client: ClientAPI, collection_name: str = DOCUMENT_COLLECTION) -> None:
        super().__init__(client, collection_name)

    def delete_document(self, document_id: str) -> int:
        """Delete every chunk of one document; 0 when it has none."""
        return self.delete_ids(self.chunk_ids(document_id))

    def chunk_ids(self, document_id: str) -> list[str]:
        return self.ids({"document_id": document_id})

    def count_document(self, document_id: str) -> int:
        return len(self.chunk_ids(document_id))

    def document_chunks(self, document_id: str) -> list[StoredChunk]:
        """Every chunk of one document in ``chunk_index`` order."""
        return self.chunks({"document_id": document_id})
