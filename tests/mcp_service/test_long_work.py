"""Long work on the ``document-store`` server, as an agent meets it: an ingestion reports its progress to a
client that asks (a progress token), over Streamable HTTP (an event stream answering that request) and SSE,
through the same helper as the policy ingestion (``tools.progress``); and, to a client that declares the MCP
tasks extension, it answers with a task the client polls, reads the result of, or cancels (``tools.tasks``).

A task's work is held where the test wants it by holding the document's ingestion claim in Redis (the claim
a second worker of the same file waits on), so what is seen while it works does not depend on timing."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
import pytest
import redis
from mcp import Client
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import (
    HEADER_MISMATCH,
    INVALID_PARAMS,
    MISSING_REQUIRED_CLIENT_CAPABILITY,
    CallToolResult,
    Request,
    RequestParams,
    Result,
)

from lib.composition import open_stores
from lib.documents.registry import make_document_id
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.stores.objects import sha256_bytes
from mcp_service.document_store import create_app
from mcp_service.tools.tasks import TASKS
from tests.fixtures_paths import TABLE_PDF
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_http import mcp_http_client
from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service, bearer, mcp_session, running, service_settings

pytestmark = pytest.mark.anyio

LONG_WORK_DB = 5
REF = "25/00001/FUL"
POLICY_REVISION = "rev_LTN_1_20_2020_07"


@pytest.fixture(scope="module")
def anyio_backend() -> str:
    return "asyncio"


@pytest.fixture
def documents(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Service]:
    """The document store over an empty registry and collection of its own, one PDF in its inbox."""
    base = service_base / f"long-work-{uuid.uuid4().hex[:8]}"
    settings = service_settings(
        base,
        redis_url,
        chroma_dir,
        LONG_WORK_DB,
        document_collection=f"long_work_{uuid.uuid4().hex[:12]}",
        task_max_per_caller=1,
    )
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    shutil.copyfile(TABLE_PDF, settings.files.allowed_roots[0] / "Transport_Assessment.pdf")
    stores = open_stores(settings)
    with running(create_app(settings, stores=stores, warm=False)) as url:
        yield Service(url, stores, settings)
    redis.Redis.from_url(settings.redis.url or "").flushdb()


@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_a_document_ingestion_reports_rising_progress_to_done(documents: Service, transport: str) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    path = str(documents.settings.files.allowed_roots[0] / "Transport_Assessment.pdf")
    args = {"file_path": path, "application_ref": REF}
    async with mcp_session(documents.url, transport=transport) as session:
        ingested = await session.call_tool("ingest_document", args, progress_callback=on_progress)
        again = await session.call_tool("ingest_document", args)
    assert ingested.structured_content is not None and ingested.structured_content["status"] == "success"
    assert again.structured_content is not None and again.structured_content["status"] == "already_ingested"
    values = [value for value, _, _ in seen]
    assert values == sorted(set(values)) and values[0] == 0.0 and values[-1] == 100.0
    assert {total for _, total, _ in seen} == {100.0}
    phases = [message for _, _, message in seen]
    assert phases[0] == "fetch" and phases[-1] == "done" and {"extract", "chunk", "embed", "store"} <= set(phases)


class CreatedTask(Result):
    """A ``tools/call`` answered with a task."""

    result_type: Literal["task"] = "task"
    task_id: str
    status: str
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None


class Tasks(ClientExtension):
    """The client's side of the tasks extension: declared on every request; a task answer is polled to its
    result by ``Client.call_tool``, or handed over as it is (``allow_claimed``)."""

    identifier = TASKS

    def claims(self) -> list[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreatedTask, resolve=self.resolve)]

    async def resolve(self, created: CreatedTask, ctx: ClaimContext) -> CallToolResult:
        task = await finished(ctx.session, created.task_id)
        assert task.status == "completed" and task.result is not None, task
        return CallToolResult.model_validate(task.result)


class TaskParams(RequestParams):
    task_id: str


class TaskRequest(Request[TaskParams, str]):
    """``tasks/get`` or ``tasks/cancel``, its task id sent as the ``Mcp-Name`` header as the extension asks."""

    method: str
    params: TaskParams
    name_param = "taskId"


class MisroutedParams(TaskParams):
    route: str


class MisroutedRequest(Request[MisroutedParams, str]):
    """``tasks/get`` whose ``Mcp-Name`` header names another task than its ``taskId``."""

    method: str = "tasks/get"
    params: MisroutedParams
    name_param = "route"


class TaskAnswer(Result):
    """A task as ``tools/call`` (``resultType: task``) or ``tasks/get`` answers it; ``tasks/cancel``'s empty ack."""

    result_type: str | None = None
    task_id: str | None = None
    status: str | None = None
    status_message: str | None = None
    ttl_ms: int | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


