"""Progress of a long tool call (an ingestion, a re-index) as MCP ``notifications/progress``.

``lib`` reports progress through a plain callback, ``progress(phase, percent)``, from the worker thread the
tool's work runs on (``envelope.run_tool``). ``reporter`` turns it into the SDK's ``Context.report_progress``
on the event loop, only when the client asked (a ``progressToken`` in the request's ``_meta``): the
notification says the percentage of 100 and the phase (fetch, extract, chunk, embed, store, done). A
notification that cannot be sent is logged and dropped: progress never fails the work it reports on.

Where it reaches the client: over SSE on the session's stream; over Streamable HTTP on the event stream that
answers a request asking for progress (``transports.streamable_http``: every other request gets plain JSON). A
call the client took as a task (``tasks``) sends none: its task's status message carries the phase and
percentage for ``tasks/get``, and a cancelled task's callback stops the work.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

import anyio.from_thread
from mcp.server.mcpserver import Context

from mcp_service.tools.tasks.store import running_task

logger = logging.getLogger(__name__)

Progress = Callable[[str, float], None]


def reporter(ctx: Context[Any, Any]) -> Progress | None:
    """A thread-side ``progress(phase, percent)`` for ``ctx``'s request, or ``None`` when it asked for none. A
    call running as a task (``tasks``) reports to its task instead, which may stop the work (cancelled)."""
    task = running_task.get()
    if task is not None:
        return task.progress
    meta = ctx.request_context.meta
    if not meta or meta.get("progress_token") is None:
        return None
    last = -1.0

    def report(phase: str, percent: float) -> None:
        nonlocal last
        value = round(min(100.0, percent), 1)
        if value <= last:  # the spec: each notification's progress is greater than the last
            return
        last = value
        try:
            anyio.from_thread.run(ctx.report_progress, value, 100.0, phase)
        except Exception as exc:
            logger.info("tool.progress_dropped phase=%s error=%s", phase, type(exc).__name__)

    return report
