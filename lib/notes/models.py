"""The kb engine's records and results: documents (notes and files), their chunks, ingestion jobs, search hits.

A document's ``tags`` are raw strings, ``collection:*`` included: collections are a convention of the MCP
server (spec 002), the engine stores and filters tags without reading them.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, Field

DocumentKind = Literal["note", "file"]


def utc_now() -> datetime:
    return datetime.now(UTC)


class JobStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"


class NoteDocument(BaseModel):
    """One registered document. ``generation`` names the chunk set searches read (``lib.notes.chunks``);
    ``object_key`` is the original file in the object store (files only)."""

    document_id: int
    kind: DocumentKind
    title: str | None = None
    source_path: str | None = None
    filename: str | None = None
    content_type: str | None = None
    object_key: str | None = None
    tags: list[str] = Field(default_factory=list)
    created_at: datetime = Field(default_factory=utc_now)
    updated_at: datetime = Field(default_factory=utc_now)
    generation: int = 1
    chunk_count: int = 0


class ChunkOut(BaseModel):
    chunk_index: int
    text: str
    page: int | None = Field(default=None, description="First page the chunk touches (PDF files only)")


class DocumentOut(BaseModel):
    """A document as the engine API shows it (without chunks in listings)."""

    document_id: int
    kind: DocumentKind
    title: str | None
    source_path: str | None
    filename: str | None
    content_type: str | None
    tags: list[str]
    created_at: datetime
    updated_at: datetime
    chunk_count: int

    @classmethod
    def of(cls, document: NoteDocument) -> DocumentOut:
        return cls.model_validate(document.model_dump(exclude={"generation", "object_key"}))


class DocumentDetail(DocumentOut):
    chunks: list[ChunkOut]


class JobRecord(BaseModel):
    """One ingestion job. A note's text and a file's staged object are in the job until it finishes."""

    job_id: str
    status: JobStatus = JobStatus.QUEUED
    kind: DocumentKind
    error: str | None = None
    error_type: str | None = None
    created_at: datetime = Field(default_factory=utc_now)
    started_at: datetime | None = None
    finished_at: datetime | None = None
    document_id: int | None = None
    filename: str | None = None
    content_type: str | None = None
    object_key: str | None = None
    title: str | None = None
    source_path: str | None = None
    tags: list[str] = Field(default_factory=list)
    text: str | None = Field(default=None, exclude=True, description="A note's text (never shown)")


class JobOut(BaseModel):
    job_id: str
    status: JobStatus
    error: str | None
    created_at: datetime
    started_at: datetime | None
    finished_at: datetime | None
    document_id: int | None
    kind: DocumentKind
    filename: str | None
    tags: list[str]

    @classmethod
    def of(cls, job: JobRecord) -> JobOut:
        return cls.model_validate(job.model_dump())


class SearchHit(BaseModel):
    document_id: int
    chunk_index: int
    text: str
    score: float = Field(ge=0.0, le=1.0)
    dense_score: float | None = None
    lexical_score: float | None = None
    title: str | None
    source_path: str | None
    kind: DocumentKind
    filename: str | None
    tags: list[str]
    created_at: datetime
    updated_at: datetime


class SearchResult(BaseModel):
    query: str
    mode: str
    results: list[SearchHit]
