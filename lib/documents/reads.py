"""Reading application documents back (spec 003 FR-003, FR-004): full text and an application's list.
Search (FR-002) is ``lib.documents.search``.
"""

from __future__ import annotations

from lib.documents.models import DocumentList, DocumentSummary, DocumentText, utc_seconds
from lib.documents.registry import check_application_ref
from lib.documents.stores import DocumentStores
from lib.errors import NoChunksError
from lib.text.chunking import merge_chunk_texts


def get_document_text(stores: DocumentStores, document_id: str) -> DocumentText:
    """The document's text from its chunks in ``chunk_index`` order, overlaps removed (spec 003 FR-003)."""
    record = stores.registry.require(document_id)
    chunks = stores.chunks.document_chunks(record.document_id)
    if not chunks:
        raise NoChunksError(f"Document {record.document_id} has no stored chunks")
    return DocumentText(
        document_id=record.document_id,
        application_ref=record.application_ref,
        file_path=record.file_path,
        object_key=record.object_key,
        source_file=record.source_file,
        document_type=record.document_type,
        chunk_count=len(chunks),
        text=merge_chunk_texts([chunk.text for chunk in chunks]),
    )


def list_ingested_documents(stores: DocumentStores, application_ref: str) -> DocumentList:
    """Every document of one application, oldest first; an empty list when there are none (FR-004)."""
    ref = check_application_ref(application_ref)
    records = stores.registry.list_application(ref)
    documents = [
        DocumentSummary(
            document_id=r.document_id,
            file_path=r.file_path,
            object_key=r.object_key,
            source_file=r.source_file,
            document_type=r.document_type,
            chunk_count=r.chunk_count,
            ingested_at=utc_seconds(r.ingested_at),
            extraction_method=r.extraction_method,
            contains_drawings=r.contains_drawings,
        )
        for r in records
    ]
    return DocumentList(application_ref=ref, document_count=len(documents), documents=documents)
