"""What a read-only caller sees of a server's tools: only the ones it may call, and a tool error, not a dropped
session, when it calls a write tool anyway.

Who the caller is is decided by the HTTP auth middleware (``mcp_service.auth``), which knows the key or token;
the MCP request only carries the outcome. For a caller that may not write, ``auth`` sets ``ACCESS_HEADER`` on the
request to the credential it would need (``policy:write``, or the full API key), replacing any the client
sent, and lets the MCP traffic through; a header can only take rights away, so a client gains nothing by sending
one. The SSE relay forwards it with the message (``transports.sse_routes.FORWARDED_HEADERS``), so the replica
holding the session sees it too.

``ReadOnlyAccess`` is a server middleware: for such a request ``tools/list`` lists only the read tools
(``registration.write_tools``), and ``tools/call`` of a write tool answers the envelope's error
(``error_type`` ``forbidden``, the message naming what is needed) with ``isError`` set, on the request's own
stream: an SSE session goes on. Over stdio there is no header: the process's user may do everything.
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from starlette.types import Scope

from mcp_service.tools.envelope import error
from mcp_service.tools.registration import write_tools

ACCESS_HEADER = "x-policy-kb-write-needs"
"""Set by ``auth`` on the requests of a caller that may only read: what writing would need."""


def read_only(scope: Scope, needs: str) -> Scope:
    """``scope`` with ``ACCESS_HEADER`` set to ``needs``, and no other value of it the client sent."""
    name = ACCESS_HEADER.encode("latin-1")
    headers = [(k, v) for k, v in scope["headers"] if k.lower() != name]
    return {**scope, "headers": [*headers, (name, needs.encode("latin-1"))]}


def needed_to_write(request: Any) -> str | None:
    """What the caller of this request would need to write, or ``None`` when it may (or there is no request)."""
    headers = getattr(request, "headers", None)
    return headers.get(ACCESS_HEADER) if headers is not None else None


class ReadOnlyAccess:
    """Server middleware: a read-only caller lists the read tools only, and a write call is a tool error."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self._writes: frozenset[str] | None = None

    async def writes(self) -> frozenset[str]:
        if self._writes is None:
            self._writes = write_tools(await self.server.list_tools())
        return self._writes

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        if ctx.method not in ("tools/list", "tools/call"):
            return await call_next(ctx)
        needs = needed_to_write(ctx.request)
        if needs is None:
            return await call_next(ctx)
        writes = await self.writes()
        if ctx.method == "tools/call":
            name = (ctx.params or {}).get("name")
            if name in writes:
                message = f"'{name}' writes, and this credential may only read: it needs {needs}"
                return error("forbidden", message).model_dump(by_alias=True, mode="json", exclude_none=True)
            return await call_next(ctx)
        result = await call_next(ctx)
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            result = {**result, "tools": [t for t in result["tools"] if t.get("name") not in writes]}
        return result
