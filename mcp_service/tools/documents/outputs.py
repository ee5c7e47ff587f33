"""The ``document-store-mcp`` tools' output schemas: what each tool returns on success, as ``tools/list``
publishes it and the client validates results against it. Field names are spec 003's (``lib.documents.models``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lib.documents.models import DocumentList, DocumentSearchResult, DocumentText
from lib.documents.quotes import DocumentQuoteVerification


class IngestDocumentOutput(BaseModel):
    """One shape for the three outcomes; fields not part of an outcome are absent."""

    status: str = Field(description="success | already_ingested | skipped")
    document_id: str | None = None
    chunks_created: int | None = None
    extraction_method: str | None = Field(default=None, description="text_layer | ocr | mixed")
    contains_drawings: bool | None = Field(default=None, description="Some page is mostly images (a drawing, a scan)")
    total_chars: int | None = None
    total_words: int | None = None
    document_type: str | None = None
    message: str | None = Field(default=None, description="already_ingested: why nothing was done")
    reason: str | None = Field(default=None, description="skipped: image_based")
    image_ratio: float | None = Field(default=None, description="skipped: average share of the pages under images")
    total_pages: int | None = None


class SearchOutput(DocumentSearchResult):
    pass


class DocumentTextOutput(DocumentText):
    pass


class DocumentListOutput(DocumentList):
    pass


class DocumentQuoteOutput(DocumentQuoteVerification):
    status: str = "success"
