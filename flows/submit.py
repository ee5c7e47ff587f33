"""Start a flow run without waiting for it: what the service's upload and reindex routes call.

``submit_flow_run`` is the one way in. With ``PREFECT_API_URL`` set and the deployment registered there,
the run goes to the deployment's work pool (``run_deployment(..., timeout=0)``) and its flow run id comes
back. Otherwise (the embedded default, or a server without the deployment) the flow runs in a background
thread of this process and a generated ``local-...`` id comes back. Progress lives where the flow writes
it (for a policy revision, on the revision in Redis), so a status reader in any process sees it.

A background run reports every failure it cannot leave to the flow: the flow run not being created,
parameters refused before the flow body runs, a crash of the engine; and Prefect's local API not starting,
unless ``without_orchestration`` is given (an ingestion's is): then that runs instead, so a temporary server
that cannot start under load (``flows.local_api``) never fails the work it was only to record.
The caller's ``on_failure`` records it (a revision ends ``failed`` with the error); it is also called
after failures the flow itself recorded, so it must leave an already-recorded failure alone.

If the Prefect API is unreachable once the run is under way and the caller gave ``without_orchestration``,
that runs instead (the same ``lib`` pipeline, no Prefect): an upload must not wait for the orchestrator.

``finish_background_jobs`` is what a stopping service calls: it gives the running background jobs a grace
period, then stops Prefect's temporary local API the jobs started. In that order, because a job still
reporting its final state would otherwise start the temporary server again as the process goes.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
import uuid
from collections.abc import Callable
from typing import Any, cast

import httpx
from prefect import Flow
from prefect.client.schemas.objects import FlowRun
from prefect.deployments import run_deployment
from prefect.exceptions import ObjectNotFound, PrefectHTTPStatusError
from prefect.settings import PREFECT_API_URL, temporary_settings

from flows.common import bound_stores
from flows.ingest import ingest_policy_revision, settle_failure
from flows.local_api import ensure_local_api, stop_local_api
from flows.reindex import reindex_policy_revision
from lib.composition import open_stores
from lib.config import Settings
from lib.policies.ingest import ingest_revision
from lib.policies.registry import PolicyRegistry
from lib.policies.reindex import check_reindexable, reindex_revision
from lib.stores.redis_server import redis_client

_run_deployment_sync = cast(Callable[..., FlowRun], run_deployment)
"""``run_deployment`` typed for its ``_sync=True`` form (Prefect's dispatcher returns the run, not a coroutine)."""

logger = logging.getLogger(__name__)

INGEST_DEPLOYMENT = "ingest_policy_revision/ingest-policy-revision"
REINDEX_DEPLOYMENT = "reindex_policy_revision/reindex-policy-revision"
LOCAL_PREFIX = "local-"

ORCHESTRATOR_ERRORS = (httpx.HTTPError, PrefectHTTPStatusError)
"""The Prefect API failing to answer: the work itself may still be fine."""

OnFailure = Callable[[BaseException], None]

_running: set[threading.Thread] = set()
_running_lock = threading.Lock()


def submit_flow_run(
    settings: Settings,
    deployment: str,
    flow: Flow[..., Any],
    parameters: dict[str, Any],
    *,
    on_failure: OnFailure,
    without_orchestration: Callable[[], object] | None = None,
) -> str:
    """Start ``flow`` with ``parameters``; return the job id (a flow run id, or ``local-...``).

    ``deployment`` is ``flow_name/deployment_name`` on the server of ``settings.jobs.prefect_api_url``.
    ``on_failure(exc)`` is called from the background thread whenever the run cannot start or ends in
    an exception; it must be idempotent. Nothing here raises for a failure of the run itself.
    """
    if settings.jobs.prefect_api_url:
        flow_run_id = _submit_to_deployment(settings.jobs.prefect_api_url, deployment, parameters)
        if flow_run_id is not None:
            return flow_run_id
    return _run_in_background(
        flow, parameters, on_failure, without_orchestration, settings.jobs.local_api_start_timeout_seconds
    )


def submit_ingestion(settings: Settings, source: str, revision_id: str, *, reindex: bool = False) -> str:
    """Start ingesting (or, with ``reindex``, rebuilding) a registered revision; return the job id.

    The revision must exist. A reindex that would be refused (the revision is ``processing``) raises
    ``CannotReindexError`` here, before anything is submitted, so the caller can answer 409 at once.
    Whatever stops the run before the flow records it leaves the revision ``failed`` with the error.
    """
    registry = PolicyRegistry(redis_client(settings))
    if reindex:
        check_reindexable(registry, source, revision_id)
    else:
        registry.get_revision(source, revision_id)
    stores = open_stores(settings)

    def on_failure(exc: BaseException) -> None:
        error = settle_failure(stores.policies, source, revision_id, exc)
        logger.warning("submit.job_failed source=%s revision_id=%s error=%s", source, revision_id, error)

    def without_orchestration() -> None:
        if reindex:
            reindex_revision(stores.policies, source, revision_id)
        elif not stores.policies.registry.get_revision(source, revision_id).resolvable:
            ingest_revision(stores.policies, source, revision_id)

    with bound_stores(stores):  # the background thread copies this context, so its flow works on ``stores``
        return submit_flow_run(
            settings,
            REINDEX_DEPLOYMENT if reindex else INGEST_DEPLOYMENT,
            reindex_policy_revision if reindex else ingest_policy_revision,
            {"source": source, "revision_id": revision_id},
            on_failure=on_failure,
            without_orchestration=without_orchestration,
        )


def _submit_to_deployment(api_url: str, deployment: str, parameters: dict[str, Any]) -> str | None:
    """The flow run id, or None when the server is unreachable or does not have the deployment."""
    try:
        with temporary_settings({PREFECT_API_URL: api_url}):
            run = _run_deployment_sync(
                deployment,
                parameters=parameters,
                timeout=0,
                as_subflow=False,
                tags=["policy-kb", "submitted"],
                _sync=True,  # the sync client even when called from a coroutine of the service
            )
    except ObjectNotFound:
        logger.warning("submit.no_deployment deployment=%s: running in-process instead", deployment)
        return None
    except ORCHESTRATOR_ERRORS as exc:
        logger.warning("submit.prefect_unreachable deployment=%s error=%s: running in-process instead", deployment, exc)
        return None
    logger.info("submit.deployment deployment=%s flow_run_id=%s", deployment, run.id)
    return str(run.id)


def _run_in_background(
    flow: Flow[..., Any],
    parameters: dict[str, Any],
    on_failure: OnFailure,
    without_orchestration: Callable[[], object] | None,
    start_timeout_s: float,
) -> str:
    job_id = f"{LOCAL_PREFIX}{uuid.uuid4().hex}"
    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run,
        args=(_run_job, job_id, flow, parameters, on_failure, without_orchestration, start_timeout_s),
        name=f"policy-kb-{job_id}",
        daemon=True,
    )
    with _running_lock:
        _running.add(thread)
    thread.start()
    logger.info("submit.background job_id=%s flow=%s", job_id, flow.name)
    return job_id


