"""A deployment run killed under the Prefect worker: a real process worker on the ``policy-kb`` pool (the
stack's Procfile line: work pool, ``prefect deploy --all``, ``prefect worker start``) runs an ingestion,
and the flow-run process it started is killed (SIGKILL) while embedding, as an OOM kill would. The worker
reports the run ``Crashed``; the revision is left ``processing``, which the audit finds (``stuck_processing``,
with ``PROCESSING_TIMEOUT_SECONDS=0`` here) and repairs (``failed``); a re-run of the deployment completes
it and the audit then finds nothing.

Prefect 3.8 starts each flow run in a session of its own, so a kill of the worker's process group alone
leaves the run going (it completes without the worker); the run's own process is what has to die.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import date
from typing import Any, cast
from urllib.parse import urlsplit

import psutil
import pytest
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import FlowRun, StateType
from prefect.deployments import run_deployment

from deployments.stack.layout import DEFAULT_PORTS, StackLayout
from deployments.stack.ports import free_port
from deployments.stack.process import StackProcess, start_process
from lib.composition import open_stores
from lib.config import Settings
from lib.policies.audit import FindingKind
from lib.policies.audit_repair import audit_and_repair
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCategory, PolicyCreate, RevisionCreate, RevisionStatus
from lib.policies.stores import PolicyStores
from tests.faults.support import SOURCE, AuditOutcome, big_pdf, fault_settings, note
from tests.polling import eventually

DEPLOYMENT = "ingest_policy_revision/ingest-policy-revision"
REVISION = "rev_FAULT_POLICY_2025_02"
RUN_TIMEOUT_S = 240


@pytest.fixture(scope="module")
def worker_stack(
    tmp_path_factory: pytest.TempPathFactory, prefect_api: str
) -> Iterator[tuple[PolicyStores, StackProcess]]:
    """redis-server, ``chroma run`` and a worker on this session's Prefect API, sharing one set of settings."""
    base = tmp_path_factory.mktemp("faults-worker")
    ports = {name: free_port() for name in DEFAULT_PORTS} | {"prefect": int(urlsplit(prefect_api).port or 0)}
    collection = f"faults_{uuid.uuid4().hex[:12]}"
    objects = (base / "objects").as_uri()
    extra = {"CHROMA_POLICY_COLLECTION": collection, "OBJECT_STORE_URL": objects, "ENABLE_OCR": "false"}
    layout = StackLayout((base / "stack").resolve(), ports, extra)
    processes = []
    try:
        for name in ("redis", "chroma", "worker"):
            processes.append(start_process(layout, name))
        settings: Settings = fault_settings(layout, base, policy_collection=collection, object_store_url=objects)
        stores = open_stores(settings).policies
        stores.registry.create_policy(
            PolicyCreate(source=SOURCE, title="Fault policy", category=PolicyCategory.NATIONAL_POLICY)
        )
        yield stores, processes[-1]
    finally:
        for process in reversed(processes):
            process.close()


def flow_run(run_id: Any) -> FlowRun:
    with get_client(sync_client=True) as client:
        return client.read_flow_run(run_id)


def state_of(run_id: Any) -> StateType | None:
    state = flow_run(run_id).state
    return state.type if state else None


def start_run(revision_id: str) -> FlowRun:
    return cast(
        FlowRun,
        run_deployment(DEPLOYMENT, parameters={"source": SOURCE, "revision_id": revision_id}, timeout=0),
    )


def test_a_run_killed_under_the_worker_is_marked_crashed_and_a_rerun_completes_the_revision(
    worker_stack: tuple[PolicyStores, StackProcess],
) -> None:
    stores, worker = worker_stack
    register_revision(
        stores,
        SOURCE,
        RevisionCreate(revision_id=REVISION, version_label="February 2025", effective_from=date(2025, 2, 1)),
        big_pdf("2025"),
    )
    first = start_run(REVISION)
    eventually(
        lambda: stores.registry.get_revision(SOURCE, REVISION).progress_phase == "embed",
        within=RUN_TIMEOUT_S,
        every=0.01,
    )
    assert worker.pid is not None
    run_processes = psutil.Process(worker.pid).children(recursive=True)
    assert run_processes, "the worker runs the flow in a process of its own"
    for process in run_processes:
        process.kill()
    eventually(lambda: state_of(first.id) == StateType.CRASHED, within=60, every=0.2)
    crashed = flow_run(first.id)
    note(
        "crashed", f"{crashed.state.name if crashed.state else None}: {crashed.state.message if crashed.state else ''}"
    )
    assert stores.registry.get_revision(SOURCE, REVISION).status == RevisionStatus.PROCESSING
    assert worker.running(), "the worker outlives the run it started"
    left = AuditOutcome(*audit_and_repair(stores))
    note("audit_after_crash", left.describe())
    assert {(f.kind, f.revision_id) for f in left.before.findings} == {(FindingKind.STUCK_PROCESSING, REVISION)}
    assert left.after.ok, left.describe()
    assert stores.registry.get_revision(SOURCE, REVISION).status == RevisionStatus.FAILED

    second = start_run(REVISION)
    eventually(
        lambda: state_of(second.id) in (StateType.COMPLETED, StateType.FAILED, StateType.CRASHED),
        within=RUN_TIMEOUT_S,
        every=0.5,
    )
    assert state_of(second.id) == StateType.COMPLETED
    done = stores.registry.get_revision(SOURCE, REVISION)
    assert done.status == RevisionStatus.ACTIVE and done.chunk_count > 100
    final = AuditOutcome(*audit_and_repair(stores))
    note("audit_after_rerun", final.describe())
    assert final.before.ok, final.describe()
