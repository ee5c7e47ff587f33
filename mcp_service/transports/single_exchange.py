"""A single-exchange lane in front of the SDK's stateless Streamable HTTP transport.

Stateless ``/mcp`` answers each POST on its own, yet the SDK's transport still builds, per POST, what a
session needs: a transport with memory streams, a task group, a JSON-RPC dispatcher and a server loop
around the one request the POST carries. Measured with the benchmark's store, that machinery is about
a sixth of the service's CPU for a ``search_policy`` call, and on a busy box CPU is latency.

The lane answers the plain case itself: a POST whose body is one JSON-RPC request other than
``initialize``, with JSON content, an Accept that takes JSON, and no protocol-version header or a
handshake-era one. It runs that request through the SDK's own request kernel (``serve_one``: the
server middleware, surface validation, tool dispatch, output validation and result serialization that
every transport uses) and writes the reply the transport would write: status 200, the JSON-RPC
response or error, errors mapped as the SDK's dispatcher maps them. Everything else goes to the SDK
transport untouched (GET, DELETE, notifications, responses, batches, ``initialize``, malformed bodies,
unknown versions), so its validation messages and status codes stay the SDK's; the SDK's own body-size
limit and transport security (Content-Type, Host, Origin) sit in front of the lane as they sit in front
of the transport.
``tests/mcp_service/test_single_exchange.py`` sends the same requests both ways and compares.

It leans on SDK internals (``serve_one``, the manager's lifespan state, the modern entry's dispatch
context), which is why ``mcp`` is pinned; the differential test fails if a new SDK answers differently.
"""

from __future__ import annotations

import json
import logging
from typing import Any

from mcp.server._streamable_http_modern import _SingleExchangeDispatchContext
from mcp.server.connection import Connection
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_one
from mcp.server.streamable_http import DEFAULT_NEGOTIATED_VERSION, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data, progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import ErrorData, JSONRPCError, JSONRPCResponse
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_service.transports.bodies import read_body, replaying

logger = logging.getLogger(__name__)


def _plain_request(body: bytes) -> dict[str, Any] | None:
    """The JSON-RPC request in ``body`` if it is one the lane answers, else ``None``."""
    try:
        message = json.loads(body)
    except ValueError:
        return None
    if not isinstance(message, dict) or set(message) - {"jsonrpc", "id", "method", "params"}:
        return None
    request_id, method, params = message.get("id"), message.get("method"), message.get("params")
    if (
        message.get("jsonrpc") != "2.0"
        or isinstance(request_id, bool)
        or not isinstance(request_id, str | int)
        or not isinstance(method, str)
        or method == "initialize"
        or not (params is None or isinstance(params, dict))
    ):
        return None
    return message


class SingleExchangeLane:
    """ASGI app for ``/mcp``: the lane for plain requests, ``fallback`` (the SDK transport) for the rest."""

    def __init__(self, server: MCPServer, session_manager: StreamableHTTPSessionManager, fallback: ASGIApp) -> None:
        if not session_manager.stateless or not session_manager.json_response:
            raise ValueError("the single-exchange lane serves stateless JSON-response Streamable HTTP only")
        self._server = server._lowlevel_server  # pyright: ignore[reportPrivateUsage]
        self._manager = session_manager
        self._security = TransportSecurityMiddleware(session_manager.security_settings)
        self.fallback = fallback
        self._max_body = session_manager.asgi_app.max_body_size

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.fallback(scope, receive, send)
            return
        request = Request(scope, receive)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER)
        has_json, _ = check_accept_headers(request)
        if not has_json or (version is not None and version not in HANDSHAKE_PROTOCOL_VERSIONS):
            await self.fallback(scope, receive, send)
            return
        rejected = await self._security.validate_request(request, is_post=True)
        if rejected is not None:
            await rejected(scope, receive, send)
            return
        body = await read_body(receive, self._max_body)  # never over: the SDK's size limit wraps the lane
        if body is None:
            return
        message = _plain_request(body)
        if message is None:
            await self.fallback(scope, replaying(body, receive), send)
            return
        reply = await self._answer(request, message, version or DEFAULT_NEGOTIATED_VERSION)
        content = reply.model_dump_json(by_alias=True, exclude_unset=True)
        await Response(content, media_type="application/json")(scope, receive, send)

    async def _answer(self, request: Request, message: dict[str, Any], version: str) -> JSONRPCResponse | JSONRPCError:
        request_id, method, params = message["id"], message["method"], message.get("params")
        dctx = _SingleExchangeDispatchContext(
            transport=TransportContext(kind="streamable-http", can_send_request=False, headers=request.headers),
            request_id=request_id,
            message_metadata=ServerMessageMetadata(request_context=request),
            progress_token=progress_token_from_params(params),
        )
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self._server, dctx, method, params, connection=connection,
                lifespan_state=self._manager._lifespan_state,  # pyright: ignore[reportPrivateUsage]
            )  # fmt: skip
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:
                logger.exception("mcp.handler_crashed method=%s", method)
                error = ErrorData(code=0, message=str(exc))
            return JSONRPCError(jsonrpc="2.0", id=request_id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=request_id, result=result)


def mcp_endpoint(server: MCPServer, session_manager: StreamableHTTPSessionManager) -> ASGIApp:
    """The ``/mcp`` app: the SDK's request-size limit around the lane, the SDK transport behind it."""
    lane = SingleExchangeLane(server, session_manager, StreamableHTTPASGIApp(session_manager))
    return RequestBodyLimitMiddleware(lane, session_manager.asgi_app.max_body_size)
