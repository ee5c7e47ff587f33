"""The operations the document-store MCP tools call, and their results, in one namespace.

``from lib.documents import api as documents`` gives ``documents.ingest_document``,
``documents.DocumentSearchResult`` and so on. A plain re-export: ``lib/documents/__init__.py`` cannot
hold it, because ``lib.kb`` imports this package's stores and these operations import modules that
import ``lib.kb`` (importing ``lib.kb`` first would meet a half-initialised module).
"""

from __future__ import annotations

from lib.documents.ingest import ingest_document
from lib.documents.models import DocumentList, DocumentSearchResult, DocumentText, IngestResult
from lib.documents.reads import get_document_text, list_ingested_documents
from lib.documents.search import search_application_docs

__all__ = [
    "DocumentList",
    "DocumentSearchResult",
    "DocumentText",
    "IngestResult",
    "get_document_text",
    "ingest_document",
    "list_ingested_documents",
    "search_application_docs",
]
