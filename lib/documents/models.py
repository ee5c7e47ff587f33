"""What the application-document operations return: spec 003's tool outputs, field for field.

The MCP tools serialise these as they are (``model_dump(mode="json")``), so a field renamed here is a
change of the public contract. ``DocumentRecord``, what the registry stores, is in ``registry``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

ALREADY_INGESTED_MESSAGE = "Document has already been ingested with the same content"


class IngestSuccess(BaseModel):
    status: Literal["success"] = "success"
    document_id: str
    chunks_created: int
    extraction_method: str
    contains_drawings: bool
    total_chars: int
    total_words: int
    document_type: str


class AlreadyIngested(BaseModel):
    status: Literal["already_ingested"] = "already_ingested"
    document_id: str
    message: str = ALREADY_INGESTED_MESSAGE


class SkippedDocument(BaseModel):
    status: Literal["skipped"] = "skipped"
    reason: Literal["image_based"] = "image_based"
    image_ratio: float
    total_pages: int


IngestResult = IngestSuccess | AlreadyIngested | SkippedDocument


class DocumentHit(BaseModel):
    chunk_id: str
    text: str
    relevance_score: float
    metadata: dict[str, Any]


class DocumentSearchResult(BaseModel):
    status: Literal["success"] = "success"
    query: str
    results_count: int
    results: list[DocumentHit]


class DocumentText(BaseModel):
    status: Literal["success"] = "success"
    document_id: str
    application_ref: str
    file_path: str
    source_file: str
    document_type: str
    chunk_count: int
    text: str


class DocumentSummary(BaseModel):
    document_id: str
    file_path: str
    source_file: str
    document_type: str
    chunk_count: int
    ingested_at: str
    extraction_method: str
    contains_drawings: bool


class DocumentList(BaseModel):
    status: Literal["success"] = "success"
    application_ref: str
    document_count: int
    documents: list[DocumentSummary]


class DeletedDocument(BaseModel):
    document_id: str
    application_ref: str
    chunks_removed: int
    file_removed: bool
