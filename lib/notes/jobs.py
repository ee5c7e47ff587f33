"""The lifecycle of a kb ingestion job: queued with its input checked, then started, ingested and ended.

Every runner (the Prefect flow ``ingest_kb_document``, in the background or on a worker, and ``run_job``
without orchestration) composes ``start_job``, ``ingest_job`` and ``complete_job``/``fail_job``, so a job
ends ``completed`` with its document or ``failed`` with the error, whatever happens. The records are in
Redis (``lib.notes.job_store``).
"""

from __future__ import annotations

import logging
import uuid

from lib.errors import InvalidArgumentError, KBError
from lib.notes.ingest import check_note_text, check_title, file_object_key, file_type, ingest_file, ingest_note
from lib.notes.job_store import DEFAULT_LIST, MAX_LIST, JobStore
from lib.notes.models import JobRecord, JobStatus, NoteDocument, utc_now
from lib.notes.registry import check_source_path, check_tags
from lib.notes.stores import NoteStores

__all__ = ["DEFAULT_LIST", "MAX_LIST", "JobStore", "complete_job", "fail_job", "ingest_job", "new_file_job",
           "new_note_job", "run_job", "start_job"]  # fmt: skip

logger = logging.getLogger(__name__)

_FINAL = (JobStatus.COMPLETED, JobStatus.FAILED)


def new_note_job(
    jobs: JobStore, text: str, tags: list[str], *, title: str | None = None, source_path: str | None = None
) -> JobRecord:
    """Queue a note (checked now, so bad input is refused rather than failing later)."""
    job = JobRecord(job_id=uuid.uuid4().hex, kind="note", text=check_note_text(text), tags=check_tags(tags),
                    title=check_title(title), source_path=check_source_path(source_path))  # fmt: skip
    return jobs.create(job)


def new_file_job(
    stores: NoteStores, jobs: JobStore, data: bytes, filename: str, tags: list[str], *, source_path: str | None = None
) -> JobRecord:
    """Keep the original in the object store (content-addressed) and queue it. The type is checked now."""
    name = filename.strip().replace("\\", "/").rsplit("/", 1)[-1]
    if not name or len(name) > 255 or not name.isprintable():
        raise InvalidArgumentError("filename must be 1 to 255 printable characters")
    detected = file_type(data, name)
    checked_tags, checked_path = check_tags(tags), check_source_path(source_path)
    key = file_object_key(data, detected, name)
    stores.objects.put_bytes(key, data, detected.content_type)
    job = JobRecord(job_id=uuid.uuid4().hex, kind="file", filename=name, content_type=detected.content_type,
                    object_key=key, tags=checked_tags, source_path=checked_path)  # fmt: skip
    return jobs.create(job)


def start_job(jobs: JobStore, job_id: str) -> JobRecord:
    """Mark the job ``running`` (again, on a retry) and return it; ``invalid_argument`` if it is unknown or ended."""
    job = jobs.get(job_id)
    if job is None:
        raise InvalidArgumentError(f"No such job: {job_id}")
    if job.status in _FINAL:
        raise InvalidArgumentError(f"Job {job_id} has already ended ({job.status.value})")
    if job.status == JobStatus.QUEUED:
        jobs.move(job_id, JobStatus.RUNNING, started_at=utc_now().isoformat())
    return job


def ingest_job(stores: NoteStores, job: JobRecord) -> NoteDocument:
    """Register the document job ``job`` holds (nothing is registered if it fails)."""
    if job.kind == "note":
        return ingest_note(stores, job.text or "", job.tags, title=job.title, source_path=job.source_path)
    if job.object_key is None or job.filename is None:
        raise InvalidArgumentError(f"Job {job.job_id} names no stored file")
    return ingest_file(stores, job.object_key, job.filename, job.tags, source_path=job.source_path)


def complete_job(jobs: JobStore, job_id: str, document: NoteDocument) -> None:
    jobs.move(job_id, JobStatus.COMPLETED, finished_at=utc_now().isoformat(), document_id=str(document.document_id))


def run_job(stores: NoteStores, jobs: JobStore, job_id: str) -> NoteDocument:
    """The whole job without orchestration: ends ``completed`` with its document or ``failed`` with the error."""
    try:
        job = start_job(jobs, job_id)
        document = ingest_job(stores, job)
    except BaseException as exc:
        fail_job(jobs, job_id, exc)
        raise
    complete_job(jobs, job_id, document)
    return document


def fail_job(jobs: JobStore, job_id: str, exc: BaseException) -> None:
    """End the job ``failed`` with ``exc`` as its error (a no-op once it has ended)."""
    error_type = exc.error_type if isinstance(exc, KBError) else "internal"
    message = exc.message if isinstance(exc, KBError) else f"{type(exc).__name__}: {exc}"
    jobs.move(job_id, JobStatus.FAILED, finished_at=utc_now().isoformat(), error=message, error_type=error_type)
    logger.warning("notes.job_failed job_id=%s error_type=%s", job_id, error_type)
