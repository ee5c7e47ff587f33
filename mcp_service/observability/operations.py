"""MCP server middleware timing every request: ``mcp_server_operation_duration_seconds`` (OpenTelemetry's
``mcp.server.operation.duration``) and, for ``tools/call``, ``policy_kb_tool_calls_total`` by outcome.

It sits outside the envelope middleware, so the outcome is the ``error_type`` the client reads. Labels come
from the client's request, so they are bounded here: a method outside ``KNOWN_METHODS`` is ``other`` and a
tool this server does not have is ``unknown`` (a caller cannot grow the label set)."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp_types import Tool

from lib.observability.metrics import operation_duration, tool_calls

KNOWN_METHODS = frozenset(
    {
        "initialize",
        "ping",
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/read",
        "resources/templates/list",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
        "notifications/initialized",
        "notifications/cancelled",
        "notifications/progress",
        "notifications/roots/list_changed",
    }
)


def outcome(result: HandlerResult) -> str:
    """``success``, or the error a ``tools/call`` result carries: the envelope's ``error_type``, else ``tool_error``."""
    if not isinstance(result, dict) or not result.get("isError"):
        return "success"
    structured = result.get("structuredContent")
    error_type = structured.get("error_type") if isinstance(structured, dict) else None
    return error_type if isinstance(error_type, str) else "tool_error"


class OperationMetrics:
    """``ServerMiddleware`` of one server (``server`` is its name in the metrics); ``list_tools`` is the server's
    own, asked once for the tool names it may label with."""

    def __init__(self, server: str, list_tools: Callable[[], Awaitable[Iterable[Tool]]]) -> None:
        self.server = server
        self.list_tools = list_tools
        self.tools: frozenset[str] | None = None

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method if ctx.method in KNOWN_METHODS else "other"
        tool = ""
        if method == "tools/call":
            if self.tools is None:
                self.tools = frozenset(t.name for t in await self.list_tools())
            name = ctx.params.get("name") if ctx.params else None
            tool = name if isinstance(name, str) and name in self.tools else "unknown"
        started = time.perf_counter()
        error_type = ""
        try:
            result = await call_next(ctx)
        except BaseException as exc:
            code = getattr(getattr(exc, "error", None), "code", None)
            error_type = str(code) if code is not None else type(exc).__name__
            if method == "tools/call":
                tool_calls.labels(self.server, tool, error_type).inc()
            raise
        else:
            if method == "tools/call":
                result_outcome = outcome(result)
                tool_calls.labels(self.server, tool, result_outcome).inc()
                error_type = "" if result_outcome == "success" else result_outcome
            return result
        finally:
            operation_duration.labels(self.server, method, tool, error_type).observe(time.perf_counter() - started)
