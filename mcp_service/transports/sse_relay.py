"""Legacy SSE transport (``GET /sse`` + ``POST /messages/``) across several replicas, supervised.

An SSE session is a stream held open by the one replica that answered ``GET /sse``; the client then
POSTs its messages to ``/messages/?session_id=...``, and a load balancer may send those to any replica.
So each replica registers the sessions it holds in Redis (``policy_kb:sse_session:{id}`` → replica id,
with a short TTL it keeps refreshing) and listens on its own channel. A POST for a session held
elsewhere is published to the holder's channel with a reply key; the holder feeds it to the session
through the SDK's own message endpoint and pushes back what that endpoint answered, and the POST answers
the same: 202, or the SDK's own 400/404. A POST for a session nobody holds gets the SDK's 404.

Each replica's Redis connections are bounded and waited for (``lib.stores.redis_server.async_redis_connector``):
a thousand sessions opening at once queue for them rather than fail. A message that cannot be delivered is never
answered 202. When this replica cannot reach Redis or gets no free connection in time, when no
replica listens on the holder's channel, or when the holder does not answer within ``REPLY_TIMEOUT_S``,
the POST gets 503 with ``Retry-After`` and a JSON-RPC error body (the request's id, ``INTERNAL_ERROR``,
as the SDK itself answers "too many sessions"; ``sse_routes.undeliverable``). The HTTP answer is the
channel, not an error event on the stream, because it is the one that reaches the client whatever failed:
the stream is held by the very replica that could not be reached. What a client makes of it is its own:
mcp 2.3.0's SSE client treats any refused POST as the end of its session (it logs the error, the refused
call waits for the client's read timeout, the next call fails with "Connection closed"), so an SDK client
reconnects to ``/sse``; an HTTP client reads the status and the JSON-RPC error.

The relay's Redis work runs under ``supervised``: a Redis hiccup is logged (``sse_relay.retrying``)
and retried with capped backoff and never takes the app's lifespan down; every (re)subscription
registers this replica's sessions again, as a restarted Redis may have lost them. Streamable HTTP (``/mcp``)
needs none of this: it runs stateless, so any replica answers any request. Why a relay rather than sticky
sessions: docs/decisions/0007-sse-relay-across-replicas.md.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import redis.asyncio as aioredis
from anyio.abc import TaskGroup
from pydantic import BaseModel, ValidationError
from redis.asyncio.retry import Retry
from redis.backoff import EqualJitterBackoff
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import RedisError
from starlette.types import ASGIApp, Message, Scope

logger = logging.getLogger(__name__)

SESSION_TTL_S = 30
REFRESH_EVERY_S = 10
REPLY_TIMEOUT_S = 5.0
"""How long a relayed POST waits for the holder's answer before it is answered 503."""
REDIS_ERRORS = (RedisError, OSError)
BACKOFF = EqualJitterBackoff(cap=5.0, base=0.1)
"""Delay before a failed listener or refresher runs again: 0.1-0.2 s, doubling up to 2.5-5 s."""


def unreachable_reason(exc: BaseException) -> str:
    """Why a relay command failed, for a 503's message: every Redis connection of this replica was busy for
    ``REDIS_POOL_TIMEOUT_SECONDS`` (the pool is bounded, ``redis_server.async_redis_connector``), or Redis
    could not be reached."""
    if isinstance(exc, RedisConnectionError) and "No connection available" in str(exc):
        return "every Redis connection of the relay is busy"
    return "the relay cannot reach Redis"


def session_key(session_id: str) -> str:
    return f"policy_kb:sse_session:{session_id}"


def replica_channel(replica_id: str) -> str:
    return f"policy_kb:sse_replica:{replica_id}"


class Relayed(BaseModel):
    """A POST on its way to the replica holding its session."""

    session_id: str
    body: str
    headers: dict[str, str]
    reply_to: str


class RelayReply(BaseModel):
    """What the holder's SDK message endpoint answered."""

    status: int = 0
    content_type: str = "text/plain; charset=utf-8"
    body: str = ""


