"""Prefect server and worker for real: deployments registered by ``prefect deploy --all`` and run by a
process worker on the ``policy-kb`` pool, as the UI and the nightly schedule start them."""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import signal
import subprocess
import sys
from pathlib import Path
from zoneinfo import ZoneInfo

import chromadb
import psutil
from prefect.client.schemas.filters import (
    ArtifactFilter,
    ArtifactFilterFlowRunId,
    FlowRunFilter,
    FlowRunFilterDeploymentId,
)
from prefect.client.schemas.objects import FlowRun

from deployments.stack import StackLayout
from deployments.stack.layout import PROJECT_ROOT
from deployments.stack.manager import status
from flows.kb_documents import KB_DEPLOYMENT
from tests.polling import eventually
from tests.stack.conftest import AUDIT_DEPLOYMENT, INGEST_DEPLOYMENT, Prefect

GHOST = {"source": "GHOST", "revision_id": "rev_GHOST_2020_01"}


def test_an_ingestion_started_as_a_deployment_run_is_completed_by_the_worker_with_its_artifacts(
    stack_nppf: FlowRun, prefect: Prefect
) -> None:
    assert stack_nppf.state is not None and stack_nppf.state.is_completed(), stack_nppf.state
    assert stack_nppf.work_pool_name == "policy-kb"
    with prefect.client() as client:
        deployment = client.read_deployment_by_name(INGEST_DEPLOYMENT)
        artifacts = client.read_artifacts(
            artifact_filter=ArtifactFilter(flow_run_id=ArtifactFilterFlowRunId(any_=[stack_nppf.id]))
        )
    assert stack_nppf.deployment_id == deployment.id
    keys = {a.key for a in artifacts}
    assert {"ingest-nppf-rev-nppf-2024-12", "ingest-sections-nppf-rev-nppf-2024-12"} <= keys


def test_kb_ingestion_runs_from_its_own_queue_one_at_a_time_after_the_default_queue(prefect: Prefect) -> None:
    """create_work_pool.sh as the stack ran it: the kb-notes queue holds one run at a time and is polled after
    the default queue, so with the worker's limit of 2 a burst of notes always leaves a slot for a policy."""
    with prefect.client() as client:
        notes = client.read_work_queue_by_name("kb-notes", work_pool_name="policy-kb")
        default = client.read_work_queue_by_name("default", work_pool_name="policy-kb")
        kb = client.read_deployment_by_name(KB_DEPLOYMENT)
        ingest = client.read_deployment_by_name(INGEST_DEPLOYMENT)
    assert notes.concurrency_limit == 1 and default.concurrency_limit is None
    assert notes.priority > default.priority
    assert (kb.work_queue_name, ingest.work_queue_name) == ("kb-notes", "default")


def test_the_nightly_audit_deployment_has_its_cron_schedule_and_the_scheduler_plans_its_runs(prefect: Prefect) -> None:
    """Prefect's scheduler must turn the cron into runs (with SQLAlchemy 2.1 it failed and planned none)."""
    with prefect.client() as client:
        deployment = client.read_deployment_by_name(AUDIT_DEPLOYMENT)
    [schedule] = deployment.schedules
    assert schedule.active and schedule.slug == "nightly-consistency-audit"
    assert (schedule.schedule.cron, schedule.schedule.timezone) == ("30 2 * * *", "Europe/London")  # type: ignore[union-attr]
    assert schedule.parameters == {"repair": False, "fail_on_findings": True}
    assert deployment.work_pool_name == "policy-kb"

    def planned() -> list[FlowRun]:
        with prefect.client() as client:
            return client.read_flow_runs(
                flow_run_filter=FlowRunFilter(deployment_id=FlowRunFilterDeploymentId(any_=[deployment.id]))
            )

    eventually(lambda: bool(planned()), within=60, every=1.0)
    runs = [r for r in planned() if r.auto_scheduled]
    assert runs and all(r.state is not None and r.state.is_scheduled() for r in runs)
    assert runs[0].parameters == {"repair": False, "fail_on_findings": True}
    london = [r.expected_start_time.astimezone(ZoneInfo("Europe/London")) for r in runs if r.expected_start_time]
    assert london and {(t.hour, t.minute) for t in london} == {(2, 30)}


def test_an_audit_run_with_findings_ends_failed(stack: StackLayout, stack_nppf: FlowRun, prefect: Prefect) -> None:
    """An orphan chunk (no registered revision) written straight into the Chroma server is a finding."""
    collection = chromadb.HttpClient(host="127.0.0.1", port=stack.ports["chroma"]).get_collection("policy_docs")
    ghost_ref = f"{GHOST['source']}:{GHOST['revision_id']}"
    collection.add(
        ids=["GHOST__rev_GHOST_2020_01__Para_1__000"],
        embeddings=[[0.0] * 383 + [1.0]],
        documents=["a chunk nobody registered"],
        metadatas=[{**GHOST, "revision_ref": ghost_ref, "section_ref": "Para 1", "chunk_index": 0}],
    )

    try:
        run = prefect.wait_final(prefect.start(AUDIT_DEPLOYMENT, {"repair": False, "fail_on_findings": True}).id)
    finally:
        collection.delete(where={"revision_ref": ghost_ref})
    assert run.state is not None and run.state.is_failed(), run.state
    assert "orphan_chunks=1" in (run.state.message or "")


