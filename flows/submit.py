"""Start an ingestion or reindex without waiting for it: what the service's upload and reindex routes call.

With ``PREFECT_API_URL`` set and the deployment registered there, the run goes to the deployment's work
pool (``run_deployment(..., timeout=0)``) and its flow run id comes back. Otherwise (the embedded
default, or a server without the deployment) the flow runs in a background thread of this process and
a generated ``local-...`` id comes back. Either way ``lib.policies.ingest`` records progress on the revision in
Redis, so a status reader in any process sees it.

If the background flow cannot even start because the Prefect API is unreachable, the same ``lib``
pipeline runs without orchestration: an upload must not wait for the orchestrator.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import uuid
from collections.abc import Callable
from typing import cast

import httpx
from prefect.client.schemas.objects import FlowRun
from prefect.deployments import run_deployment
from prefect.exceptions import ObjectNotFound, PrefectHTTPStatusError
from prefect.settings import PREFECT_API_URL, temporary_settings

from flows.common import bound_kb
from flows.ingest import ingest_policy_revision
from flows.reindex import reindex_policy_revision
from lib.config import Settings
from lib.errors import KBError
from lib.kb import KnowledgeBase, open_kb
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

_ORCHESTRATOR_ERRORS = (httpx.HTTPError, PrefectHTTPStatusError)


def submit_ingestion(settings: Settings, source: str, revision_id: str, *, reindex: bool = False) -> str:
    """Start ingesting (or, with ``reindex``, rebuilding) a registered revision; return the job id.

    The revision must exist. A reindex that would be refused (the revision is ``processing``) raises
    ``CannotReindexError`` here, before anything is submitted, so the caller can answer 409 at once.
    """
    registry = PolicyRegistry(redis_client(settings))
    if reindex:
        check_reindexable(registry, source, revision_id)
    else:
        registry.get_revision(source, revision_id)
    deployment = REINDEX_DEPLOYMENT if reindex else INGEST_DEPLOYMENT
    if settings.prefect_api_url:
        flow_run_id = _submit_to_deployment(settings.prefect_api_url, deployment, source, revision_id)
        if flow_run_id is not None:
            return flow_run_id
    return _run_in_background(settings, source, revision_id, reindex=reindex)


def _submit_to_deployment(api_url: str, deployment: str, source: str, revision_id: str) -> str | None:
    """The flow run id, or None when the server is unreachable or does not have the deployment."""
    try:
        with temporary_settings({PREFECT_API_URL: api_url}):
            run = _run_deployment_sync(
                deployment,
                parameters={"source": source, "revision_id": revision_id},
                timeout=0,
                as_subflow=False,
                tags=["policy-kb", "submitted"],
                _sync=True,  # the sync client even when called from a coroutine of the service
            )
    except ObjectNotFound:
        logger.warning("submit.no_deployment deployment=%s: running in-process instead", deployment)
        return None
    except _ORCHESTRATOR_ERRORS as exc:
        logger.warning("submit.prefect_unreachable deployment=%s error=%s: running in-process instead", deployment, exc)
        return None
    logger.info(
        "submit.deployment deployment=%s source=%s revision_id=%s flow_run_id=%s",
        deployment, source, revision_id, run.id,
    )  # fmt: skip
    return str(run.id)


def _run_in_background(settings: Settings, source: str, revision_id: str, *, reindex: bool) -> str:
    job_id = f"{LOCAL_PREFIX}{uuid.uuid4().hex}"
    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run,
        args=(_run_job, settings, job_id, source, revision_id, reindex),
        name=f"policy-kb-{job_id}",
        daemon=True,
    )
    thread.start()
    logger.info("submit.background job_id=%s source=%s revision_id=%s reindex=%s", job_id, source, revision_id, reindex)
    return job_id


def _run_job(settings: Settings, job_id: str, source: str, revision_id: str, reindex: bool) -> None:
    """The body of a background job. Failures are already on the revision; here they are only logged."""
    kb = open_kb(settings)
    flow = reindex_policy_revision if reindex else ingest_policy_revision
    try:
        with bound_kb(kb):
            flow.with_options(flow_run_name=job_id)(source=source, revision_id=revision_id)
    except _ORCHESTRATOR_ERRORS as exc:
        if not reindex and kb.registry.get_revision(source, revision_id).resolvable:
            logger.warning("submit.orchestrator_error_after_ingestion job_id=%s error=%s", job_id, exc)
            return
        logger.warning("submit.orchestrator_unavailable job_id=%s error=%s: running the pipeline directly", job_id, exc)
        _run_without_orchestration(kb, job_id, source, revision_id, reindex)
    except Exception as exc:
        logger.warning(
            "submit.job_failed job_id=%s source=%s revision_id=%s error=%s",
            job_id, source, revision_id, getattr(exc, "error_type", type(exc).__name__),
        )  # fmt: skip


def _run_without_orchestration(kb: KnowledgeBase, job_id: str, source: str, revision_id: str, reindex: bool) -> None:
    try:
        if reindex:
            reindex_revision(kb, source, revision_id)
        else:
            ingest_revision(kb, source, revision_id)
    except KBError as exc:
        logger.warning("submit.job_failed job_id=%s error_type=%s", job_id, exc.error_type)
