"""``flows.submit``: ``submit_flow_run`` and, on top of it, ``submit_ingestion`` (what the service's
upload and reindex routes call).

In-process (no ``PREFECT_API_URL``, or a server without the deployment) the flow runs in a background
thread and progress shows on the revision in Redis; with the deployment registered on a server the
call only creates a flow run for a worker and returns its id. A background run that cannot start, or
dies before the flow records its failure, still ends with the failure recorded (``on_failure``).
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import uuid
from collections.abc import Callable

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterName
from prefect.exceptions import ObjectNotFound
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import PREFECT_API_URL, temporary_settings

from flows.ingest import ingest_policy_revision
from flows.submit import (
    INGEST_DEPLOYMENT,
    LOCAL_PREFIX,
    REINDEX_DEPLOYMENT,
    finish_background_jobs,
    submit_flow_run,
    submit_ingestion,
)
from lib.composition import Stores
from lib.config import Settings
from lib.errors import CannotReindexError, RevisionNotFoundError
from lib.policies.lifecycle import register_revision
from lib.policies.models import Revision, RevisionCreate, RevisionStatus
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.polling import eventually

WAIT_S = 90


def wait_for(stores: Stores, revision_id: str, done: Callable[[Revision], bool]) -> Revision:
    def finished() -> Revision | None:
        revision = stores.policies.registry.get_revision("NPPF", revision_id)
        return revision if done(revision) else None

    return eventually(finished, within=WAIT_S, every=0.1, what=f"{revision_id} finishing")


@pytest.fixture
def registered(flow_stores: Stores, make_policy: Callable[..., str]) -> str:
    """A revision registered the way the REST upload does it: stored and ``processing``, not ingested."""
    make_policy()
    created = register_revision(
        flow_stores.policies,
        "NPPF",
        RevisionCreate(version_label="December 2024", effective_from="2024-12-12"),
        policy_pdf_bytes(),
    )
    return created.revision.revision_id


def test_without_a_prefect_server_the_ingestion_runs_in_a_background_thread_and_reports_progress_in_redis(
    flow_stores: Stores, flow_settings: Settings, registered: str
) -> None:
    job_id = submit_ingestion(flow_settings, "NPPF", registered)

    assert job_id.startswith(LOCAL_PREFIX)
    done = wait_for(flow_stores, registered, lambda r: r.progress_phase == "done" or r.status == RevisionStatus.FAILED)
    assert done.status == RevisionStatus.ACTIVE and done.progress_percent == 100.0
    assert flow_stores.policies.vectors.count_revision("NPPF", registered) == done.chunk_count == 6
    with get_client(sync_client=True) as client:
        runs = client.read_flow_runs(flow_run_filter=FlowRunFilter(name=FlowRunFilterName(any_=[job_id])))
    assert [run.name for run in runs] == [job_id], "the background job is a flow run named after the job"


def test_a_reindex_of_a_processing_revision_is_refused_before_anything_is_submitted(
    flow_settings: Settings, registered: str
) -> None:
    with pytest.raises(CannotReindexError):
        submit_ingestion(flow_settings, "NPPF", registered, reindex=True)
    with pytest.raises(RevisionNotFoundError):
        submit_ingestion(flow_settings, "NPPF", "rev_NPPF_1999_01")


def test_a_server_without_the_deployment_falls_back_to_the_background_thread(
    flow_stores: Stores, flow_settings: Settings, make_policy: Callable[..., str], prefect_api: str
) -> None:
    make_policy()
    flow_stores.objects.put_bytes("uploads/nppf.pdf", policy_pdf_bytes())
    ingest_policy_revision(source="NPPF", version_label="2024", effective_from="2024-12-12", file="uploads/nppf.pdf")
    before = flow_stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    # The session's server may hold the deployment (the fault tests' worker deploys them all).
    with get_client(sync_client=True) as client, contextlib.suppress(ObjectNotFound):
        client.delete_deployment(client.read_deployment_by_name(REINDEX_DEPLOYMENT).id)

    job_id = submit_ingestion(
        flow_settings.replace(prefect_api_url=prefect_api), "NPPF", "rev_NPPF_2024_12", reindex=True
    )

    assert job_id.startswith(LOCAL_PREFIX)
    done = wait_for(flow_stores, "rev_NPPF_2024_12", lambda r: r.ingested_at != before.ingested_at)
    assert done.status == RevisionStatus.ACTIVE and done.chunk_count == before.chunk_count


def test_with_the_deployment_on_the_server_a_flow_run_is_created_for_a_worker_even_from_a_coroutine(
    flow_settings: Settings, registered: str, prefect_api: str
) -> None:
    deployment_id = ingest_policy_revision.to_deployment(
        name=INGEST_DEPLOYMENT.split("/")[1], tags=[f"test-{uuid.uuid4().hex[:8]}"]
    ).apply()
    try:
        settings = flow_settings.replace(prefect_api_url=prefect_api)

        async def from_a_request_handler() -> str:
            return submit_ingestion(settings, "NPPF", registered)

        flow_run_id = asyncio.run(from_a_request_handler())

        with get_client(sync_client=True) as client:
            run = client.read_flow_run(uuid.UUID(flow_run_id))
        assert run.deployment_id == deployment_id
        assert run.parameters == {"source": "NPPF", "revision_id": registered}
        assert run.state is not None and run.state.is_scheduled()
    finally:
        with get_client(sync_client=True) as client:
            client.delete_deployment(deployment_id)


@flow(name="submit_probe", validate_parameters=True)
def submit_probe(count: int) -> int:
    return count * 2


RELEASE = threading.Event()


@flow(name="held_probe")
def held_probe() -> None:
    RELEASE.wait(WAIT_S)


def test_a_stopping_service_gives_running_jobs_their_grace_and_says_how_many_it_cut_off(
    flow_settings: Settings,
) -> None:
    """``finish_background_jobs`` (a service's shutdown) waits for jobs up to its grace, then returns."""
    RELEASE.clear()
    failures: list[BaseException] = []
    submit_flow_run(flow_settings, "held_probe/none", held_probe, {}, on_failure=failures.append)

    cut_off = finish_background_jobs(0.5)
    RELEASE.set()
    after_release = finish_background_jobs(WAIT_S)

    assert (cut_off, after_release, failures) == (1, 0, [])


def test_a_flow_run_refused_before_its_body_runs_reaches_on_failure(flow_settings: Settings) -> None:
    failures: list[BaseException] = []

    job_id = submit_flow_run(
        flow_settings, "submit_probe/none", submit_probe, {"count": "not a number"}, on_failure=failures.append
    )

    assert job_id.startswith(LOCAL_PREFIX)
    eventually(lambda: bool(failures), within=WAIT_S)
    assert "count" in str(failures[0])


def test_when_prefects_local_api_cannot_start_the_ingestion_runs_without_it_and_no_server_is_left(
    flow_stores: Stores, flow_settings: Settings, registered: str
) -> None:
    """The embedded default (no API URL) with a start-up time no server can meet: every attempt fails, and the
    ingestion runs without Prefect (issue 46: the revision was left failed, and only MCP could retry it)."""
    flow_settings.jobs.local_api_start_timeout_seconds = 0.001
    harness = SubprocessASGIServer._instances.pop(None)
    try:
        with temporary_settings(restore_defaults={PREFECT_API_URL}):
            job_id = submit_ingestion(flow_settings, "NPPF", registered)
        done = wait_for(flow_stores, registered, lambda r: r.status != RevisionStatus.PROCESSING)
        left = SubprocessASGIServer._instances.get(None)
    finally:
        SubprocessASGIServer._instances[None] = harness

    assert job_id.startswith(LOCAL_PREFIX)
    assert (done.status, done.error) == (RevisionStatus.ACTIVE, "")
    assert flow_stores.policies.vectors.count_revision("NPPF", registered) == done.chunk_count > 0
    assert left is None or left.server_process is None, "the servers that missed their start-up were stopped"