def stop_worker(process: subprocess.Popen[bytes], worker: psutil.Process, log: Path) -> str:
    """Stop a worker the way its operator would (SIGTERM to its process group); "" once it has stopped, else why.

    A worker stops within seconds, a run in hand or not (measured: decision 0047). One that inherited SIGINT
    ignored never did (its SIGTERM handler sends it SIGINT): the suite started as a shell's background job, the
    cause of two failed runs. Should one not stop within 60 s again, SIGABRT makes the interpreter (started with
    ``PYTHONFAULTHANDLER=1``) write every thread's stack into the worker's log, and the test fails with those
    stacks rather than a bare timeout. Run processes left behind (their own sessions) are killed."""
    runs: list[psutil.Process] = []
    with contextlib.suppress(psutil.NoSuchProcess):
        runs = worker.children(recursive=True)
    os.killpg(process.pid, signal.SIGTERM)
    stuck = ""
    try:
        process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGABRT)
        process.wait(timeout=30)
        stuck = log.read_text(errors="replace")[-8000:]
    for run in runs:
        with contextlib.suppress(psutil.NoSuchProcess):
            run.kill()
    return stuck


def _ran(log: Path) -> list[str]:
    """The flow runs whose audit ran in the worker that wrote ``log`` (a run's output goes to its worker's)."""
    return re.findall(r"audit\.done .*?flow_run_id=([0-9a-f-]{36})", log.read_text(errors="replace"))


def test_two_workers_drain_one_queue_each_run_once_and_the_deployment_limit_holds_across_them(
    stack: StackLayout, prefect: Prefect
) -> None:
    """Ingestion scales out by starting another worker on the same pool and queue (decision 0034). With the
    stack's worker stopped (SIGSTOP) only a second worker can take a run, and the other way round: so each is
    shown to drain the default queue. Then both run at once: every run ends once, in one worker, and the audit
    deployment's limit of one holds across the two (no two audits overlap)."""
    log = stack.logs / "worker-second.log"
    # Through deployments.stack.run, as supervisord starts the stack's own worker: a worker stops on SIGTERM by
    # sending itself SIGINT, which it must not have inherited ignored (the suite run as a background job).
    command = [
        sys.executable,
        "-m",
        "deployments.stack.run",
        "--",
        "prefect",
        "worker",
        "start",
        "--pool",
        "policy-kb",
        "--type",
        "process",
        "--limit",
        "1",
        "--name",
        "second-worker",
    ]
    first = psutil.Process({row.name: row for row in status(stack.directory)}["worker"].pid)
    with log.open("w") as out:
        second_process = subprocess.Popen(
            command,
            env=stack.env({**os.environ, "PYTHONFAULTHANDLER": "1"}),
            cwd=PROJECT_ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    second = psutil.Process(second_process.pid)

    def audit() -> FlowRun:
        return prefect.wait_final(prefect.start(AUDIT_DEPLOYMENT, {"repair": False, "fail_on_findings": False}).id)

    try:
        eventually(lambda: "started!" in log.read_text(errors="replace"), within=120, every=0.5)
        first.suspend()
        by_second = audit()
        second.suspend()
        first.resume()
        by_first = audit()
        second.resume()
        both = [prefect.start(AUDIT_DEPLOYMENT, {"repair": False, "fail_on_findings": False}) for _ in range(2)]
        ended = [by_second, by_first, *(prefect.wait_final(run.id) for run in both)]
    finally:
        first.resume()
        second.resume()
        stuck = stop_worker(second_process, second, log)
    assert not stuck, f"the second worker did not stop within 60 s of SIGTERM; its log, stacks last:\n{stuck}"
    assert all(r.state is not None and r.state.is_completed() and r.run_count == 1 for r in ended), ended
    in_first, in_second = _ran(stack.logs / "worker.log"), _ran(log)
    assert str(by_second.id) in in_second and str(by_first.id) in in_first
    ids = [str(r.id) for r in ended]
    assert sorted(i for i in in_first + in_second if i in ids) == sorted(ids), "each run ran once, in one worker"
    spans = sorted((r.start_time, r.end_time) for r in ended)
    assert all(s and e for s, e in spans)
    assert all(later[0] >= earlier[1] for earlier, later in itertools.pairwise(spans)), spans  # type: ignore[operator]