async def supervised(name: str, replica: str, loop: Callable[[Callable[[], None]], Awaitable[None]]) -> None:
    """Run ``loop`` until cancelled, whatever it raises: each failure is logged once (with its traceback if
    it is not a Redis error) and ``loop`` runs again after ``BACKOFF``, which grows while failures repeat and
    resets when ``loop`` calls the ``healthy`` callback it is given."""
    failures = 0

    def healthy() -> None:
        nonlocal failures
        failures = 0

    while True:
        crashed = False
        try:
            await loop(healthy)
            error = "the loop ended"
        except REDIS_ERRORS as exc:
            error = f"{type(exc).__name__}: {exc}"
        except Exception as exc:
            crashed, error = True, f"{type(exc).__name__}: {exc}"
        failures += 1
        delay = BACKOFF.compute(failures)
        log = logger.exception if crashed else logger.warning
        log(
            "sse_relay.retrying task=%s replica=%s failures=%d retry_in_s=%.2f error=%s",
            name,
            replica,
            failures,
            delay,
            error,
        )
        await anyio.sleep(delay)


class SseRelay:
    """Wraps the SDK's SSE app (``MCPServer.sse_app``) for the two routes in ``sse_routes``."""

    def __init__(self, sse_app: ASGIApp, connect: Callable[..., aioredis.Redis] | None) -> None:
        """``connect`` makes a client of the deployment's Redis from connection options (by URL or through
        Sentinel: ``lib.stores.redis_server.async_redis_connector``); None = no relay."""
        self.sse_app = sse_app
        self.connect = connect
        self.replica_id = uuid.uuid4().hex
        self.local: set[str] = set()
        self._redis: aioredis.Redis | None = None
        self._tasks: TaskGroup | None = None

    @property
    def on(self) -> bool:
        """Whether POSTs for sessions held elsewhere are relayed (else the SDK answers them: 404)."""
        return self._redis is not None

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Listen for messages relayed to this replica and keep its sessions registered, while the app runs.
        Redis need not be up: the supervised tasks keep trying, and the app starts either way."""
        if self.connect is None:
            yield
            return
        client = self.connect(
            socket_connect_timeout=2,
            socket_timeout=REPLY_TIMEOUT_S + 5,
            retry=Retry(EqualJitterBackoff(cap=0.2, base=0.02), 1),
        )
        short_id = self.replica_id[:8]
        try:
            async with anyio.create_task_group() as tasks:
                self._redis, self._tasks = client, tasks
                tasks.start_soon(supervised, "listener", short_id, self._listen)
                tasks.start_soon(supervised, "refresher", short_id, self._refresh)
                yield
                tasks.cancel_scope.cancel()
        finally:
            self._redis = self._tasks = None
            with anyio.CancelScope(shield=True):
                await client.aclose()

    async def register(self, session_id: str) -> None:
        self.local.add(session_id)
        if self._redis is None:
            return
        try:
            await self._redis.set(session_key(session_id), self.replica_id, ex=SESSION_TTL_S)
        except REDIS_ERRORS as exc:
            logger.warning(
                "sse_relay.register_failed session_id=%s error=%s: registered when Redis is back",
                session_id[:8],
                type(exc).__name__,
            )

    async def unregister(self, session_id: str) -> None:
        self.local.discard(session_id)
        if self._redis is None:
            return
        with anyio.CancelScope(shield=True):
            try:
                await self._redis.delete(session_key(session_id))
            except REDIS_ERRORS as exc:
                logger.warning(
                    "sse_relay.unregister_failed session_id=%s error=%s: it expires in %d s",
                    session_id[:8],
                    type(exc).__name__,
                    SESSION_TTL_S,
                )

    async def owner(self, session_id: str) -> str | None:
        """The replica holding ``session_id``, ``None`` if none does; raises when Redis cannot be reached."""
        if self._redis is None:
            return None
        value = await self._redis.get(session_key(session_id))
        return value.decode() if isinstance(value, bytes) else value

    async def forward(self, owner: str, session_id: str, body: bytes, headers: dict[str, str]) -> RelayReply | None:
        """What the holder's SDK endpoint answered, or ``None`` if no replica took the message or the holder
        did not answer in time. Raises when Redis cannot be reached."""
        assert self._redis is not None
        reply_to = f"policy_kb:sse_reply:{uuid.uuid4().hex}"
        relayed = Relayed(
            session_id=session_id, body=body.decode("utf-8", "replace"), headers=headers, reply_to=reply_to
        )
        if await self._redis.publish(replica_channel(owner), relayed.model_dump_json()) == 0:
            return None
        popped = await self._redis.blpop([reply_to], timeout=REPLY_TIMEOUT_S)
        return RelayReply.model_validate_json(popped[1]) if popped else None

    async def _register_all(self) -> None:
        if self._redis is None or not self.local:
            return
        async with self._redis.pipeline(transaction=False) as pipe:
            for session_id in list(self.local):
                pipe.set(session_key(session_id), self.replica_id, ex=SESSION_TTL_S)
            await pipe.execute()

    async def _refresh(self, healthy: Callable[[], None]) -> None:
        while True:
            await anyio.sleep(REFRESH_EVERY_S)
            await self._register_all()
            healthy()

    async def _listen(self, healthy: Callable[[], None]) -> None:
        assert self._redis is not None and self._tasks is not None
        async with self._redis.pubsub() as pubsub:
            await pubsub.subscribe(replica_channel(self.replica_id))
            async for message in pubsub.listen():
                if message["type"] == "subscribe":  # also after redis-py reconnected and subscribed again
                    await self._register_all()
                    healthy()
                    logger.info("sse_relay.listening replica=%s sessions=%d", self.replica_id[:8], len(self.local))
                elif message["type"] == "message":
                    self._tasks.start_soon(self._deliver, message["data"])

    async def _deliver(self, raw: bytes) -> None:
        """Hand a relayed message to the local SSE session through the SDK's own message endpoint, and push
        back what the endpoint answered as soon as it has answered."""
        try:
            relayed = Relayed.model_validate_json(raw)
        except ValidationError:
            logger.warning("sse_relay.bad_payload replica=%s", self.replica_id[:8])
            return
        reply, body, sent = RelayReply(), bytearray(), False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": relayed.body.encode(), "more_body": False}

        async def send(message: Message) -> None:
            if message["type"] == "http.response.start":
                reply.status = message["status"]
                types = [v.decode("latin-1") for k, v in message.get("headers", []) if k.lower() == b"content-type"]
                reply.content_type = types[0] if types else reply.content_type
            elif message["type"] == "http.response.body":
                body.extend(message.get("body", b""))
                if not message.get("more_body", False):
                    reply.body = body.decode("utf-8", "replace")
                    await self._reply(relayed, reply)

        try:
            await self.sse_app(_message_scope(relayed), receive, send)
        except Exception:
            logger.exception("sse_relay.delivery_crashed session_id=%s", relayed.session_id[:8])
        if reply.status != 202:
            logger.warning("sse_relay.rejected session_id=%s status=%d", relayed.session_id[:8], reply.status)

    async def _reply(self, relayed: Relayed, reply: RelayReply) -> None:
        if self._redis is None:
            return
        try:
            async with self._redis.pipeline(transaction=True) as pipe:
                pipe.rpush(relayed.reply_to, reply.model_dump_json())
                pipe.expire(relayed.reply_to, int(REPLY_TIMEOUT_S) * 2)
                await pipe.execute()
        except REDIS_ERRORS as exc:
            logger.warning("sse_relay.reply_failed session_id=%s error=%s", relayed.session_id[:8], type(exc).__name__)


def _message_scope(relayed: Relayed) -> Scope:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/messages/",
        "raw_path": b"/messages/",
        "root_path": "",
        "query_string": f"session_id={relayed.session_id}".encode(),
        "headers": [(k.encode(), v.encode()) for k, v in relayed.headers.items()],
        "client": None,
        "server": None,
    }
