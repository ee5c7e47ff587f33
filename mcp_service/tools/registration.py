"""How every server's tools are registered, and which of them write.

``tool`` registers a handler with its docstring as the description, dedented (``inspect.cleandoc``): the
text agents read carries no source indentation. ``date_field`` is every date argument's field. ``write_tools``
reads the annotations the tools were registered with, the one place that says whether a tool writes: a tool is
a write tool unless its ``readOnlyHint`` is true, and a caller who may only read neither lists nor calls it
(``access``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, Tool, ToolAnnotations
from pydantic import Field
from pydantic.json_schema import JsonDict

ToolFn = Callable[..., Awaitable[CallToolResult]]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""Reads this server's own stores and nothing else."""

DATE_SCHEMA: JsonDict = {"format": "date", "examples": ["2025-06-01"]}
"""What every date argument publishes beside its type: an ISO date (YYYY-MM-DD), with an example."""


def date_field(description: str) -> Any:
    """A ``Field`` for a date argument: a string that says it is a date (``format: date``, an example). It stays a
    string to the handler, so a bad date is the tool's own ``invalid_date`` from ``lib``, not a schema error."""
    return Field(description=description, json_schema_extra=DATE_SCHEMA)


def tool(
    server: MCPServer, annotations: ToolAnnotations, meta: dict[str, Any] | None = None
) -> Callable[[ToolFn], ToolFn]:
    """``server.tool`` with the handler's docstring, dedented, as the description agents read (and ``meta``,
    the tool's ``_meta``: a ``ui://`` view to show its results in)."""

    def register(fn: ToolFn) -> ToolFn:
        description = inspect.cleandoc(fn.__doc__ or "")
        return server.tool(description=description, annotations=annotations, meta=meta)(fn)

    return register


def write_tools(tools: Iterable[Tool]) -> frozenset[str]:
    """The names of the tools whose ``readOnlyHint`` is not true."""
    return frozenset(t.name for t in tools if t.annotations is None or t.annotations.read_only_hint is not True)
