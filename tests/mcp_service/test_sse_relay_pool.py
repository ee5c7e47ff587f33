"""The SSE relay's Redis connections are bounded and waited for (issue 46): a thousand sessions registering and
unregistering at once all succeed over a few connections, none left open past the bound; a relayed message that
finds every connection busy answers 503 with ``Retry-After``."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable

import anyio
import httpx
import pytest
import redis
import redis.asyncio as aioredis
from starlette.responses import Response
from starlette.types import Receive, Scope, Send

from lib.config import Settings
from lib.stores.redis_server import async_redis_connector
from mcp_service.transports.sse_relay import SseRelay, session_key
from mcp_service.transports.sse_routes import SseMessages
from tests.polling import eventually

SESSIONS = 1000
BOUND = 8
CLIENT_NAME = "sse-relay-pool-test"


async def not_here(scope: Scope, receive: Receive, send: Send) -> None:
    """The SDK's SSE app where no session lives: what a replica answers for a session it does not hold."""
    await Response("Could not find session", status_code=404)(scope, receive, send)


def relay_connections(client: redis.Redis) -> int:
    return sum(1 for c in client.client_list() if c.get("name") == CLIENT_NAME)


def bounded(settings: Settings, **overrides: object) -> Settings:
    return settings.replace(redis_async_max_connections=BOUND, **overrides)


def named_connector(settings: Settings) -> Callable[..., aioredis.Redis]:
    """The service's connector, its connections named so the test can count them (``CLIENT LIST``)."""
    connect = async_redis_connector(settings)
    return lambda **options: connect(client_name=CLIENT_NAME, **options)


def test_a_thousand_sessions_register_and_unregister_at_once_within_the_bound(
    settings: Settings, redis_client: redis.Redis, caplog: pytest.LogCaptureFixture
) -> None:
    relay = SseRelay(not_here, named_connector(bounded(settings)))
    ids = [f"{n:032x}" for n in range(SESSIONS)]
    most = 0

    async def burst() -> None:
        nonlocal most
        async with relay.run():
            async with anyio.create_task_group() as tasks:
                for session_id in ids:
                    tasks.start_soon(relay.register, session_id)
            assert sum(redis_client.exists(session_key(i)) for i in ids) == SESSIONS
            most = relay_connections(redis_client)
            async with anyio.create_task_group() as tasks:
                for session_id in ids:
                    tasks.start_soon(relay.unregister, session_id)
            assert not any(redis_client.exists(session_key(i)) for i in ids)

    with caplog.at_level(logging.WARNING, logger="mcp_service.transports.sse_relay"):
        anyio.run(burst)
    assert not [r for r in caplog.records if "register_failed" in r.getMessage()]
    assert 1 <= most <= BOUND
    eventually(lambda: relay_connections(redis_client) == 0, within=10, every=0.1, what="connections closed")


def test_a_relayed_message_that_finds_every_connection_busy_is_503_with_retry_after(
    settings: Settings, redis_client: redis.Redis
) -> None:
    relay = SseRelay(not_here, named_connector(bounded(settings, redis_pool_timeout_seconds=0.3)))
    held_elsewhere = "e" * 32
    redis_client.set(session_key(held_elsewhere), "another-replica", ex=60)
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/list"}'

    async def full_pool() -> httpx.Response:
        async with relay.run():
            assert relay._redis is not None
            client = relay._redis

            async def hold(n: int) -> None:
                with contextlib.suppress(redis.RedisError):  # the listener holds one of them already
                    await client.blpop([f"pool-test:{n}"], timeout=3)

            async with anyio.create_task_group() as holders:
                for n in range(BOUND):  # every connection the pool has, blocked on lists nobody pushes to
                    holders.start_soon(hold, n)
                await anyio.sleep(0.5)
                transport = httpx.ASGITransport(app=SseMessages(relay))
                async with httpx.AsyncClient(transport=transport, base_url="http://relay") as http:
                    answer = await http.post(
                        f"/messages/?session_id={held_elsewhere}",
                        content=body,
                        headers={"Content-Type": "application/json"},
                    )
                holders.cancel_scope.cancel()
            return answer

    answer = anyio.run(full_pool)
    assert answer.status_code == 503 and answer.headers["retry-after"].isdigit()
    error = answer.json()
    assert error["id"] == 7 and "busy" in error["error"]["message"]