@asynccontextmanager
async def connected(url: str, key: str = FULL_KEY, *, tasks: bool = True) -> AsyncIterator[Client]:
    """The SDK's client on 2026-07-28 (``server/discover``), declaring the tasks extension or not."""
    async with (
        mcp_http_client(headers=bearer(key)) as http,
        Client(streamable_http_client(f"{url}/mcp", http_client=http), extensions=[Tasks()] if tasks else None) as c,
    ):
        assert c.protocol_version == "2026-07-28"
        yield c


async def ask(client: Client | ClientSession, method: Literal["tasks/get", "tasks/cancel"], task_id: str) -> TaskAnswer:
    session = client.session if isinstance(client, Client) else client
    return await session.send_request(TaskRequest(method=method, params=TaskParams(task_id=task_id)), TaskAnswer)


async def start(client: Client, arguments: dict[str, Any]) -> Any:
    """``ingest_document`` as the wire answers it: a task (``TaskAnswer``) to a client of the extension."""
    return await client.session.call_tool("ingest_document", arguments, allow_claimed=True)


async def finished(client: Client | ClientSession, task_id: str) -> TaskAnswer:
    """Poll ``tasks/get`` at the task's own interval until it ends."""
    while (task := await ask(client, "tasks/get", task_id)).status == "working":
        await anyio.sleep((task.poll_interval_ms or 1000) / 1000)
    return task


def document_args(service: Service) -> tuple[dict[str, str], str]:
    path = service.settings.files.allowed_roots[0] / "Transport_Assessment.pdf"
    return {"file_path": str(path), "application_ref": REF}, make_document_id(REF, sha256_bytes(path.read_bytes()))


async def test_an_ingestion_taken_as_a_task_works_then_completes_with_its_result(documents: Service) -> None:
    arguments, document_id = document_args(documents)
    registry = documents.stores.documents.registry
    async with connected(documents.url) as client:
        with registry.claim(document_id):  # the work waits here, after reading the file
            created = await start(client, arguments)
            assert isinstance(created, CreatedTask) and created.status == "working"
            assert created.task_id and created.ttl_ms and created.ttl_ms >= 1000 and created.poll_interval_ms
            working = await ask(client, "tasks/get", created.task_id)
            assert working.status == "working" and working.result is None
            assert working.status_message in ("started", "fetch 0%")
            refused = await start(client, arguments)  # TASK_MAX_PER_CALLER is 1 here
            assert refused.is_error and refused.structured_content["error_type"] == "overloaded"
        done = await finished(client, created.task_id)
        listed = await client.call_tool("list_ingested_documents", {"application_ref": REF})
    assert done.status == "completed" and done.status_message == "done" and done.result is not None
    assert done.result["structuredContent"]["status"] == "success"
    assert done.result["structuredContent"]["document_id"] == document_id
    assert done.ttl_ms is not None and done.ttl_ms >= created.ttl_ms
    assert [d["document_id"] for d in (listed.structured_content or {})["documents"]] == [document_id]


