"""Overload without collapse: a service whose search lane has one thread and a line of two, flooded over ``/mcp``
and REST while the test holds the lane's one place. Every search beyond the line is refused at once, in the
spec's envelope (MCP: a tool error ``overloaded``; REST: 503 ``overloaded`` with ``Retry-After``); every
admitted search answers in full once the place frees; right after, a normal call is answered (nothing stuck).
The same for ``kb_search`` on the ``kb`` server, whose engine lane (the engine calls it keeps in flight) has one
place and a line of two: a refused call never reaches the engine, so it cannot queue behind the flood.

The service runs on the test's own event loop, so the lane it uses is the one the test holds: what is refused is
decided by the lane's bounds, never by timing. The admission gate in front of ``/mcp`` is off here; its own tests
are ``test_admission_gate.py``.
"""

from __future__ import annotations

import dataclasses
import threading
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import httpx
import pytest
import redis
import uvicorn
from pydantic import SecretStr
from starlette.types import ASGIApp

from lib.composition import Stores, open_stores
from lib.notes.ingest import ingest_note
from mcp_service import kb
from mcp_service.policy_kb import create_app
from mcp_service.search_lane import engine_lane, search_lane
from tests.conftest import free_port
from tests.mcp_service.conftest import Service, bearer, mcp_session, service_settings
from tests.mcp_service.kb_stack import KB_KEY
from tests.polling import eventually_async

pytestmark = pytest.mark.anyio

QUEUE = 2
FLOOD_MCP = 6
FLOOD_REST = 3
QUESTION = {"query": "development refused on highways grounds", "effective_date": "2025-06-01", "n_results": 3}
KB_DB = 6
FLOOD_KB = 7
NOTE = "Tenants asked for the bin store to be moved away from the kitchen windows."


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


