"""Reading application documents back (spec 003 FR-002..FR-004): search, full text, an application's list.

The registry decides what exists: an ingestion registers a document after its chunks are written and a
deletion unregisters it before they are removed, so search hides chunks whose document is not
registered, and a half-written or half-deleted document is never in results.

These take the ``KnowledgeBase`` because the MCP tools call them with it; ``get_document_text`` and
``list_ingested_documents`` use only ``kb.documents``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from lib.documents.classification import check_document_type
from lib.documents.models import (
    DocumentHit,
    DocumentList,
    DocumentSearchResult,
    DocumentSummary,
    DocumentText,
    utc_seconds,
)
from lib.documents.registry import check_application_ref
from lib.errors import InvalidArgumentError, NoChunksError
from lib.kb import KnowledgeBase
from lib.policies.search import MAX_QUERY_CHARS, merge_chunk_texts
from lib.stores.chroma import relevance

logger = logging.getLogger(__name__)

DEFAULT_MAX_RESULTS = 10


def search_application_docs(
    kb: KnowledgeBase,
    query: str,
    application_ref: str | None = None,
    document_types: Sequence[str] | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
) -> DocumentSearchResult:
    """Semantic search over application chunks, filtered by application and/or types (spec 003 FR-002)."""
    if not isinstance(query, str) or not query.strip():
        raise InvalidArgumentError("query must be a non-empty string")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgumentError(f"query is longer than {MAX_QUERY_CHARS} characters")
    maximum = kb.settings.max_results
    if isinstance(max_results, bool) or not isinstance(max_results, int) or not 1 <= max_results <= maximum:
        raise InvalidArgumentError(f"max_results must be an integer from 1 to {maximum}, got {max_results!r}")
    filters: list[dict[str, Any]] = []
    if application_ref is not None:
        filters.append({"application_ref": check_application_ref(application_ref)})
    if document_types:
        types = list(dict.fromkeys(check_document_type(t) for t in document_types))
        filters.append({"document_type": {"$in": types}})
    where = filters[0] if len(filters) == 1 else ({"$and": filters} if filters else None)

    stores = kb.documents
    hits = stores.chunks.query(kb.embedder.embed_queries([query])[0].tolist(), max_results, where)
    owners = [str(hit.metadata.get("document_id", "")) for hit in hits]
    visible = stores.registry.registered(owners)
    if not all(visible):
        logger.warning("documents.unregistered_chunks_hidden count=%d", visible.count(False))
    results = [
        DocumentHit(
            chunk_id=hit.id,
            text=hit.text,
            relevance_score=round(relevance(hit.distance or 0.0), 4),
            metadata=hit.metadata,
        )
        for hit, shown in zip(hits, visible, strict=True)
        if shown
    ]
    results.sort(key=lambda hit: -hit.relevance_score)
    return DocumentSearchResult(query=query, results_count=len(results), results=results)


def get_document_text(kb: KnowledgeBase, document_id: str) -> DocumentText:
    """The document's text from its chunks in ``chunk_index`` order, overlaps removed (spec 003 FR-003)."""
    stores = kb.documents
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


def list_ingested_documents(kb: KnowledgeBase, application_ref: str) -> DocumentList:
    """Every document of one application, oldest first; an empty list when there are none (FR-004)."""
    ref = check_application_ref(application_ref)
    records = kb.documents.registry.list_application(ref)
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
