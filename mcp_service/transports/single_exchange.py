"""A single-exchange lane in front of the SDK's stateless Streamable HTTP transport (``MCP_SINGLE_EXCHANGE``).

Stateless ``/mcp`` answers each POST on its own, yet the SDK's transport still builds, per POST, what a
session needs: a transport with memory streams, a task group, a JSON-RPC dispatcher and a server loop
around the one request the POST carries, CPU that on a busy box is latency (figures and why the lane is
opt-in: docs/decisions/0010-single-exchange-lane.md).

The lane answers the plain case itself: a POST whose body is one JSON-RPC request other than
``initialize`` (as the SDK transport classifies it, with the same ``mcp_types.jsonrpc_message_adapter``),
with JSON content, an Accept that takes JSON, and no protocol-version header or a handshake-era one. It
runs that request through the SDK's own request kernel (``serve_one``: the server middleware, surface
validation, tool dispatch, output validation and result serialization that every transport uses) and
writes the reply the transport would write: status 200, the JSON-RPC response or error, errors mapped as
the SDK's dispatcher maps them. Everything else goes to the SDK transport untouched (GET, DELETE,
notifications, responses, batches, ``initialize``, malformed bodies, unknown versions), so its validation
messages and status codes stay the SDK's; the SDK's own body-size limit and transport security
(Content-Type, Host, Origin) sit in front of the lane as they sit in front of the transport.
``tests/mcp_service/test_single_exchange.py`` sends the same requests both ways and compares.

It leans on SDK internals (a private module's dispatch context, the session manager's lifespan state),
so nothing imports this module unless the setting is on, and ``streamable_http`` imports it only after
checking the installed SDK is the verified release and has every name below (``LANE_NEEDS`` there lists
them; a test keeps the two lists equal).
"""

from __future__ import annotations

import logging

import pydantic_core
from mcp.server._streamable_http_modern import _SingleExchangeDispatchContext
from mcp.server.connection import Connection
from mcp.server.runner import serve_one
from mcp.server.streamable_http import DEFAULT_NEGOTIATED_VERSION, check_accept_headers
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import RequestBodyLimitMiddleware, TransportSecurityMiddleware
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp.shared.jsonrpc_dispatcher import handler_exception_to_error_data, progress_token_from_params
from mcp.shared.message import ServerMessageMetadata
from mcp.shared.transport_context import TransportContext
from mcp_types import ErrorData, JSONRPCError, JSONRPCRequest, JSONRPCResponse, jsonrpc_message_adapter
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS
from pydantic import ValidationError
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_service.transports.bodies import read_body, replaying

logger = logging.getLogger(__name__)


def plain_request(body: bytes) -> JSONRPCRequest | None:
    """The request in ``body`` if the SDK transport would read it as one JSON-RPC request other than
    ``initialize`` (parsed and validated exactly as it does), else ``None``."""
    try:
        message = jsonrpc_message_adapter.validate_python(pydantic_core.from_json(body), by_name=False)
    except (ValueError, ValidationError):
        return None
    if not isinstance(message, JSONRPCRequest) or message.method == "initialize":
        return None
    return message


class SingleExchangeLane:
    """ASGI app for ``/mcp``: the lane for plain requests, ``fallback`` (the SDK transport) for the rest."""

    def __init__(self, session_manager: StreamableHTTPSessionManager, fallback: ASGIApp) -> None:
        if not session_manager.stateless or not session_manager.json_response:
            raise ValueError("the single-exchange lane serves stateless JSON-response Streamable HTTP only")
        self._server = session_manager.app
        self._manager = session_manager
        self._security = TransportSecurityMiddleware(session_manager.security_settings)
        self.fallback = fallback
        self._max_body = session_manager.max_request_body_size

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
        message = plain_request(body)
        if message is None:
            await self.fallback(scope, replaying(body, receive), send)
            return
        reply = await self._answer(request, message, version or DEFAULT_NEGOTIATED_VERSION)
        content = reply.model_dump_json(by_alias=True, exclude_unset=True)
        await Response(content, media_type="application/json")(scope, receive, send)

    async def _answer(self, request: Request, message: JSONRPCRequest, version: str) -> JSONRPCResponse | JSONRPCError:
        dctx = _SingleExchangeDispatchContext(
            transport=TransportContext(kind="streamable-http", can_send_request=False, headers=request.headers),
            request_id=message.id,
            message_metadata=ServerMessageMetadata(request_context=request),
            progress_token=progress_token_from_params(message.params),
        )
        connection = Connection.from_envelope(version, None, None)
        try:
            result = await serve_one(
                self._server, dctx, message.method, message.params, connection=connection,
                lifespan_state=self._manager._lifespan_state,  # pyright: ignore[reportPrivateUsage]
            )  # fmt: skip
        except Exception as exc:
            error = handler_exception_to_error_data(exc)
            if error is None:
                logger.exception("mcp.handler_crashed method=%s", message.method)
                error = ErrorData(code=0, message=str(exc))
            return JSONRPCError(jsonrpc="2.0", id=message.id, error=error)
        return JSONRPCResponse(jsonrpc="2.0", id=message.id, result=result)


def lane_endpoint(session_manager: StreamableHTTPSessionManager, sdk_transport: ASGIApp) -> ASGIApp:
    """The ``/mcp`` app with the lane: the SDK's request-size limit around it, ``sdk_transport`` behind it."""
    lane = SingleExchangeLane(session_manager, sdk_transport)
    return RequestBodyLimitMiddleware(lane, session_manager.max_request_body_size)