@asynccontextmanager
async def serving(app: ASGIApp, port: int) -> AsyncIterator[str]:
    """``app`` served by uvicorn on this event loop (so the lanes it uses are the test's); its base URL."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    async with anyio.create_task_group() as group:
        group.start_soon(server.serve)
        await eventually_async(lambda: server.started, within=60, what="the service starting")
        try:
            yield f"http://127.0.0.1:{port}"
        finally:
            server.should_exit = True


def tiny_lane_stores(nppf: Service, **search_settings: object) -> Stores:
    """The NPPF service's stores with settings whose lane has 1 thread and a line of ``QUEUE``, and no admission
    gate in front of ``/mcp`` (``search_settings`` change any of these)."""
    tiny = {"threads": 1, "queue_max": QUEUE, "queue_wait_ms": 600_000, "admission_wait_ms": 0, **search_settings}
    search = nppf.settings.search.model_copy(update=tiny)
    settings = nppf.settings.model_copy(update={"search": search})
    shared = nppf.stores
    policies = dataclasses.replace(shared.policies, settings=settings)
    return Stores(
        settings,
        redis=shared.redis,
        chroma=shared.chroma,
        objects=shared.objects,
        embedder=shared.embedder,
        policies=policies,
    )


@asynccontextmanager
async def tiny_lane_service(nppf: Service) -> AsyncIterator[tuple[str, Stores]]:
    """An app over ``tiny_lane_stores``, on this loop."""
    stores = tiny_lane_stores(nppf)
    async with serving(create_app(stores.settings, stores=stores, warm=False), free_port()) as url:
        yield url, stores


def call(i: int) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": "search_policy", "arguments": QUESTION},
    }


async def test_a_flood_beyond_the_lane_s_line_is_refused_at_once_and_the_admitted_searches_answer(
    nppf_service: Service,
) -> None:
    async with tiny_lane_service(nppf_service) as (url, stores):
        lane = search_lane(stores.settings.search)
        headers = {**bearer(), "Accept": "application/json, text/event-stream"}
        release = threading.Event()
        mcp_answers: list[httpx.Response] = []
        rest_answers: list[httpx.Response] = []
        async with httpx.AsyncClient(headers=headers, timeout=60) as http, anyio.create_task_group() as group:
            try:
                group.start_soon(lane.run, release.wait)  # the lane's one place, held until the flood is in
                await eventually_async(lambda: lane.places.borrowed_tokens == 1, what="the place held")

                async def mcp(i: int) -> None:
                    mcp_answers.append(await http.post(f"{url}/mcp", json=call(i)))

                async def rest() -> None:
                    body = {"query": "highways", "top": 3}
                    rest_answers.append(await http.post(f"{url}/api/v1/search", json=body))

                for i in range(FLOOD_MCP):
                    group.start_soon(mcp, i)
                for _ in range(FLOOD_REST):
                    group.start_soon(rest)
                flood = FLOOD_MCP + FLOOD_REST
                await eventually_async(
                    lambda: lane.waiting == QUEUE and lane.refused == flood - QUEUE,
                    within=60,
                    what="the line full and the rest refused",
                )
                # the refusals come back while the place is still held: they never wait for the lane
                await eventually_async(
                    lambda: len(mcp_answers) + len(rest_answers) == flood - QUEUE,
                    within=60,
                    what="every refusal answered",
                )
                assert lane.waiting == QUEUE
            finally:
                release.set()

        refused_mcp = [r.json()["result"] for r in mcp_answers if r.json()["result"]["isError"]]
        answered_mcp = [r.json()["result"] for r in mcp_answers if not r.json()["result"]["isError"]]
        refused_rest = [r for r in rest_answers if r.status_code == 503]
        answered_rest = [r for r in rest_answers if r.status_code == 200]
        assert len(refused_mcp) + len(refused_rest) == FLOOD_MCP + FLOOD_REST - QUEUE
        assert len(answered_mcp) + len(answered_rest) == QUEUE, [r.status_code for r in rest_answers]
        assert all(r.status_code == 200 for r in mcp_answers), "an MCP refusal is a tool error, not an HTTP one"
        for result in refused_mcp:
            envelope = result["structuredContent"]
            assert envelope["status"] == "error" and envelope["error_type"] == "overloaded"
            assert "retry in 1 s" in envelope["message"]
        for response in refused_rest:
            assert response.headers["Retry-After"] == "1"
            assert response.json()["error"]["code"] == "overloaded"
        for result in answered_mcp:
            body = result["structuredContent"]
            assert body["status"] == "success" and body["results"], "an admitted search answers in full"
            assert {hit["source"] for hit in body["results"]} == {"NPPF"}
        for response in answered_rest:
            assert "results" in response.json()

        async with mcp_session(url) as session:  # right after the flood: a normal call, at once
            assert lane.waiting == 0 and lane.places.borrowed_tokens == 0
            after = await session.call_tool("search_policy", QUESTION)
        assert not after.is_error and after.structured_content and after.structured_content["results"]


@asynccontextmanager
async def tiny_kb_service(base: Path, redis_url: str, chroma_dir: Path) -> AsyncIterator[tuple[str, Stores]]:
    """A whole ``kb`` deployment (its engine mounted at ``/api/v1``, called over HTTP) with one note, whose lanes
    have 1 place and a line of ``QUEUE``, on this loop."""
    port = free_port()
    settings = service_settings(
        base,
        redis_url,
        chroma_dir,
        KB_DB,
        kb_collection=f"kb_{uuid.uuid4().hex[:16]}",
        kb_mcp_port=port,
        kb_mcp_api_key=SecretStr(KB_KEY),
        search_threads=1,
        search_queue_max=QUEUE,
        search_queue_wait_ms=600_000,
        search_admission_wait_ms=0,
    )
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    stores = open_stores(settings)
    await anyio.to_thread.run_sync(lambda: ingest_note(stores.notes, NOTE, ["collection:documents"]))
    async with serving(kb.create_app(settings, stores=stores, warm=False), port) as url:
        yield url, stores


def kb_search(i: int) -> dict[str, object]:
    return {
        "jsonrpc": "2.0",
        "id": i,
        "method": "tools/call",
        "params": {"name": "kb_search", "arguments": {"query": "bin store", "top": 3}},
    }


async def test_a_kb_search_flood_beyond_the_engine_lane_s_line_is_refused_at_once_and_the_admitted_ones_answer(
    service_base: Path, redis_url: str, chroma_dir: Path
) -> None:
    async with tiny_kb_service(service_base, redis_url, chroma_dir) as (url, stores):
        lane = engine_lane(stores.settings.search)
        headers = {**bearer(KB_KEY), "Accept": "application/json, text/event-stream"}
        release = anyio.Event()
        answers: list[httpx.Response] = []

        async def hold_the_place() -> None:  # an engine call in flight that does not come back until released
            async with lane.admit():
                await release.wait()

        async with httpx.AsyncClient(headers=headers, timeout=60) as http, anyio.create_task_group() as group:
            try:
                group.start_soon(hold_the_place)
                await eventually_async(lambda: lane.places.borrowed_tokens == 1, what="the engine's place held")

                async def mcp(i: int) -> None:
                    answers.append(await http.post(f"{url}/mcp", json=kb_search(i)))

                for i in range(FLOOD_KB):
                    group.start_soon(mcp, i)
                await eventually_async(
                    lambda: lane.waiting == QUEUE and lane.refused == FLOOD_KB - QUEUE,
                    within=60,
                    what="the line full and the rest refused",
                )
                # the refusals come back while the place is still held: they never wait for the engine
                await eventually_async(lambda: len(answers) == FLOOD_KB - QUEUE, within=60, what="every refusal")
                assert lane.waiting == QUEUE
                assert all(r.json()["result"]["isError"] for r in answers), "only refusals while the place is held"
                engine_searches = search_lane(stores.settings.search)
                assert engine_searches.places.borrowed_tokens == 0 and engine_searches.waiting == 0, (
                    "nothing reached the engine while its place was held"
                )
            finally:
                release.set()

        assert len(answers) == FLOOD_KB and all(r.status_code == 200 for r in answers), "none failed or timed out"
        results = [r.json()["result"] for r in answers]
        refused = [r["structuredContent"] for r in results if r["isError"]]
        answered = [r["structuredContent"] for r in results if not r["isError"]]
        assert len(refused) == FLOOD_KB - QUEUE and len(answered) == QUEUE
        for envelope in refused:
            assert envelope == {"status": "error", "error_type": "overloaded", "message": envelope["message"]}
            assert "retry in 1 s" in envelope["message"]
        for body in answered:
            assert body["status"] == "success", body
            assert [hit["text"] for hit in body["results"]] == [NOTE], "an admitted search answers in full"

        async with mcp_session(url, key=KB_KEY) as session:  # right after the flood: a normal call, at once
            assert lane.waiting == 0 and lane.places.borrowed_tokens == 0
            after = await session.call_tool("kb_search", {"query": "bin store", "top": 3})
        assert not after.is_error and after.structured_content, after
        assert [hit["text"] for hit in after.structured_content["results"]] == [NOTE]
