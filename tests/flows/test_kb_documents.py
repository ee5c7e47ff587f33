"""The ``ingest_kb_document`` flow under the session's Prefect harness, over real Redis, Chroma and the model:
a job ends completed with its document or failed with the error, and ``submit_kb_job`` runs it unattended."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from flows.common import bound_stores
from flows.kb_documents import ingest_kb_document, submit_kb_job
from flows.kb_uploads import cleanup_kb_uploads
from lib.composition import Stores, open_stores
from lib.config import Settings
from lib.errors import FileNotFoundInStoreError
from lib.notes.jobs import JOB_LEASE_S, QUEUE_WAIT_S, claim_job, new_file_job, new_note_job, stale_claims
from lib.notes.models import JobRecord, JobStatus
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


def test_a_run_drains_the_backlog_each_job_ending_on_its_own_and_later_runs_stop_at_once(notes_kb: Stores) -> None:
    """One process per note spent seconds loading the encoder for milliseconds of work: the first run takes the
    queued jobs too. A bad one fails alone; a job's own run, coming later, finds it ended and ingests nothing."""
    jobs = notes_kb.notes.jobs
    first = new_note_job(jobs, "Bins are collected on Tuesdays.", [])
    bad = new_file_job(notes_kb.notes, jobs, b"Plain text about gulls.\n", "gulls.txt", [])
    assert bad.object_key is not None
    notes_kb.objects.delete(bad.object_key)
    later = [new_note_job(jobs, f"Recycling note {i}: glass goes in the blue box.", []) for i in range(3)]
    document = ingest_kb_document(job_id=first.job_id)
    assert document is not None
    records = {job.job_id: jobs.get(job.job_id) for job in (first, bad, *later)}
    assert {job_id: r.status if r else None for job_id, r in records.items()} == {
        first.job_id: JobStatus.COMPLETED,
        bad.job_id: JobStatus.FAILED,
        **{job.job_id: JobStatus.COMPLETED for job in later},
    }
    assert notes_kb.notes.registry.counts()["documents"] == 4
    assert ingest_kb_document(job_id=later[0].job_id) is None
    assert notes_kb.notes.registry.counts()["documents"] == 4
    again = jobs.get(later[0].job_id)
    assert again is not None and again.document_id == records[later[0].job_id].document_id  # type: ignore[union-attr]


def test_a_job_another_live_runner_holds_is_left_to_it_and_a_dead_runners_is_taken_over(notes_kb: Stores) -> None:
    jobs = notes_kb.notes.jobs
    held = new_note_job(jobs, "Parking permits renew in April.", [])
    assert claim_job(jobs, held.job_id, "runner-alive") is not None
    assert ingest_kb_document(job_id=held.job_id) is None
    record = jobs.get(held.job_id)
    assert record is not None and record.status == JobStatus.RUNNING and record.document_id is None
    assert notes_kb.notes.registry.counts()["documents"] == 0 and stale_claims(jobs) == []

    dead = new_note_job(jobs, "Street lights are repaired within five days.", [])
    past = time.time() - JOB_LEASE_S - 1
    assert jobs.claim(dead.job_id, "runner-dead", JOB_LEASE_S, now=past, started_at="2026-01-01T00:00:00+00:00")[0] == (
        "claimed"
    )
    assert stale_claims(jobs) == [dead.job_id]
    assert ingest_kb_document(job_id=dead.job_id) is not None
    record = jobs.get(dead.job_id)
    assert record is not None and record.status == JobStatus.COMPLETED
    assert notes_kb.notes.registry.counts()["documents"] == 1  # the live runner's job was not taken


def test_the_cleanup_flow_ingests_a_job_whose_runner_died(notes_kb: Stores) -> None:
    jobs = notes_kb.notes.jobs
    dead = new_note_job(jobs, "Allotment waiting lists reopen in March.", [])
    jobs.claim(dead.job_id, "runner-dead", JOB_LEASE_S, now=time.time() - JOB_LEASE_S - 1, started_at="2026-01-01")
    cleanup_kb_uploads()
    record = jobs.get(dead.job_id)
    assert record is not None and record.status == JobStatus.COMPLETED, record.error
    assert notes_kb.notes.registry.counts()["documents"] == 1


def test_a_burst_asks_for_one_run_and_a_run_that_starts_lets_the_next_job_ask_again(notes_kb: Stores) -> None:
    """With a worker, a job whose drain run has been asked for and not yet started folds into that run rather
    than making a process of its own; the run, starting, clears the ask, so a job queued after it asks again."""
    on_worker = Stores(notes_kb.settings.replace(prefect_api_url="http://127.0.0.1:9/api"), notes=notes_kb.notes)
    jobs = notes_kb.notes.jobs
    assert jobs.ask_drain(60)  # a run has been asked for and has not started
    folded = new_note_job(jobs, "Council tax bands were revalued in 1991.", [])
    assert submit_kb_job(on_worker, folded.job_id) == "folded"
    record = jobs.get(folded.job_id)
    assert record is not None and record.status == JobStatus.QUEUED

    ingest_kb_document(job_id=folded.job_id)  # the run asked for: it starts, takes the job, clears the ask
    record = jobs.get(folded.job_id)
    assert record is not None and record.status == JobStatus.COMPLETED
    assert jobs.ask_drain(60)
    jobs.drain_starting()


def test_the_cleanup_flow_takes_a_job_left_queued_with_no_run_coming(notes_kb: Stores) -> None:
    jobs = notes_kb.notes.jobs
    created = datetime.now(UTC) - timedelta(seconds=QUEUE_WAIT_S + 60)
    stranded = jobs.create(
        JobRecord(job_id=uuid.uuid4().hex, kind="note", text="Bus passes renew yearly.", created_at=created)
    )
    fresh = new_note_job(jobs, "Library hours change in summer.", [])
    cleanup_kb_uploads()
    ended, waiting = jobs.get(stranded.job_id), jobs.get(fresh.job_id)
    assert ended is not None and ended.status == JobStatus.COMPLETED
    assert waiting is not None and waiting.status == JobStatus.QUEUED  # its own run is coming: left to it
