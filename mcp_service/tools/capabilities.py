"""What a server says it does, on ``initialize`` and ``server/discover`` alike, and the JSON-RPC errors for
what it does not.

The SDK's ``MCPServer`` registers handlers for prompts and resources whether or not any exist, and derives the
capabilities from the handlers: every server would advertise both and list nothing. ``HonestCapabilities`` is
a server middleware (the SDK's public seam) that, for both handshakes, keeps ``prompts`` and ``resources`` only
when the server has some. Their list methods still answer, with empty lists (the official conformance suite
lists them whatever is advertised, and an empty list is the truth); a name asked for is unknown. Change
notifications are never sent (the servers are built with ``subscriptions=False``), so every ``listChanged`` and
``subscribe`` is false on both. A ``prompts/get`` naming no prompt, or leaving out a required argument, is -32602
(invalid params) on every protocol revision: the SDK lets both fall to a generic error (code 0 before 2026-07-28,
-32603 after); a ``tools/call`` naming no tool is -32602 too, as the specification lists it among protocol errors (the
SDK answers it as a tool result); a ``resources/read`` of no resource is -32602 from the SDK itself. Why a
middleware and not the SDK: docs/decisions/0046-lean-tool-results.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS, Prompt

from lib.errors import bounded

HANDSHAKES = frozenset({"initialize", "server/discover"})


class HonestCapabilities:
    """Server middleware: capabilities as the server really has them (``MCPServer``'s prompts and resources)."""

    def __init__(self, server: MCPServer) -> None:
        self.server = server
        self.tools: frozenset[str] | None = None

    async def served(self) -> tuple[dict[str, Prompt], bool]:
        """The server's prompts by name, and whether it has resources or resource templates."""
        prompts = {prompt.name: prompt for prompt in await self.server.list_prompts()}
        resources = bool(await self.server.list_resources() or await self.server.list_resource_templates())
        return prompts, resources

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        method = ctx.method
        if method == "tools/call":
            await self.known_tool((ctx.params or {}).get("name"))
            return await call_next(ctx)
        if method not in HANDSHAKES and method != "prompts/get":
            return await call_next(ctx)
        prompts, resources = await self.served()
        if method == "prompts/get":
            known_arguments(prompts, ctx.params or {})
        result = await call_next(ctx)
        if method in HANDSHAKES and isinstance(result, dict) and isinstance(result.get("capabilities"), dict):
            result = {**result, "capabilities": advertised(result["capabilities"], bool(prompts), resources)}
        return result

    async def known_tool(self, name: object) -> None:
        """Raise -32602 for a name the server has no tool for (its tools are fixed once registered, so read once)."""
        if self.tools is None:
            self.tools = frozenset(tool.name for tool in await self.server.list_tools())
        if name not in self.tools:
            shown = bounded(name, 200) if isinstance(name, str) else type(name).__name__
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {shown}", data={"name": shown})


def known_arguments(prompts: dict[str, Prompt], params: Mapping[str, Any]) -> None:
    """Raise -32602 for a ``prompts/get`` naming no prompt, or leaving out an argument the prompt requires (the
    SDK would answer -32603, an internal error, for the latter)."""
    name = params.get("name")
    prompt = prompts.get(name) if isinstance(name, str) else None
    if prompt is None:
        shown = bounded(name, 200) if isinstance(name, str) else type(name).__name__
        raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {shown}", data={"name": shown})
    given = params.get("arguments") or {}
    if not isinstance(given, dict):
        return  # the SDK refuses arguments that are not an object of strings (-32602)
    missing = [argument.name for argument in prompt.arguments or [] if argument.required and argument.name not in given]
    if missing:
        message = f"Prompt {name} needs the argument(s): {', '.join(missing)}"
        raise MCPError(code=INVALID_PARAMS, message=message, data={"name": name, "missing": missing})


def advertised(capabilities: dict[str, Any], prompts: bool, resources: bool) -> dict[str, Any]:
    """The SDK's capabilities (wire form) without the ones the server does not serve."""
    kept = dict(capabilities)
    if not prompts:
        kept.pop("prompts", None)
    if not resources:
        kept.pop("resources", None)
    return kept
