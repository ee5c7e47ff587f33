"""The kb engine's ingestion through Prefect (spec 002): one job, one note or file, one document.

``POST /api/v1/jobs`` queues a job in Redis (``lib.notes.jobs``) and calls ``submit_kb_job``, which starts
``ingest_kb_document`` without waiting: a deployment run on a worker when ``PREFECT_API_URL`` has the
deployment, else a background thread of the service (``flows.submit.submit_flow_run``). The flow marks
the job running, ingests through a task that retries store outages, and ends the job ``completed`` with
the document id or ``failed`` with the error; a run that cannot even start reaches ``fail_job`` through
``on_failure``. Nothing of a failed ingestion stays registered (``lib.notes.ingest``).
"""

from __future__ import annotations

import uuid
from typing import Annotated

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact
from prefect.runtime import flow_run
from pydantic import Field

from flows.common import IO_TASK_OPTIONS, artifact_key, bound_stores, flow_stores, log_event
from flows.submit import submit_flow_run
from lib.composition import Stores
from lib.notes.jobs import DRAIN_ASK_TTL_S, claim_job, complete_job, drain_jobs, fail_job, ingest_job, run_job
from lib.notes.models import DocumentOut, JobRecord, JobStatus, NoteDocument
from lib.notes.stores import NoteStores

FLOW = "kb-document"
KB_DEPLOYMENT = "ingest_kb_document/ingest-kb-document"


@task(name="ingest-kb-document", **IO_TASK_OPTIONS)
def ingest(stores: NoteStores, job: JobRecord) -> NoteDocument:
    """One note or file through ``lib.notes.ingest``; store outages are retried, bad input is not."""
    return ingest_job(stores, job)


@flow(name="ingest_kb_document", validate_parameters=True)
def ingest_kb_document(job_id: Annotated[str, Field(min_length=1, max_length=100)]) -> DocumentOut | None:
    """Ingest the note or file queued as a kb job (the job ends completed with its document, or failed), then
    the other queued jobs; ``None`` when another run had already taken this one.

    Args:
        job_id: The job id POST /api/v1/jobs returned.
    """
    all_stores = flow_stores()
    stores = all_stores.notes
    jobs = stores.jobs
    jobs.drain_starting()  # before any look at the queue: a job queued after this asks for a run of its own
    runner = flow_run.get_id() or f"local-{uuid.uuid4().hex}"
    document = None
    try:
        job = claim_job(jobs, job_id, runner)
        if job is not None:
            log_event("kb_document.started", job_id=job_id, kind=job.kind, filename=job.filename or "")
            document = ingest(stores, job)
    except BaseException as exc:
        fail_job(jobs, job_id, exc)
        log_event("kb_document.failed", job_id=job_id, error_type=getattr(exc, "error_type", "internal"))
        raise
    if document is None:
        log_event("kb_document.skipped", job_id=job_id, runner=runner)
    else:
        complete_job(jobs, job_id, document)
        create_markdown_artifact(
            f"# kb document {document.document_id}\n\n{document.kind} `{document.filename or document.title or ''}`: "
            f"{document.chunk_count} chunks; tags {', '.join(document.tags) or 'none'}\n",
            key=artifact_key(FLOW, job_id),
            description=f"Ingestion of kb job {job_id}",
        )
        log_event("kb_document.done", job_id=job_id, document_id=document.document_id, chunks=document.chunk_count)
    drained = drain_jobs(jobs, runner, lambda queued: ingest(stores, queued))
    if drained:
        log_event("kb_document.drained", runner=runner, jobs=drained)
    left = jobs.oldest(JobStatus.QUEUED, 1)
    if left:  # the drain stopped at its bounds: the jobs whose runs were folded into this one get another
        log_event("kb_document.drain_continues", runner=runner, job_id=left[0])
        submit_kb_job(all_stores, left[0])
    return DocumentOut.of(document) if document is not None else None


def submit_queued_job(stores: Stores, job_id: str) -> JobStatus:
    """Start a queued job's ingestion (``submit_kb_job``) and return the job's status after it: a run that could
    not even be submitted ends the job ``failed`` with the reason."""
    try:
        submit_kb_job(stores, job_id)
    except Exception as exc:
        fail_job(stores.notes.jobs, job_id, exc)
    current = stores.notes.jobs.get(job_id)
    return current.status if current is not None else JobStatus.FAILED


def submit_kb_job(stores: Stores, job_id: str) -> str:
    """Start ``ingest_kb_document`` for a queued job without waiting; the flow run id (or ``local-...``, or
    ``folded`` when a run already asked for on the worker will drain it).
    Whatever stops the run before it ends the job leaves the job ``failed`` with the error."""
    jobs = stores.notes.jobs
    if stores.settings.jobs.prefect_api_url and not jobs.ask_drain(DRAIN_ASK_TTL_S):
        # A run asked for has not started yet; it drains this job too. One run per burst, not one per note
        # (each a process on the worker, most of which would find their job already ended).
        log_event("kb_document.folded", job_id=job_id)
        return "folded"

    def on_failure(exc: BaseException) -> None:
        fail_job(jobs, job_id, exc)

    def without_orchestration() -> None:
        run_job(stores.notes, jobs, job_id)

    with bound_stores(stores):
        return submit_flow_run(
            stores.settings,
            KB_DEPLOYMENT,
            ingest_kb_document,
            {"job_id": job_id},
            on_failure=on_failure,
            without_orchestration=without_orchestration,
        )
