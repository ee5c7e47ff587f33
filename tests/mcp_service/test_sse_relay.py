"""The SSE relay when Redis goes away and comes back, and when a message cannot be delivered.

The relay gets a redis-server of its own here, which the tests stop and start again on the same port; it
keeps nothing across a restart (no AOF, no snapshot), the harder case: every session registration is lost.
The knowledge base stays on the session's Redis, so only the relay sees the outage.
"""

from __future__ import annotations

import json
import logging
import shutil
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
import redis
from mcp import ClientSession
from mcp.client.sse import sse_client

from mcp_service.policy_kb import create_app
from mcp_service.transports.sse_relay import replica_channel, session_key
from tests.conftest import free_port
from tests.mcp_service.conftest import INITIALIZE, MCP_HEADERS, Service, bearer, running, sse_events
from tests.polling import eventually

DEADLINE_S = 30
"""Bound on every wait below: the relay retries with a backoff capped at 5 s."""
NO_POLICIES = {"status": "success", "policy_count": 0, "policies": []}


@dataclass
class RelayRedis:
    """A redis-server that can be stopped and started again on the same port, keeping nothing."""

    port: int
    directory: Path
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def client(self) -> redis.Redis:
        return redis.Redis.from_url(self.url, decode_responses=True, socket_connect_timeout=1)

    def start(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            pytest.fail("redis-server is not installed: run `make test`, which installs it", pytrace=False)
        self.proc = subprocess.Popen(
            [
                binary,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.STDOUT,
        )
        wait_until(lambda: _answers(self.client()), f"redis-server on port {self.port} to start")

    def stop(self) -> None:
        assert self.proc is not None
        self.proc.terminate()
        self.proc.wait(timeout=10)
        self.proc = None

    def sessions(self) -> dict[str, str]:
        """Registered SSE session id → the replica holding it."""
        store = self.client()
        keys = store.scan_iter("policy_kb:sse_session:*")
        return {key.rsplit(":", 1)[1]: str(holder) for key in keys if (holder := store.get(key)) is not None}

    def listening(self, replica: str) -> bool:
        return bool(self.client().pubsub_numsub(replica_channel(replica))[0][1])


def _answers(store: redis.Redis) -> bool:
    try:
        return bool(store.ping())
    except redis.ConnectionError:
        return False


def wait_until(condition: Callable[[], Any], what: str) -> Any:
    """``eventually`` with this module's deadline (``DEADLINE_S``), in a form ``anyio.to_thread.run_sync`` takes."""
    return eventually(condition, within=DEADLINE_S, every=0.05, what=what)


@pytest.fixture
def relay_redis(tmp_path: Path) -> Iterator[RelayRedis]:
    server = RelayRedis(free_port(), tmp_path)
    server.start()
    yield server
    if server.proc is not None:
        server.stop()


@pytest.fixture
def relay_settings(fresh_service: Service, relay_redis: RelayRedis) -> Any:
    return fresh_service.settings.replace(redis_url=relay_redis.url)


def tool_call(request_id: int, name: str = "list_policy_documents") -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": {"name": name, "arguments": {}}}


def retries_logged(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith("sse_relay.retrying task=listener")]


class PostsTo(httpx2.AsyncHTTPTransport):
    """The SDK client's HTTP transport with a load balancer's choice made: every POST goes to ``port``."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self.port = port

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        if request.method == "POST":
            request.url = request.url.copy_with(port=self.port)
        return await super().handle_async_request(request)


@pytest.mark.anyio
@pytest.mark.parametrize("posts_to", ["the holder", "another replica"])
async def test_an_sdk_sse_session_lives_through_a_redis_restart_and_completes_a_tool_call(
    fresh_service: Service,
    relay_redis: RelayRedis,
    relay_settings: Any,
    caplog: pytest.LogCaptureFixture,
    posts_to: str,
) -> None:
    """The SDK's SSE client holds its stream on replica A and POSTs to A, or to B as a load balancer may."""
    caplog.set_level(logging.INFO, logger="mcp_service.transports.sse_relay")
    with (
        running(create_app(relay_settings, stores=fresh_service.stores, warm=False)) as url_a,
        running(create_app(relay_settings, stores=fresh_service.stores, warm=False)) as url_b,
    ):
        port = int((url_a if posts_to == "the holder" else url_b).rsplit(":", 1)[1])

        def client(
            headers: dict[str, str] | None = None,
            timeout: httpx2.Timeout | None = None,
            auth: httpx2.Auth | None = None,
        ) -> httpx2.AsyncClient:
            return httpx2.AsyncClient(headers=headers, timeout=timeout, auth=auth, transport=PostsTo(port))

        async with (
            sse_client(f"{url_a}/sse", headers=bearer(), httpx_client_factory=client) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            before = await session.call_tool("list_policy_documents", {})
            registered = await anyio.to_thread.run_sync(wait_until, relay_redis.sessions, "the session's registration")
            relay_redis.stop()
            await anyio.to_thread.run_sync(wait_until, lambda: retries_logged(caplog), "the listeners to retry")
            await anyio.to_thread.run_sync(relay_redis.start)
            await anyio.to_thread.run_sync(
                wait_until, lambda: relay_redis.sessions() == registered, "the session to be registered again"
            )
            holder = next(iter(registered.values()))
            await anyio.to_thread.run_sync(wait_until, lambda: relay_redis.listening(holder), "A to listen again")
            after = await session.call_tool("list_policy_documents", {})
        alive = [httpx.get(f"{url}/health", timeout=10).status_code for url in (url_a, url_b)]
    assert before.structured_content == after.structured_content == NO_POLICIES
    assert alive == [200, 200], "the apps' lifespans survived the outage"


def test_a_message_relayed_while_redis_is_down_gets_503_and_the_session_completes_a_call_once_it_is_back(
    fresh_service: Service, relay_redis: RelayRedis, relay_settings: Any, caplog: pytest.LogCaptureFixture
) -> None:
    """Replica A holds the stream; the client's POSTs land on replica B (a load balancer's choice)."""
    caplog.set_level(logging.INFO, logger="mcp_service.transports.sse_relay")
    with (
        running(create_app(relay_settings, stores=fresh_service.stores, warm=False)) as url_a,
        running(create_app(relay_settings, stores=fresh_service.stores, warm=False)) as url_b,
        httpx.Client(headers=bearer(), timeout=httpx.Timeout(10, read=DEADLINE_S)) as client,
        client.stream("GET", f"{url_a}/sse") as stream,
    ):
        events = sse_events(stream)
        _, endpoint = next(events)
        session_id = endpoint.rsplit("=", 1)[1]
        holder = wait_until(lambda: relay_redis.sessions().get(session_id), "the session to be registered")
        assert client.post(f"{url_b}{endpoint}", json=INITIALIZE, headers=MCP_HEADERS).status_code == 202
        assert json.loads(next(events)[1])["result"]["serverInfo"]["name"] == "policy-kb-mcp"
        client.post(f"{url_b}{endpoint}", json={"jsonrpc": "2.0", "method": "notifications/initialized"})

        relay_redis.stop()
        refused = client.post(f"{url_b}{endpoint}", json=tool_call(2))
        assert (refused.status_code, refused.headers["retry-after"]) == (503, "1")
        assert refused.json()["id"] == 2 and refused.json()["error"]["code"] == -32603, refused.text
        wait_until(lambda: retries_logged(caplog), "the listeners to retry")

        relay_redis.start()
        wait_until(lambda: relay_redis.sessions().get(session_id) == holder, "the session to be registered again")
        wait_until(lambda: relay_redis.listening(holder), "the holder to listen again")
        assert client.post(f"{url_b}{endpoint}", json=tool_call(3)).status_code == 202
        kind, data = next(events)
        assert kind == "message" and json.loads(data)["id"] == 3
        assert json.loads(data)["result"]["structuredContent"] == NO_POLICIES
        assert httpx.get(f"{url_a}/health").status_code == httpx.get(f"{url_b}/health").status_code == 200


def test_a_relayed_post_answers_what_the_holders_sdk_answered_or_503_when_no_replica_listens(
    fresh_service: Service,
) -> None:
    replica_b = create_app(fresh_service.settings, stores=fresh_service.stores, warm=False)
    store = redis.Redis.from_url(fresh_service.settings.redis.url or "", decode_responses=True)
    with (
        running(replica_b) as url_b,
        httpx.Client(headers=bearer(), timeout=httpx.Timeout(10, read=DEADLINE_S)) as client,
        client.stream("GET", f"{fresh_service.url}/sse") as stream,
    ):
        events = sse_events(stream)  # held: closing it would close the stream
        _, endpoint = next(events)
        session_id = endpoint.rsplit("=", 1)[1]
        holder = wait_until(lambda: store.get(session_key(session_id)), "the session to be registered")

        gone = "e" * 32  # registered to the holder, which no longer has it
        store.set(session_key(gone), holder, ex=30)
        lost = client.post(f"{url_b}/messages/?session_id={gone}", json=tool_call(2))
        assert (lost.status_code, lost.json()["error"]["message"]) == (404, "Could not find session")

        ghost = "d" * 32  # registered to a replica that died without cleaning up
        store.set(session_key(ghost), "f" * 32, ex=30)
        refused = client.post(f"{url_b}/messages/?session_id={ghost}", json=tool_call(4))
        assert refused.status_code == 503 and refused.json()["id"] == 4, refused.text

        not_rpc = client.post(f"{url_b}{endpoint}", content=b'{"not": "a JSON-RPC message"}', headers=MCP_HEADERS)
        assert (not_rpc.status_code, not_rpc.json()["error"]["message"]) == (400, "Could not parse message")  # holder's
        malformed = client.post(f"{url_b}{endpoint}", content=b"{not json", headers=MCP_HEADERS)
        assert malformed.status_code == 400 and malformed.json()["error"]["code"] == -32700  # refused before relaying
