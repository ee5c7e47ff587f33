"""``/mcp``: the MCP SDK's Streamable HTTP transport, stateless with JSON responses, through its public API.

Stateless mode (the 2026-07-28 revision's way) keeps no session in this process, so any replica answers any
request. The optional single-exchange lane that once stood in front of it used SDK internals and was removed
(decision 0048).
"""

from __future__ import annotations

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.types import ASGIApp


def mcp_endpoint(session_manager: StreamableHTTPSessionManager) -> ASGIApp:
    """The ``/mcp`` app: the SDK's Streamable HTTP transport over ``session_manager``."""
    return StreamableHTTPASGIApp(session_manager)
