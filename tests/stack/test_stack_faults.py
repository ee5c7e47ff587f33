"""One process of the supervised stack killed at a time (SIGKILL to its whole process group, ``kill -9``),
while 10 MCP clients search through the replicas and an ingestion runs through the worker.

During the outage every answer is a correct result or a clean error envelope (``*_unavailable``, or the admission
gate's ``overloaded`` with ``retry_after``: a replica whose calls stall on the dead process is not fed more), and no
call hangs past the client timeout; the replica left standing keeps answering when the other is killed.
Afterwards supervisord has restarted the process (``status``: restarts >= 1, last exit SIGKILL) and the
other six kept their pids; searches answer through both replicas; the ingestion finished, or did once it
was run again; the consistency audit finds nothing. Each test leaves all seven healthy for the next.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError
from pydantic import SecretStr

from deployments.stack import StackLayout, process_names
from deployments.stack.health import check
from deployments.stack.manager import ProcessStatus, status
from lib.composition import Stores, open_stores
from lib.config import load_settings
from lib.policies.audit import audit_store
from lib.policies.models import RevisionStatus
from tests.faults.support import big_pdf, note
from tests.mcp_service.tools import call
from tests.polling import eventually
from tests.stack.conftest import Prefect, rest

CLIENTS = 10
CALL_TIMEOUT_S = 30.0
"""The client's bound on one call (the MCP SDK's own HTTP timeout is 30 s): a call still open then is a hang."""
RECOVERY_TIMEOUT_S = 180.0
"""A replica's restart loads and warms the model; the worker's registers the deployments again."""
UNAVAILABLE = {"store_unavailable", "engine_unavailable", "registry_unavailable", "object_store_unavailable"}
RETRY_LATER = "overloaded"
"""The admission gate's refusal (HTTP 503, JSON-RPC error whose data is the envelope): clean, with ``retry_after``."""
QUESTION = {
    "query": "presumption in favour of sustainable development",
    "sources": ["NPPF"],
    "effective_date": "2025-06-01",
    "n_results": 5,
}
NPPF_REVISION_ID = "rev_NPPF_2024_12"


def rows(stack: StackLayout) -> dict[str, ProcessStatus]:
    return {row.name: row for row in status(stack.directory)}


def all_healthy(stack: StackLayout) -> bool:
    return all(check(name, stack).ok for name in process_names())