async def test_a_cancelled_task_stops_its_work_and_keeps_nothing(documents: Service) -> None:
    arguments, document_id = document_args(documents)
    async with connected(documents.url) as client:
        with documents.stores.documents.registry.claim(document_id):
            created = await start(client, arguments)
            ack = await ask(client, "tasks/cancel", created.task_id)
            assert ack.task_id is None and ack.status is None
        cancelled = await finished(client, created.task_id)
        again = await ask(client, "tasks/cancel", created.task_id)  # a finished task: acknowledged all the same
        listed = await client.call_tool("list_ingested_documents", {"application_ref": REF})
    assert cancelled.status == "cancelled" and cancelled.result is None and again.status is None
    assert (listed.structured_content or {})["documents"] == []
    assert documents.stores.documents.registry.get(document_id) is None


async def test_a_task_is_its_callers_and_a_client_without_the_extension_gets_the_answer(documents: Service) -> None:
    arguments, _ = document_args(documents)
    async with connected(documents.url) as owner, connected(documents.url, READ_KEY) as other:
        created = await start(owner, arguments)
        with pytest.raises(MCPError) as unknown:
            await ask(other, "tasks/get", created.task_id)
        assert unknown.value.error.code == INVALID_PARAMS
        done = await finished(owner, created.task_id)
        polled = await owner.call_tool("ingest_document", arguments)  # the SDK polls the task to its result
    assert done.status == "completed"
    assert polled.structured_content is not None and polled.structured_content["status"] == "already_ingested"
    async with connected(documents.url, tasks=False) as plain:
        answered = await plain.call_tool("ingest_document", arguments)
        with pytest.raises(MCPError) as undeclared:
            await ask(plain, "tasks/get", created.task_id)
    assert answered.structured_content is not None and answered.structured_content["status"] == "already_ingested"
    assert undeclared.value.error.code == MISSING_REQUIRED_CLIENT_CAPABILITY


async def test_a_task_request_routed_by_another_task_id_is_refused(documents: Service) -> None:
    arguments, _ = document_args(documents)
    async with connected(documents.url) as client:
        created = await start(client, arguments)
        misrouted = MisroutedRequest(params=MisroutedParams(task_id=created.task_id, route="another-task"))
        with pytest.raises(MCPError) as refused:
            await client.session.send_request(misrouted, TaskAnswer)
        done = await finished(client, created.task_id)
    assert refused.value.error.code == HEADER_MISMATCH and done.status == "completed"


async def test_a_policy_reindex_taken_as_a_task_completes_reindexed(fresh_service: Service) -> None:
    stores = fresh_service.stores.policies
    stores.registry.create_policy(PolicyCreate(source="LTN_1_20", title="LTN 1/20", category="national_guidance"))
    pdf = fresh_service.settings.files.allowed_roots[0] / "ltn-task.pdf"
    pdf.write_bytes(policy_pdf_bytes(edition="July 2020"))
    revision = RevisionCreate(revision_id=POLICY_REVISION, version_label="July 2020", effective_from="2020-07-27")
    register_revision(stores, "LTN_1_20", revision, pdf.read_bytes())
    arguments = {"source": "LTN_1_20", "revision_id": POLICY_REVISION, "file_path": str(pdf)}
    async with connected(fresh_service.url) as client:
        ingested = await client.call_tool("ingest_policy_revision", arguments)  # polled to its result by the SDK
        created = await client.session.call_tool(
            "ingest_policy_revision", {**arguments, "reindex": True}, allow_claimed=True
        )
        assert isinstance(created, CreatedTask)
        done = await finished(client, created.task_id)
    assert ingested.structured_content is not None and ingested.structured_content["action"] == "ingested"
    assert done.status == "completed" and done.result is not None
    assert done.result["structuredContent"]["action"] == "reindexed"


async def test_a_tool_error_completes_its_task_with_the_error_result(documents: Service) -> None:
    missing = str(documents.settings.files.allowed_roots[0] / "Not_There.pdf")
    async with connected(documents.url) as client:
        created = await start(client, {"file_path": missing, "application_ref": REF})
        done = await finished(client, created.task_id)
    assert done.status == "completed" and done.result is not None and done.result["isError"] is True
    assert done.result["structuredContent"]["error_type"] == "file_not_found"
