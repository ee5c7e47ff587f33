"""The kb engine's reads and tag changes, as its REST API (``mcp_service.rest.kb_routes``) and the ``kb``
server's in-process engine (``mcp_service.kb_engine_local``) both answer them: one implementation, two faces."""

from __future__ import annotations

from lib.errors import JobNotFoundError
from lib.notes.jobs import DEFAULT_LIST
from lib.notes.models import ChunkOut, DocumentDetail, DocumentOut, JobOut, JobStatus
from lib.notes.stores import NoteStores

MAX_JOB_ID = 100
"""Longer ids are never allocated: refused without a Redis read."""


def job(stores: NoteStores, job_id: str) -> JobOut:
    found = stores.jobs.get(job_id) if len(job_id) <= MAX_JOB_ID else None
    if found is None:
        raise JobNotFoundError(f"Job not found: {job_id}", job_id=job_id)
    return JobOut.of(found)


def jobs(stores: NoteStores, status: JobStatus | None = None, limit: int = DEFAULT_LIST) -> list[JobOut]:
    """Recent jobs, newest first."""
    return [JobOut.of(found) for found in stores.jobs.list(status, limit)]


def documents_with_source_path(stores: NoteStores, source_path: str) -> list[DocumentOut]:
    return [DocumentOut.of(document) for document in stores.registry.by_source_path(source_path)]


def document_detail(stores: NoteStores, document_id: int) -> DocumentDetail:
    """A document with its live chunks in order."""
    document = stores.registry.require(document_id)
    chunks = [
        ChunkOut(chunk_index=int(c.metadata["chunk_index"]), text=c.text, page=c.metadata.get("page"))
        for c in stores.chunks.chunks_of(document_id, document.generation)
    ]
    return DocumentDetail(**DocumentOut.of(document).model_dump(), chunks=chunks)


def change_tags(stores: NoteStores, document_id: int, tags: list[str], *, add: bool) -> DocumentOut:
    """Add ``tags``, or remove them (removing an absent tag changes nothing); searches see it from the next query."""
    return DocumentOut.of(stores.registry.change_tags(document_id, tags, add=add))
