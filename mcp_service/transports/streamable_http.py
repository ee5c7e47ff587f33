"""``/mcp``: the MCP SDK's Streamable HTTP transport (stateless, JSON responses), and, only when the
``MCP_SINGLE_EXCHANGE`` setting is on, the single-exchange lane (``single_exchange``) in front of it.

The lane reaches into SDK internals, and one SDK release could rename any of them. So with the setting
off (the default) nothing imports it, and with the setting on it is imported only after checking that the
installed ``mcp`` is the release the lane was verified with (``VERIFIED_SDK``) and that every SDK name it
uses is there (``LANE_NEEDS``). Otherwise ``/mcp`` is served by the SDK transport alone and one warning
says why: the service always starts.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import logging
from collections.abc import Sequence

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.types import ASGIApp

logger = logging.getLogger(__name__)

VERIFIED_SDK = "2.3.0"
"""The ``mcp`` release ``tests/mcp_service/test_single_exchange.py`` verified the lane against."""

LANE_NEEDS: tuple[tuple[str, str], ...] = (
    ("mcp.server._streamable_http_modern", "_SingleExchangeDispatchContext"),
    ("mcp.server.connection", "Connection"),
    ("mcp.server.runner", "serve_one"),
    ("mcp.server.streamable_http", "DEFAULT_NEGOTIATED_VERSION"),
    ("mcp.server.streamable_http", "check_accept_headers"),
    ("mcp.server.streamable_http_manager", "StreamableHTTPSessionManager"),
    ("mcp.server.transport_security", "RequestBodyLimitMiddleware"),
    ("mcp.server.transport_security", "TransportSecurityMiddleware"),
    ("mcp.shared.inbound", "MCP_PROTOCOL_VERSION_HEADER"),
    ("mcp.shared.jsonrpc_dispatcher", "handler_exception_to_error_data"),
    ("mcp.shared.jsonrpc_dispatcher", "progress_token_from_params"),
    ("mcp.shared.message", "ServerMessageMetadata"),
    ("mcp.shared.transport_context", "TransportContext"),
    ("mcp_types", "ErrorData"),
    ("mcp_types", "JSONRPCError"),
    ("mcp_types", "JSONRPCRequest"),
    ("mcp_types", "JSONRPCResponse"),
    ("mcp_types", "jsonrpc_message_adapter"),
    ("mcp_types.version", "HANDSHAKE_PROTOCOL_VERSIONS"),
)
"""Every SDK name ``single_exchange`` imports, as ``(module, name)``."""

MANAGER_NEEDS = ("_lifespan_state", "app", "json_response", "max_request_body_size", "security_settings", "stateless")
"""The session manager's attributes the lane reads (``_lifespan_state`` is private)."""


def installed_sdk() -> str:
    return importlib.metadata.version("mcp")


def lane_unavailable(
    session_manager: StreamableHTTPSessionManager, sdk_version: str, needs: Sequence[tuple[str, str]] = LANE_NEEDS
) -> str | None:
    """Why the lane cannot serve with this SDK, or ``None`` when it can."""
    if sdk_version != VERIFIED_SDK:
        return f"mcp {sdk_version} is installed; the lane was verified with {VERIFIED_SDK}"
    for module, name in needs:
        try:
            found = hasattr(importlib.import_module(module), name)
        except ImportError:
            found = False
        if not found:
            return f"{module}.{name} is missing from mcp {sdk_version}"
    missing = [name for name in MANAGER_NEEDS if not hasattr(session_manager, name)]
    if missing:
        return f"the session manager has no {', '.join(missing)}"
    if not session_manager.stateless or not session_manager.json_response:
        return "the lane serves stateless JSON-response Streamable HTTP only"
    return None


def mcp_endpoint(
    session_manager: StreamableHTTPSessionManager,
    *,
    single_exchange: bool,
    sdk_version: str | None = None,
    needs: Sequence[tuple[str, str]] = LANE_NEEDS,
) -> ASGIApp:
    """The ``/mcp`` app: the SDK transport, behind the lane when ``single_exchange`` is on and the lane can
    serve with the installed SDK (``sdk_version`` and ``needs`` default to what is installed and used)."""
    sdk_transport = StreamableHTTPASGIApp(session_manager)
    if not single_exchange:
        return sdk_transport
    version = sdk_version if sdk_version is not None else installed_sdk()
    reason = lane_unavailable(session_manager, version, needs)
    if reason is not None:
        logger.warning("mcp.single_exchange_off reason=%r: /mcp is served by the SDK transport alone", reason)
        return sdk_transport
    from mcp_service.transports.single_exchange import lane_endpoint

    logger.info("mcp.single_exchange_on mcp=%s", version)
    return lane_endpoint(session_manager, sdk_transport)
