"""Legacy SSE transport (``GET /sse`` + ``POST /messages/``) across several replicas.

An SSE session is a stream held open by the one replica that answered ``GET /sse``; the client then
POSTs its messages to ``/messages/?session_id=...``, and a load balancer may send those to any replica.
So each replica registers its open sessions in Redis (``policy_kb:sse_session:{id}`` → replica id, with
a short TTL it keeps refreshing) and listens on its own channel. A POST for a session held elsewhere is
published to the holder's channel and answered 202 at once, exactly as the SDK answers a local one; the
holder feeds it to the session as if it had been posted there. A POST for a session nobody holds gets
the SDK's 404. If Redis cannot be reached the relay is off and SSE works only with sticky sessions.

Streamable HTTP (``/mcp``) needs none of this: it runs stateless, so any replica answers any request.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any
from urllib.parse import parse_qs

import anyio
import redis.asyncio as aioredis
from starlette.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from mcp_service.transports.bodies import BodyTooLarge, read_body

logger = logging.getLogger(__name__)

SESSION_TTL_S = 30
REFRESH_EVERY_S = 10
MAX_MESSAGE_BYTES = 4 * 1024 * 1024
_SESSION_IN_ENDPOINT = re.compile(rb"session_id=([0-9a-f]{32})")


def session_key(session_id: str) -> str:
    return f"policy_kb:sse_session:{session_id}"


def replica_channel(replica_id: str) -> str:
    return f"policy_kb:sse_replica:{replica_id}"


class SseRelay:
    """Wraps the SDK's SSE app (``MCPServer.sse_app``); ``stream`` and ``messages`` are its two routes."""

    def __init__(self, sse_app: ASGIApp, redis_url: str | None) -> None:
        self.sse_app = sse_app
        self.redis_url = redis_url
        self.replica_id = uuid.uuid4().hex
        self.local: set[str] = set()
        self._redis: aioredis.Redis | None = None
        self.stream = _SseStream(self)
        self.messages = _SseMessages(self)

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Listen for messages relayed to this replica and keep its sessions registered, while the app runs."""
        if self.redis_url is None:
            yield
            return
        client = aioredis.Redis.from_url(self.redis_url)
        try:
            pubsub = client.pubsub()
            await pubsub.subscribe(replica_channel(self.replica_id))
        except (aioredis.ConnectionError, OSError) as exc:
            logger.warning("sse_relay.disabled error=%s: SSE needs sticky sessions across replicas", exc)
            await client.aclose()
            yield
            return
        self._redis = client
        try:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(self._listen, pubsub)
                tasks.start_soon(self._refresh)
                yield
                tasks.cancel_scope.cancel()
        finally:
            self._redis = None
            with anyio.CancelScope(shield=True):
                await pubsub.aclose()
                await client.aclose()

    async def register(self, session_id: str) -> None:
        self.local.add(session_id)
        if self._redis is not None:
            await self._redis.set(session_key(session_id), self.replica_id, ex=SESSION_TTL_S)

    async def unregister(self, session_id: str) -> None:
        self.local.discard(session_id)
        if self._redis is not None:
            with anyio.CancelScope(shield=True):
                await self._redis.delete(session_key(session_id))

    async def owner(self, session_id: str) -> str | None:
        if self._redis is None:
            return None
        value = await self._redis.get(session_key(session_id))
        return value.decode() if isinstance(value, bytes) else value

    async def forward(self, owner: str, session_id: str, body: bytes, headers: dict[str, str]) -> None:
        assert self._redis is not None
        payload = {"session_id": session_id, "body": body.decode("utf-8", "replace"), "headers": headers}
        await self._redis.publish(replica_channel(owner), json.dumps(payload))

    async def _refresh(self) -> None:
        while True:
            await anyio.sleep(REFRESH_EVERY_S)
            if self._redis is not None and self.local:
                async with self._redis.pipeline(transaction=False) as pipe:
                    for session_id in list(self.local):
                        pipe.set(session_key(session_id), self.replica_id, ex=SESSION_TTL_S)
                    await pipe.execute()

    async def _listen(self, pubsub: Any) -> None:
        async for message in pubsub.listen():
            if message.get("type") != "message":
                continue
            try:
                payload = json.loads(message["data"])
                await self._deliver(payload["session_id"], payload["body"].encode(), payload["headers"])
            except Exception:
                logger.exception("sse_relay.delivery_failed")

    async def _deliver(self, session_id: str, body: bytes, headers: dict[str, str]) -> None:
        """Hand a relayed message to the local SSE session, through the SDK's own message endpoint."""
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": "/messages/",
            "raw_path": b"/messages/",
            "root_path": "",
            "query_string": f"session_id={session_id}".encode(),
            "headers": [(k.encode(), v.encode()) for k, v in headers.items()],
            "client": None,
            "server": None,
        }
        sent = False

        async def receive() -> Message:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        status = 0

        async def send(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        await self.sse_app(scope, receive, send)
        if status != 202:
            logger.warning("sse_relay.rejected session_id=%s status=%d", session_id[:8], status)


class _SseStream:
    """``GET /sse``: the SDK's stream, with the session id it announces registered for the other replicas."""

    def __init__(self, relay: SseRelay) -> None:
        self.relay = relay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        session_id: str | None = None

        async def sniff(message: Message) -> None:
            nonlocal session_id
            if session_id is None and message["type"] == "http.response.body":
                found = _SESSION_IN_ENDPOINT.search(message.get("body", b""))
                if found:
                    session_id = found.group(1).decode()
                    await self.relay.register(session_id)
            await send(message)

        try:
            await self.relay.sse_app(scope, receive, sniff)
        finally:
            if session_id is not None:
                await self.relay.unregister(session_id)


class _SseMessages:
    """``POST /messages/``: local sessions go to the SDK, sessions held by another replica are relayed."""

    def __init__(self, relay: SseRelay) -> None:
        self.relay = relay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ids = parse_qs(scope.get("query_string", b"").decode()).get("session_id", [])
        session_id = ids[0] if ids else ""
        owner = None if not session_id or session_id in self.relay.local else await self.relay.owner(session_id)
        if owner is None or owner == self.relay.replica_id:
            await self.relay.sse_app(scope, receive, send)
            return
        try:
            body = await read_body(receive, MAX_MESSAGE_BYTES)
        except BodyTooLarge:
            await Response("Request body too large", status_code=413)(scope, receive, send)
            return
        if body is None:
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        kept = {k: headers[k] for k in ("host", "content-type", "origin") if k in headers}
        await self.relay.forward(owner, session_id, body, kept)
        await Response("Accepted", status_code=202)(scope, receive, send)
