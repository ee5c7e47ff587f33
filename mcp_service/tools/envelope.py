"""Tool results in the spec's envelope, mapped in one place.

Success: the spec's JSON with ``"status": "success"`` as structured content, and as text a short
rendering for a reader (``renderings``: numbered citations, document text as quoted snippets), not the
same JSON again. Failure: ``{"status": "error", "error_type", "message"}`` with ``is_error`` set, and
the message as text. A ``KBError`` carries its own ``error_type``; anything else is a bug: it is logged
with its traceback and the caller sees ``internal`` and no detail.
"""

from __future__ import annotations

import base64
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio.to_thread
import pydantic_core
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, ImageContent
from pydantic import BaseModel

from lib.config import SearchSettings
from lib.errors import KBError, bounded, bounded_details
from mcp_service.search_lane import run_search
from mcp_service.tools.document_content import mark_document_content, marked_blocks, server_block
from mcp_service.tools.renderings import render, render_error

logger = logging.getLogger(__name__)

INTERNAL_MESSAGE = "The server failed unexpectedly; the error has been logged"
BOUNDED_DATA_CHARS = 200
"""The longest string an MCP error's ``data`` carries (what the SDK did not find, echoed)."""


def _result(payload: dict[str, Any], *, is_error: bool = False, jsonable: bool = False) -> CallToolResult:
    """``jsonable``: ``payload`` holds JSON values already (a model's ``model_dump(mode="json")``): not walked again."""
    if not jsonable:
        payload = pydantic_core.to_jsonable_python(payload, fallback=str)
    if is_error:
        text = render_error(str(payload["error_type"]), str(payload["message"]))
        return CallToolResult(content=[server_block(text)], structured_content=payload, is_error=True)
    # Document text marked in both (``document_content``): its fields in the JSON, its quoted lines as blocks.
    return CallToolResult(content=marked_blocks(render(payload)), structured_content=mark_document_content(payload))


@dataclass(frozen=True)
class WithImage:
    """A tool's JSON and a PNG to send with it as an image content block (``get_page_image``)."""

    payload: BaseModel
    png: bytes


def success(payload: BaseModel | dict[str, Any] | WithImage) -> CallToolResult:
    image = payload.png if isinstance(payload, WithImage) else None
    if isinstance(payload, WithImage):
        payload = payload.payload
    model = isinstance(payload, BaseModel)
    body = payload.model_dump(mode="json") if isinstance(payload, BaseModel) else dict(payload)
    result = _result({"status": "success", **body}, jsonable=model)
    if image is not None:
        data = base64.b64encode(image).decode("ascii")
        result.content.append(ImageContent(type="image", data=data, mime_type="image/png"))
    return result


def error(error_type: str, message: str) -> CallToolResult:
    return _result({"status": "error", "error_type": error_type, "message": bounded(message)}, is_error=True)


async def run_tool(
    tool: str, work: Callable[[], BaseModel | dict[str, Any] | WithImage], *, search: SearchSettings | None = None
) -> CallToolResult:
    """Run blocking ``lib`` work on a worker thread and wrap its outcome in the envelope. A search passes
    ``search`` (``settings.search``) and runs on the search lane (``mcp_service.search_lane``), which may refuse
    it as ``overloaded``."""
    try:
        if search is None:
            payload = await anyio.to_thread.run_sync(work)
        else:
            payload = await run_search(work, search)
    except KBError as exc:
        logger.info("tool.failed tool=%s error_type=%s", tool, exc.error_type)
        return error(exc.error_type, exc.message)
    except Exception:
        logger.exception("tool.crashed tool=%s", tool)
        return error("internal", INTERNAL_MESSAGE)
    return success(payload)


async def bounded_rpc_errors(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """MCP server middleware, outermost: a JSON-RPC error keeps its code, but its message and data are bounded
    (``lib.errors.bounded``): the SDK echoes what it did not find (a method, a prompt's name, a resource's URI)
    in both, and a caller may send a megabyte of it."""
    try:
        return await call_next(ctx)
    except MCPError as exc:
        data = exc.error.data
        if isinstance(data, str):
            data = bounded(data, BOUNDED_DATA_CHARS)
        elif isinstance(data, dict):
            data = bounded_details(data)
        raise MCPError(code=exc.error.code, message=bounded(exc.error.message), data=data) from None


async def envelope_sdk_errors(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
    """MCP server middleware: the SDK's own tool failures (arguments that fail the input schema, an
    unknown tool name) arrive as bare text; give them the envelope too, as ``invalid_argument``.

    The chain hands back the result already in wire form (camelCase keys); only its content changes."""
    result = await call_next(ctx)
    if (
        ctx.method == "tools/call"
        and isinstance(result, dict)
        and result.get("isError")
        and result.get("structuredContent") is None
    ):
        blocks = result.get("content") or []
        text = " ".join(str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text")
        wire = error("invalid_argument", text or "The tool call was rejected").model_dump(
            by_alias=True, mode="json", exclude_none=True
        )
        return {**result, "content": wire["content"], "structuredContent": wire["structuredContent"]}
    return result
