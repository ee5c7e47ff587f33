"""What each ``document-store-mcp`` tool does: one call into ``lib.documents`` over the server's
``DocumentStores``, its result in the tool's output shape (``outputs``). The handlers in ``tools`` run these on
a worker thread through the envelope; nothing here knows about MCP."""

from __future__ import annotations

from typing import Any

from lib.documents.ingest import ingest_document
from lib.documents.models import DocumentList, DocumentSearchResult, DocumentText
from lib.documents.quotes import verify_document_quote
from lib.documents.reads import get_document_text, list_ingested_documents
from lib.documents.search import search_application_docs
from lib.documents.stores import DocumentStores
from lib.progress import Progress
from mcp_service.tools.documents.outputs import DocumentQuoteOutput


def ingest(
    stores: DocumentStores,
    file_path: str,
    application_ref: str,
    document_type: str | None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """One of three outcomes (success, already_ingested, skipped), as the JSON of its own model; ``progress``
    is told how the ingestion goes (``lib.progress``)."""
    return ingest_document(stores, file_path, application_ref, document_type, progress).model_dump(mode="json")


def search(
    stores: DocumentStores,
    query: str,
    application_ref: str | None,
    document_types: list[str] | None,
    max_results: int,
    mode: str,
) -> DocumentSearchResult:
    return search_application_docs(stores, query, application_ref, document_types, max_results=max_results, mode=mode)


def text(stores: DocumentStores, document_id: str) -> DocumentText:
    return get_document_text(stores, document_id)


def listing(stores: DocumentStores, application_ref: str) -> DocumentList:
    return list_ingested_documents(stores, application_ref)


def quote(stores: DocumentStores, text: str, application_ref: str | None) -> DocumentQuoteOutput:
    return DocumentQuoteOutput(**verify_document_quote(stores, text, application_ref=application_ref).model_dump())