@pytest.fixture(scope="module")
def stores(stack: StackLayout, tmp_path_factory: pytest.TempPathFactory) -> Stores:
    """The stack's stores opened in the test process, as a replica opens them (audit, registry reads)."""
    env = stack.settings_env()
    settings = load_settings(
        redis_url=env["REDIS_URL"],
        chroma_host=env["CHROMA_HOST"],
        chroma_port=int(env["CHROMA_PORT"]),
        object_store_url=env["OBJECT_STORE_URL"],
        s3_endpoint_url=env["S3_ENDPOINT_URL"],
        aws_access_key_id=env["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=SecretStr(env["AWS_SECRET_ACCESS_KEY"]),
        data_dir=tmp_path_factory.mktemp("faults-audit"),
        enable_ocr=False,
    )
    return open_stores(settings)


@pytest.fixture(scope="module")
def baseline(stack: StackLayout, stack_nppf: Any) -> list[str]:
    """The sections the question finds in NPPF December 2024 before any fault (both replicas agree)."""
    answers = [anyio.run(call, url, "search_policy", QUESTION) for url in stack.replica_urls()]
    sections = [[r["section_ref"] for r in answer["results"]] for answer in answers]
    assert sections[0] and sections[0] == sections[1], answers
    return sections[0]


@dataclass
class Outcome:
    url: str
    kind: str
    """``correct``, ``wrong``, an error type, ``refused`` (no connection), ``hang`` or ``raised``."""
    started: float
    seconds: float
    detail: str = ""


def gate_refusal(exc: BaseException) -> str | None:
    """``overloaded`` when ``exc`` (or one inside its exception groups) is the admission gate's refusal: a JSON-RPC
    error whose data is the spec's envelope with a ``retry_after``; else None."""
    if isinstance(exc, BaseExceptionGroup):
        found = {gate_refusal(inner) for inner in exc.exceptions} - {None}
        return found.pop() if len(found) == 1 else None
    if not isinstance(exc, MCPError):
        return None
    data = exc.error.data
    if isinstance(data, dict) and data.get("error_type") == RETRY_LATER and isinstance(data.get("retry_after"), int):
        return RETRY_LATER
    return None


@dataclass
class Clients:
    """``CLIENTS`` SDK clients searching in a loop through ``urls`` from a thread of their own."""

    urls: list[str]
    baseline: list[str]
    outcomes: list[Outcome] = field(default_factory=list)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def judge(self, answer: dict[str, Any]) -> tuple[str, str]:
        if answer["status"] == "error":
            return answer["error_type"], answer.get("message", "")
        results = answer["results"]
        right = (
            len(results) == len(self.baseline)
            and {r["revision_id"] for r in results} == {NPPF_REVISION_ID}
            and results[0]["section_ref"] in self.baseline
        )
        return ("correct", "") if right else ("wrong", str([(r["revision_id"], r["section_ref"]) for r in results]))

    async def _client(self, index: int) -> None:
        turn = index
        while not self._stop.is_set():
            url = self.urls[turn % len(self.urls)]
            turn += 1
            started = time.monotonic()
            try:
                with anyio.fail_after(CALL_TIMEOUT_S):
                    kind, detail = self.judge(await call(url, "search_policy", QUESTION))
            except TimeoutError:
                kind, detail = "hang", ""
            except Exception as exc:  # what a client sees when nothing listens: kept, judged below
                refusal = gate_refusal(exc)
                if refusal is not None:
                    self.outcomes.append(Outcome(url, refusal, started, time.monotonic() - started))
                    await anyio.sleep(0.2)
                    continue
                text = repr(exc)
                refused = any(
                    word in text
                    for word in ("ConnectError", "Connection refused", "RemoteProtocolError", "ReadError", "connection")
                )
                kind, detail = ("refused" if refused else "raised"), text[:300]
                await anyio.sleep(0.2)
            self.outcomes.append(Outcome(url, kind, started, time.monotonic() - started, detail))

    async def _run(self) -> None:
        async with anyio.create_task_group() as group:
            for index in range(CLIENTS):
                group.start_soon(self._client, index)

    def __enter__(self) -> Clients:
        self._thread = threading.Thread(target=anyio.run, args=(self._run,), daemon=True)
        self._thread.start()
        eventually(lambda: len(self.outcomes) >= CLIENTS, within=60, every=0.05, what="the clients' first answers")
        return self

    def __exit__(self, *_: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=CALL_TIMEOUT_S + 30)
        assert not self._thread.is_alive(), "a client call outlived the client timeout"

    def since(self, moment: float) -> list[Outcome]:
        return [o for o in list(self.outcomes) if o.started >= moment]


@dataclass
class Ingestion:
    source: str
    revision_id: str
    flow_run_id: str


def start_ingestion(stack: StackLayout, stores: Stores, killed: str) -> Ingestion:
    """A new policy's revision uploaded to replica A (a deployment run for the worker); returns once it embeds."""
    source = f"FAULT_{killed.upper().replace('-', '_')}"
    revision_id = f"rev_{source}_2024_06"
    with rest(stack.url("replica-a")) as api:
        policy = {"source": source, "title": f"{source} title", "category": "national_policy"}
        created = api.post("/policies", json=policy)
        assert created.status_code == 201, created.text
        fields = {"version_label": "June 2024", "effective_from": "2024-06-01", "revision_id": revision_id}
        files = {"file": (f"{source}.pdf", big_pdf(source), "application/pdf")}
        accepted = api.post(f"/policies/{source}/revisions", data=fields, files=files)
    assert accepted.status_code == 202, accepted.text
    registry = stores.policies.registry
    eventually(
        lambda: registry.get_revision(source, revision_id).progress_phase == "embed",
        within=180,
        every=0.05,
        what=f"{source}'s ingestion embedding",
    )
    return Ingestion(source, revision_id, accepted.json()["ingestion_job_id"])


def finish_ingestion(stack: StackLayout, stores: Stores, prefect: Prefect, ingestion: Ingestion) -> str:
    """Wait for the flow run; if it did not complete, run the ingestion again (a reindex) and wait for that.
    Returns how it ended, for the record."""
    run = prefect.wait_final(ingestion.flow_run_id)
    assert run.state is not None
    how = f"flow run {run.state.name}"
    if not run.state.is_completed():
        registry = stores.policies.registry
        settled = lambda: registry.get_revision(ingestion.source, ingestion.revision_id).status  # noqa: E731
        eventually(lambda: settled() != RevisionStatus.PROCESSING, within=120, every=0.5, what="the revision settled")
        with rest(stack.url("replica-a")) as api:
            again = api.post(f"/policies/{ingestion.source}/revisions/{ingestion.revision_id}/reindex")
        assert again.status_code == 202, again.text
        rerun = prefect.wait_final(again.json()["ingestion_job_id"])
        assert rerun.state is not None and rerun.state.is_completed(), rerun.state
        how += f", then re-run: {rerun.state.name}"
    revision = stores.policies.registry.get_revision(ingestion.source, ingestion.revision_id)
    assert revision.status == RevisionStatus.ACTIVE, revision.error
    assert revision.chunk_count > 100
    return how


@pytest.fixture
def healthy_before_and_after(stack: StackLayout) -> Iterator[None]:
    """Every test starts and ends on a stack of seven healthy processes (the other stack tests share it)."""
    eventually(lambda: all_healthy(stack), within=RECOVERY_TIMEOUT_S, every=0.5, what="all seven healthy")
    yield
    assert all_healthy(stack), {r.name: (r.state, r.health.detail) for r in status(stack.directory)}


KILLED = ["redis", "chroma", "s3", "prefect", "worker", "replica-b"]


@pytest.mark.usefixtures("healthy_before_and_after")
@pytest.mark.parametrize("killed", KILLED)
def test_a_process_killed_under_load_is_restarted_alone_and_nothing_answers_wrong(
    killed: str, stack: StackLayout, stores: Stores, prefect: Prefect, baseline: list[str]
) -> None:
    eventually(lambda: rows(stack)[killed].state == "RUNNING", within=30, every=0.5, what=f"{killed} RUNNING")
    before = rows(stack)
    victim = before[killed].pid
    assert victim is not None
    ingestion = start_ingestion(stack, stores, killed)
    with Clients(stack.replica_urls(), baseline) as clients:
        killed_at = time.monotonic()
        os.killpg(victim, signal.SIGKILL)

        def back() -> bool:
            row = rows(stack)[killed]
            return row.pid not in (None, victim) and row.health.ok

        eventually(back, within=RECOVERY_TIMEOUT_S, every=0.25, what=f"{killed} restarted and healthy")
        recovered_at = time.monotonic()
        eventually(
            lambda: len(clients.since(recovered_at)) >= 2 * CLIENTS,
            within=120,
            every=0.1,
            what="answers after the recovery",
        )
    outcomes = clients.since(killed_at)
    seen = Counter(f"{'b' if o.url == stack.url('replica-b') else 'a'}:{o.kind}" for o in outcomes)
    note(f"{killed}_recovery_s", round(recovered_at - killed_at, 1))
    note(f"{killed}_answers", dict(seen))
    note(f"{killed}_slowest_call_s", round(max(o.seconds for o in outcomes), 2))

    assert not [o for o in outcomes if o.kind in ("wrong", "hang", "raised")], [
        o for o in outcomes if o.kind in ("wrong", "hang", "raised")
    ][:5]
    assert all(o.seconds < CALL_TIMEOUT_S for o in outcomes)
    assert {o.kind for o in outcomes} <= {"correct", "refused", RETRY_LATER} | UNAVAILABLE, Counter(
        o.kind for o in outcomes
    )
    refused = [o for o in outcomes if o.kind == "refused"]
    assert all(o.url == stack.url(killed) for o in refused), refused[:3]
    if killed == "replica-b":
        through_a = [o for o in outcomes if o.url == stack.url("replica-a")]
        assert through_a and all(o.kind == "correct" for o in through_a), Counter(o.kind for o in through_a)
    assert [o for o in outcomes if o.kind == "correct"], "no search answered during or after the outage"

    after = rows(stack)
    assert after[killed].restarts >= before[killed].restarts + 1
    assert after[killed].last_exit is not None and after[killed].last_exit.startswith("SIGKILL"), after[killed]
    # supervisord says RUNNING once the process has outlived startsecs (10 s), which may be after it is healthy
    eventually(lambda: rows(stack)[killed].state == "RUNNING", within=30, every=0.5, what=f"{killed} RUNNING")
    others = {name: row.pid for name, row in after.items() if name != killed}
    assert others == {name: row.pid for name, row in before.items() if name != killed}, "the others kept running"

    for url in stack.replica_urls():
        answer = anyio.run(call, url, "search_policy", QUESTION)
        assert Clients([url], baseline).judge(answer)[0] == "correct", answer
    note(f"{killed}_ingestion", finish_ingestion(stack, stores, prefect, ingestion))
    found = anyio.run(
        call,
        stack.url("replica-b"),
        "search_policy",
        {"query": "local character and drainage", "sources": [ingestion.source]},
    )
    assert found["status"] == "success" and found["results"], found
    report = audit_store(stores.policies)
    note(f"{killed}_audit", [f"{f.kind.value}: {f.detail}" for f in report.findings] or "nothing")
    assert report.ok, report.findings
