"""How every server's tools are registered, and which of them write.

``tool`` registers a handler with its docstring as the description, dedented (``inspect.cleandoc``): the
text agents read carries no source indentation. ``write_tools`` reads the annotations the tools were
registered with, the one place that says whether a tool writes: a tool is a write tool unless its
``readOnlyHint`` is true, and a read-only key (``MCP_READ_API_KEY``) may not call it (``auth``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Iterable

from mcp.server.mcpserver import MCPServer
from mcp_types import CallToolResult, Tool, ToolAnnotations

ToolFn = Callable[..., Awaitable[CallToolResult]]

READ_ONLY = ToolAnnotations(read_only_hint=True, open_world_hint=False)
"""Reads this server's own stores and nothing else."""


def tool(server: MCPServer, annotations: ToolAnnotations) -> Callable[[ToolFn], ToolFn]:
    """``server.tool`` with the handler's docstring, dedented, as the description agents read."""

    def register(fn: ToolFn) -> ToolFn:
        return server.tool(description=inspect.cleandoc(fn.__doc__ or ""), annotations=annotations)(fn)

    return register


def write_tools(tools: Iterable[Tool]) -> frozenset[str]:
    """The names of the tools whose ``readOnlyHint`` is not true."""
    return frozenset(t.name for t in tools if t.annotations is None or t.annotations.read_only_hint is not True)
