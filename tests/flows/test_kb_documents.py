"""The ``ingest_kb_document`` flow under the session's Prefect harness, over real Redis, Chroma and the model:
a job ends completed with its document or failed with the error, and ``submit_kb_job`` runs it unattended."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from flows.common import bound_stores
from flows.kb_documents import ingest_kb_document, submit_kb_job
from lib.composition import Stores, open_stores
from lib.config import Settings
from lib.errors import FileNotFoundInStoreError
from lib.notes.jobs import new_file_job, new_note_job
from lib.notes.models import JobStatus
from tests.polling import eventually


@pytest.fixture
def notes_kb(settings: Settings, redis_client: object) -> Iterator[Stores]:
    settings.files.allowed_roots[0].mkdir(parents=True, exist_ok=True)
    stores = open_stores(settings.replace(kb_collection=f"kb_flows_{uuid.uuid4().hex[:12]}"))
    with bound_stores(stores):
        yield stores


def test_the_flow_ingests_a_queued_note_and_completes_its_job(notes_kb: Stores) -> None:
    jobs = notes_kb.notes.jobs
    job = new_note_job(jobs, "Remember: the user's timezone is Europe/London.", ["collection:memory"])
    document = ingest_kb_document(job_id=job.job_id)
    done = jobs.get(job.job_id)
    assert done is not None and done.status == JobStatus.COMPLETED and done.document_id == document.document_id
    assert done.text is None and done.finished_at is not None
    assert notes_kb.notes.registry.require(document.document_id).tags == ["collection:memory"]


def test_a_job_whose_file_is_gone_ends_failed_with_the_error(notes_kb: Stores) -> None:
    jobs = notes_kb.notes.jobs
    job = new_file_job(notes_kb.notes, jobs, b"Plain text about tides.\n", "tides.txt", [])
    assert job.object_key is not None
    notes_kb.objects.delete(job.object_key)
    with pytest.raises(FileNotFoundInStoreError):
        ingest_kb_document(job_id=job.job_id)
    failed = jobs.get(job.job_id)
    assert failed is not None and failed.status == JobStatus.FAILED and failed.document_id is None
    assert failed.error_type == "file_not_found" and failed.error
    assert notes_kb.notes.registry.counts()["documents"] == 0


def test_submitted_jobs_run_in_the_background_and_end_either_way(notes_kb: Stores) -> None:
    jobs = notes_kb.notes.jobs
    good = new_note_job(jobs, "Tide tables are published monthly.", [])
    bad = new_file_job(notes_kb.notes, jobs, b"Plain text about currents.\n", "currents.txt", [])
    assert bad.object_key is not None
    notes_kb.objects.delete(bad.object_key)
    for job in (good, bad):
        submit_kb_job(notes_kb, job.job_id)

    def statuses() -> list[JobStatus | None]:
        return [record.status if (record := jobs.get(job.job_id)) else None for job in (good, bad)]

    eventually(lambda: all(s in (JobStatus.COMPLETED, JobStatus.FAILED) for s in statuses()), within=120, every=0.1)
    assert statuses() == [JobStatus.COMPLETED, JobStatus.FAILED]
