"""The ``kb`` tools' output schemas, as ``tools/list`` publishes them and the client validates results.

What comes from the engine is passed through (``extra="allow"``): the schemas name the fields spec 002
promises and this server adds (``collection``, ``tags`` without ``collection:*``), not every engine field.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class Collected(_Open):
    collection: str | None = Field(default=None, description="The document's collection (its collection:* tag)")
    tags: list[str] = Field(default_factory=list, description="The document's other tags")


class SearchHit(Collected):
    document_id: int
    chunk_index: int | None = None
    text: str
    score: float | None = None
    kind: str | None = Field(default=None, description="note | file")


class SearchOutput(_Open):
    status: str = "success"
    query: str
    mode: str | None = None
    results_count: int
    results: list[SearchHit] = Field(description="Best first")


class JobAccepted(_Open):
    status: str = "success"
    job_id: str = Field(description="Follow it with kb_jobs; the document_id appears there once completed")
    job_status: str | None = Field(default=None, description="queued | running | completed | failed")


class Document(Collected):
    document_id: int
    kind: str | None = Field(default=None, description="note | file")


class DocumentsOutput(_Open):
    """``kb_get``'s answer (spec 002): by ``document_id`` the document itself (its fields at the top, with
    ``chunks``); by ``source_path`` ``count`` and ``documents``, every document with that path."""

    status: str = "success"
    document_id: int | None = Field(default=None, description="By document_id: the document's id")
    collection: str | None = Field(default=None, description="By document_id: its collection (collection:* tag)")
    tags: list[str] | None = Field(default=None, description="By document_id: its other tags")
    kind: str | None = Field(default=None, description="By document_id: note | file")
    count: int | None = Field(default=None, description="By source_path: how many documents have it")
    documents: list[Document] | None = Field(default=None, description="By source_path: every document with it")


class DocumentOutput(Document):
    status: str = "success"


class Job(Collected):
    job_id: str
    status: str = Field(description="queued | running | completed | failed")


class JobsOutput(_Open):
    status: str = "success"
    count: int
    jobs: list[Job]


class StatusOutput(_Open):
    status: str = "success"


class UploadStartOutput(_Open):
    status: str = "success"
    upload_id: str
    expires_at: int = Field(description="Unix time: finish before it or the upload is abandoned and removed")
    max_chunk_bytes: int = Field(description="Most bytes one chunk may carry before base64")


class UploadChunkOutput(_Open):
    status: str = "success"
    upload_id: str
    chunk_index: int
    received_bytes: int
    total_size: int
    duplicate: bool = Field(description="The same bytes had already arrived under this index; nothing changed")
