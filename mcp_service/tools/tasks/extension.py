"""The MCP tasks extension (``io.modelcontextprotocol/tasks``, SEP-2663) for a server's long tools, through the
SDK's public ``Extension`` API.

A ``tools/call`` of one of ``long_tools`` (the ingestions) from a client that declared the extension on that request
(2026-07-28: ``_meta`` ``clientCapabilities.extensions``) answers at once with a task (``resultType: "task"``,
its id, ``working``); the call runs on in this process. ``tasks/get`` polls it: the status, a status message
saying the phase and percentage (the same progress ``notifications/progress`` would carry, which the extension
does not use), then the tool's result inlined (``completed``, tool errors included as ``isError``) or the
JSON-RPC error (``failed``). ``tasks/cancel`` acknowledges and asks the work to stop at its next checkpoint
(between phases and embedding slices; an OCR pass runs to its end first): it then ends ``cancelled`` with
nothing of it kept, or ``completed`` when it was already storing. ``tasks/update`` acknowledges (these tasks
never ask for input). A client that did not declare the extension gets the plain synchronous answer, and
``tasks/*`` answers it -32021 (missing required client capability). ``tasks/result`` and ``tasks/list`` were
removed from the extension: -32601 like any unknown method.

Each task is its caller's and bounded (``tasks.store``). Why in this process, and what replicas do:
docs/decisions/0052-long-work-progress-and-tasks.md.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.mcpserver import Extension, MethodBinding, require_client_extension
from mcp.shared.exceptions import MCPError
from mcp.shared.inbound import MCP_NAME_HEADER, decode_header_value
from mcp_types import (
    HEADER_MISMATCH,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    CallToolRequestParams,
    CancelTaskRequestParams,
    GetTaskRequestParams,
    RequestParams,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import BaseModel, Field

from lib.callers import current_caller
from lib.config import JobSettings
from lib.errors import OverloadedError
from mcp_service.tools.envelope import error
from mcp_service.tools.tasks.store import Task, TaskStore, running_task

logger = logging.getLogger(__name__)

TASKS = "io.modelcontextprotocol/tasks"
VERSIONS = frozenset(MODERN_PROTOCOL_VERSIONS)
"""The revisions the extension exists on (its capability is per request, from 2026-07-28)."""


class UpdateTaskRequestParams(RequestParams):
    """``tasks/update``: responses to a task's input requests (these tasks make none)."""

    task_id: str
    input_responses: dict[str, Any] = Field(default_factory=dict)


def _owner() -> str:
    return current_caller.get() or "anonymous"


def declared(ctx: ServerRequestContext[Any, Any]) -> bool:
    """Whether this request's client declared the tasks extension."""
    capabilities = ctx.session.client_capabilities
    return bool(capabilities and capabilities.extensions and TASKS in capabilities.extensions)


def _wire(result: HandlerResult) -> dict[str, Any]:
    if isinstance(result, BaseModel):
        return result.model_dump(by_alias=True, mode="json", exclude_none=True)
    return dict(result) if isinstance(result, dict) else {"content": []}


class TasksExtension(Extension):
    """The tasks extension over ``long_tools``: their calls become tasks for clients that take them."""

    identifier = TASKS

    def __init__(self, long_tools: frozenset[str], settings: JobSettings) -> None:
        self.long_tools = long_tools
        self.store = TaskStore(settings)
        self._running: set[asyncio.Task[None]] = set()

    def methods(self) -> list[MethodBinding]:
        return [
            MethodBinding("tasks/get", GetTaskRequestParams, self.get, protocol_versions=VERSIONS),
            MethodBinding("tasks/update", UpdateTaskRequestParams, self.update, protocol_versions=VERSIONS),
            MethodBinding("tasks/cancel", CancelTaskRequestParams, self.cancel, protocol_versions=VERSIONS),
        ]

    async def intercept_tool_call(
        self, params: CallToolRequestParams, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        if params.name not in self.long_tools or ctx.protocol_version not in VERSIONS or not declared(ctx):
            return await call_next(ctx)
        try:
            task = self.store.create(_owner(), params.name)
        except OverloadedError as exc:
            logger.info("task.refused tool=%s reason=%s", params.name, exc.message)
            return error(exc.error_type, exc.message)
        runner = asyncio.get_running_loop().create_task(self._run(task, ctx, call_next))
        self._running.add(runner)
        runner.add_done_callback(self._running.discard)
        logger.info("task.created task_id=%s tool=%s caller=%s", task.task_id, task.tool, task.owner)
        return {"resultType": "task", **task.wire(detailed=False)}

    async def _run(self, task: Task, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> None:
        """The tool call, after its answer (the task) was sent; its outcome goes to the task."""
        running_task.set(task)
        try:
            result = _wire(await call_next(ctx))
        except MCPError as exc:
            task.finish("failed", error=exc.error.model_dump(by_alias=True, mode="json", exclude_none=True))
        except Exception:
            logger.exception("task.crashed task_id=%s tool=%s", task.task_id, task.tool)
            task.finish("failed", error={"code": INTERNAL_ERROR, "message": "The task failed unexpectedly"})
        else:
            task.finish("cancelled" if task.stopped_by_cancel else "completed", result=result)
        logger.info("task.finished task_id=%s tool=%s status=%s", task.task_id, task.tool, task.status)

    def _task(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> Task:
        """The caller's task named by a ``tasks/*`` request, after its capability and routing header are checked."""
        require_client_extension(ctx, TASKS)
        headers = getattr(ctx.request, "headers", None)
        named = headers.get(MCP_NAME_HEADER) if headers is not None else None
        if named is not None and decode_header_value(named) != task_id:
            raise MCPError(code=HEADER_MISMATCH, message=f"{MCP_NAME_HEADER} header does not match taskId")
        task = self.store.get(_owner(), task_id)
        if task is None:
            raise MCPError(code=INVALID_PARAMS, message="Unknown task", data={"taskId": task_id[:64]})
        return task

    async def get(self, ctx: ServerRequestContext[Any, Any], params: GetTaskRequestParams) -> dict[str, Any]:
        return self._task(ctx, params.task_id).wire(detailed=True)

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateTaskRequestParams) -> dict[str, Any]:
        self._task(ctx, params.task_id)
        return {}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: CancelTaskRequestParams) -> dict[str, Any]:
        task = self._task(ctx, params.task_id)
        task.cancel()
        logger.info("task.cancel_requested task_id=%s tool=%s status=%s", task.task_id, task.tool, task.status)
        return {}
