"""The two SSE routes of every server, over ``SseRelay``: ``GET /sse`` registers the session the SDK
announces, ``POST /messages/`` hands a message to the SDK when the session is here or unknown, and relays
it to the holder otherwise, answering what the holder's SDK answered or 503 (``undeliverable``)."""

from __future__ import annotations

import logging
import re
from urllib.parse import parse_qs

import pydantic_core
from mcp_types import INTERNAL_ERROR, ErrorData, JSONRPCError, JSONRPCRequest, jsonrpc_message_adapter
from pydantic import ValidationError
from starlette.responses import Response
from starlette.types import Message, Receive, Scope, Send

from mcp_service.tools.access import ACCESS_HEADER
from mcp_service.transports.bodies import BodyTooLarge, read_body
from mcp_service.transports.sse_relay import REDIS_ERRORS, SseRelay, unreachable_reason

logger = logging.getLogger(__name__)

MAX_MESSAGE_BYTES = 4 * 1024 * 1024
"""As the SDK's own message endpoint allows."""
FORWARDED_HEADERS = ("host", "content-type", "origin", ACCESS_HEADER)
"""What the SDK's transport security checks, so the holder checks the client's request, not the relay; and what
``auth`` decided a read-only caller may not do (``tools.access``)."""
_SESSION_IN_ENDPOINT = re.compile(rb"session_id=([0-9a-f]{32})")


def undeliverable(body: bytes, reason: str) -> Response:
    """503 with a JSON-RPC error for the request in ``body`` (id ``null`` when it has none)."""
    try:
        message = jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
    except (ValueError, ValidationError):
        message = None
    request_id = message.id if isinstance(message, JSONRPCRequest) else None
    text = f"The message could not be delivered to its SSE session ({reason}); retry, or reconnect to /sse"
    error = JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=INTERNAL_ERROR, message=text))
    return Response(
        error.model_dump_json(by_alias=True, exclude_unset=True),
        status_code=503,
        media_type="application/json",
        headers={"Retry-After": "1"},
    )


class SseStream:
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


class SseMessages:
    """``POST /messages/``: local and unknown sessions go to the SDK, sessions held elsewhere are relayed."""

    def __init__(self, relay: SseRelay) -> None:
        self.relay = relay

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        ids = parse_qs(scope.get("query_string", b"").decode()).get("session_id", [])
        session_id = ids[0] if ids else ""
        if not self.relay.on or not session_id or session_id in self.relay.local:
            await self.relay.sse_app(scope, receive, send)
            return
        failure = "the relay cannot reach Redis"
        try:
            owner = await self.relay.owner(session_id)
        except REDIS_ERRORS as exc:
            owner, failure = None, unreachable_reason(exc)
            logger.warning(
                "sse_relay.undeliverable session_id=%s reason=redis_unreachable error=%s",
                session_id[:8],
                type(exc).__name__,
            )
        else:
            if owner is None or owner == self.relay.replica_id:
                await self.relay.sse_app(scope, receive, send)  # nobody holds it: the SDK's 404
                return
        try:
            body = await read_body(receive, MAX_MESSAGE_BYTES)
        except BodyTooLarge:
            await Response("Request body too large", status_code=413)(scope, receive, send)
            return
        if body is None:
            return
        if owner is None:
            await undeliverable(body, failure)(scope, receive, send)
            return
        headers = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
        kept = {k: headers[k] for k in FORWARDED_HEADERS if k in headers}
        try:
            reply = await self.relay.forward(owner, session_id, body, kept)
        except REDIS_ERRORS as exc:
            logger.warning(
                "sse_relay.undeliverable session_id=%s reason=redis_unreachable error=%s",
                session_id[:8],
                type(exc).__name__,
            )
            await undeliverable(body, unreachable_reason(exc))(scope, receive, send)
            return
        if reply is None:
            logger.warning(
                "sse_relay.undeliverable session_id=%s reason=holder_silent owner=%s", session_id[:8], owner[:8]
            )
            await undeliverable(body, "the replica holding the session did not answer")(scope, receive, send)
            return
        await Response(reply.body, status_code=reply.status, media_type=reply.content_type)(scope, receive, send)