def _run_job(
    job_id: str,
    flow: Flow[..., Any],
    parameters: dict[str, Any],
    on_failure: OnFailure,
    without_orchestration: Callable[[], object] | None,
    start_timeout_s: float,
) -> None:
    """The body of a background job: every way it can end without success reaches ``on_failure``."""
    try:
        try:
            ensure_local_api(start_timeout_s)
        except BaseException as exc:
            logger.warning("submit.local_api_failed job_id=%s error=%r", job_id, exc)
            if without_orchestration is None:
                _report(job_id, on_failure, exc)
            else:
                _run_without_orchestration(job_id, without_orchestration, on_failure)
            return
        try:
            flow.with_options(flow_run_name=job_id)(**parameters)
        except ORCHESTRATOR_ERRORS as exc:
            if without_orchestration is None:
                _report(job_id, on_failure, exc)
                return
            logger.warning("submit.orchestrator_unavailable job_id=%s error=%s: running without Prefect", job_id, exc)
            _run_without_orchestration(job_id, without_orchestration, on_failure)
        except BaseException as exc:  # a thread's last stop: whatever it is, it must reach the job's record
            _report(job_id, on_failure, exc)
    finally:
        with _running_lock:
            _running.discard(threading.current_thread())


def _run_without_orchestration(job_id: str, work: Callable[[], object], on_failure: OnFailure) -> None:
    logger.info("submit.without_orchestration job_id=%s", job_id)
    try:
        work()
    except BaseException as direct:
        _report(job_id, on_failure, direct)


def finish_background_jobs(grace_s: float) -> int:
    """Wait up to ``grace_s`` seconds in all for this process's background jobs to end, then stop Prefect's
    temporary local API if they started it; the number of jobs still running (cut off when the process
    exits: an ingestion is then left to the registry's recovery, as after a crash)."""
    deadline = time.monotonic() + grace_s
    with _running_lock:
        jobs = list(_running)
    for job in jobs:
        job.join(max(0.0, deadline - time.monotonic()))
    running = [job.name for job in jobs if job.is_alive()]
    if running:
        logger.warning("submit.jobs_cut_off count=%d jobs=%s grace_s=%s", len(running), running, grace_s)
    stop_local_api()
    return len(running)


def _report(job_id: str, on_failure: OnFailure, exc: BaseException) -> None:
    try:
        on_failure(exc)
    except Exception as recording:
        logger.error("submit.failure_not_recorded job_id=%s error=%r recording_error=%r", job_id, exc, recording)
