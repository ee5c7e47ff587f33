"""What the application-document operations return: spec 003's tool outputs, field for field.

The MCP tools serialise these as they are (``model_dump(mode="json")``), so a field renamed here is a
change of the public contract. ``DocumentRecord``, what the registry stores, is in ``registry``.

Beyond the spec's fields (extensions, never renamings): ``application_ref`` and ``source_file`` on the
full text, ``source_file`` and ``object_key`` (where the original is kept in the object store) on both the
full text and the list, ``document_type`` on an ingestion, the search's ``mode`` and each hit's per-leg
scores.
``file_path`` is the spec's: the path the document was ingested from.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, Field

ALREADY_INGESTED_MESSAGE = "Document has already been ingested with the same content"


def utc_seconds(moment: datetime) -> str:
    """``2026-11-22T21:47:03Z``: ISO 8601 to the second, in UTC, with the ``Z`` suffix."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


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
    """One chunk found. ``relevance_score`` is spec 003 FR-002's ``max(0, 1 - L2 / 2)`` in every mode that embeds
    the query; ``score`` (0..1) is the ranking's own, the order of the results: the fused relevance in
    ``hybrid``, ``relevance_score`` in ``dense``, the share of the best possible BM25 score in ``lexical``.
    ``dense_score`` and ``lexical_score`` are each leg's 0..1 score when that leg found it."""

    chunk_id: str
    text: str
    relevance_score: float | None = Field(
        description="max(0, 1 - L2 distance / 2) between the query's and the chunk's embeddings (spec 003 FR-002); "
        "null in lexical mode, where no query is embedded"
    )
    score: float = Field(description="The ranking's score in 0..1, results best first by it")
    metadata: dict[str, Any]
    printed_page: str | None = Field(
        default=None,
        description="The page as the document prints it where the chunk starts ('57', 'iv', 'A-3', '62-63'); null "
        "where it prints none. metadata.page_numbers are PDF pages",
    )
    dense_score: float | None = None
    lexical_score: float | None = None


class DocumentSearchResult(BaseModel):
    status: Literal["success"] = "success"
    query: str
    mode: str = "hybrid"
    results_count: int
    results: list[DocumentHit]


class DocumentText(BaseModel):
    status: Literal["success"] = "success"
    document_id: str
    application_ref: str
    file_path: str
    object_key: str
    source_file: str
    document_type: str
    chunk_count: int
    text: str


class DocumentSummary(BaseModel):
    document_id: str
    file_path: str
    object_key: str
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
