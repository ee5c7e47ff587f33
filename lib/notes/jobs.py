"""The lifecycle of a kb ingestion job: queued with its input checked, then started, ingested and ended.

Every runner (the Prefect flow ``ingest_kb_document``, in the background or on a worker, and ``run_job``
without orchestration) composes a start (``start_job``, or ``claim_job`` for a runner that may also take
other jobs), ``ingest_job`` and ``complete_job``/``fail_job``, so a job ends ``completed`` with its document
or ``failed`` with the error, whatever happens. A flow run that has loaded the encoder then ingests the
backlog (``drain_jobs``): a burst of notes costs one process, not one each. The records are in Redis
(``lib.notes.job_store``).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable

from lib.errors import InvalidArgumentError, KBError
from lib.notes.ingest import check_note_text, check_title, file_object_key, file_type, ingest_file, ingest_note
from lib.notes.job_store import DEFAULT_LIST, MAX_LIST, JobStore
from lib.notes.models import JobRecord, JobStatus, NoteDocument, utc_now
from lib.notes.registry import check_source_path, check_tags
from lib.notes.stores import NoteStores

__all__ = [
    "DEFAULT_LIST",
    "DRAIN_ASK_TTL_S",
    "DRAIN_MAX_JOBS",
    "JOB_LEASE_S",
    "MAX_LIST",
    "QUEUE_WAIT_S",
    "JobStore",
    "claim_job",
    "complete_job",
    "drain_jobs",
    "fail_job",
    "ingest_job",
    "new_file_job",
    "new_note_job",
    "run_job",
    "stale_claims",
    "start_job",
    "take_over_stale",
]

logger = logging.getLogger(__name__)

_FINAL = (JobStatus.COMPLETED, JobStatus.FAILED)

JOB_LEASE_S = 900.0
"""How long a runner's claim on a job holds. A runner that died holding one leaves the job ``running``; past
the lease another run may take it over (``stale_claims`` finds them for the cleanup flow to resubmit). Longer
than any one ingestion: a file at the upload limit takes a few minutes."""
QUEUE_WAIT_S = 300.0
"""A job still queued after this long has no run coming (the one asked for never started): the cleanup flow
takes it (``take_over_stale``)."""
DRAIN_ASK_TTL_S = 600
"""How long an ask for a drain run stands (``JobStore.ask_drain``) if that run never starts."""
DRAIN_MAX_JOBS = 200
DRAIN_MAX_SECONDS = 120.0
"""Bounds of one run's drain, so a run ends and the queue's other work gets its turn."""


def new_note_job(
    jobs: JobStore, text: str, tags: list[str], *, title: str | None = None, source_path: str | None = None
) -> JobRecord:
    """Queue a note (checked now, so bad input is refused rather than failing later)."""
    job = JobRecord(
        job_id=uuid.uuid4().hex,
        kind="note",
        text=check_note_text(text),
        tags=check_tags(tags),
        title=check_title(title),
        source_path=check_source_path(source_path),
    )
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
    job = JobRecord(
        job_id=uuid.uuid4().hex,
        kind="file",
        filename=name,
        content_type=detected.content_type,
        object_key=key,
        tags=checked_tags,
        source_path=checked_path,
    )
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


def claim_job(jobs: JobStore, job_id: str, runner: str, lease_s: float = JOB_LEASE_S) -> JobRecord | None:
    """The job, claimed for ``runner`` (queued, its own retry, or a claim past its lease); ``None`` when another
    runner holds it or it has ended (another run's drain took it); ``invalid_argument`` if it is unknown."""
    outcome, previous = jobs.claim(job_id, runner, lease_s, now=time.time(), started_at=utc_now().isoformat())
    if outcome == "missing":
        raise InvalidArgumentError(f"No such job: {job_id}")
    if outcome != "claimed":
        logger.info(
            "notes.job_not_claimed job_id=%s runner=%s outcome=%s holder=%s", job_id, runner, outcome, previous or "-"
        )
        return None
    if previous and previous != runner:
        logger.warning("notes.job_taken_over job_id=%s runner=%s from=%s", job_id, runner, previous)
    return jobs.get(job_id)


def drain_jobs(
    jobs: JobStore,
    runner: str,
    ingest: Callable[[JobRecord], NoteDocument],
    *,
    max_jobs: int = DRAIN_MAX_JOBS,
    max_seconds: float = DRAIN_MAX_SECONDS,
) -> int:
    """Claim and ingest queued jobs, oldest first, until none is left or a bound is reached; how many ran.
    Each ends ``completed`` or ``failed`` on its own: one bad file does not stop the others. Their own runs,
    when they come, find them ended and stop."""
    deadline = time.monotonic() + max_seconds
    ran = 0
    while True:
        progressed = False
        for job_id in jobs.oldest(JobStatus.QUEUED, 10):
            if ran >= max_jobs or time.monotonic() >= deadline:
                return ran
            job = claim_job(jobs, job_id, runner)  # one at a time: a runner that dies holds one job, not ten
            if job is None:
                continue
            progressed = True
            _finish(jobs, job, ingest)
            ran += 1
        if not progressed:
            return ran


def stale_claims(jobs: JobStore, lease_s: float = JOB_LEASE_S, *, limit: int = MAX_LIST) -> list[str]:
    """Running jobs whose runner's claim is past its lease: the runner died holding them."""
    now = time.time()
    return [job_id for job_id, claimed_at in jobs.claims(JobStatus.RUNNING, limit) if now - claimed_at >= lease_s]


def take_over_stale(
    jobs: JobStore, runner: str, ingest: Callable[[JobRecord], NoteDocument], lease_s: float = JOB_LEASE_S
) -> int:
    """Claim and ingest the jobs whose runner died holding them (``stale_claims``) and those queued for longer
    than ``QUEUE_WAIT_S`` (no run is coming for them); how many ran."""
    ran = 0
    waiting = jobs.queued_before(time.time() - QUEUE_WAIT_S, MAX_LIST)
    for job_id in [*stale_claims(jobs, lease_s), *waiting]:
        job = claim_job(jobs, job_id, runner, lease_s)
        if job is not None:
            _finish(jobs, job, ingest)
            ran += 1
    return ran


def _finish(jobs: JobStore, job: JobRecord, ingest: Callable[[JobRecord], NoteDocument]) -> None:
    """Ingest a claimed job and end it either way: its own failure is recorded, not raised."""
    try:
        document = ingest(job)
    except Exception as exc:
        fail_job(jobs, job.job_id, exc)
    else:
        complete_job(jobs, job.job_id, document)


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
