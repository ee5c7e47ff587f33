"""The tasks this process runs (the MCP tasks extension, ``tasks.extension``): each one's owner, status, progress
and outcome, bounded in number and lifetime.

A task belongs to the caller that started it (``lib.callers``: an OAuth subject, a key, or the address of an
unauthenticated caller): another caller asking for it is told it does not exist. Its id is 128 random bits, so
it cannot be guessed either. At most ``TASK_MAX_PER_CALLER`` of a caller's tasks work at once and ``TASK_MAX``
are kept in all (working or finished); past either, a new one is refused (``overloaded``) rather than an older
one dropped. A finished task stays readable ``TASK_TTL_SECONDS`` after it finished (its ``ttlMs`` counts from
its creation, so it grows when the work ends); a working task is never dropped.

The store lives in this process: a task is lost when the process stops, and another replica does not know it
(``tasks/get`` there answers an unknown task). Replicas route ``tasks/*`` by the ``Mcp-Name`` header the
extension has clients send (the task id), as the specification intends (decision 0052).

The worker thread reports progress into its task (``progress``) while the event loop reads it; a lock keeps
each task's fields consistent between the two.
"""

from __future__ import annotations

import secrets
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from lib.config import JobSettings
from lib.errors import OverloadedError, WorkCancelledError

Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: frozenset[str] = frozenset({"completed", "failed", "cancelled"})


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass
class Task:
    """One task: who owns it, how far its work has got, and how it ended."""

    task_id: str
    owner: str
    tool: str
    ttl_ms: int
    poll_interval_ms: int
    created: float = field(default_factory=time.time)
    created_at: str = field(default_factory=_now)
    updated_at: str = field(default_factory=_now)
    status: Status = "working"
    status_message: str | None = "started"
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    cancel_requested: bool = False
    stopped_by_cancel: bool = False
    finished: float | None = None
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def wire(self, *, detailed: bool) -> dict[str, Any]:
        """The task as the extension's ``Task`` (``detailed``: with ``result`` or ``error`` once it ended, as
        ``tasks/get`` answers it)."""
        with self.lock:
            task: dict[str, Any] = {
                "taskId": self.task_id,
                "status": self.status,
                "createdAt": self.created_at,
                "lastUpdatedAt": self.updated_at,
                "ttlMs": self.ttl_ms,
                "pollIntervalMs": self.poll_interval_ms,
            }
            if self.status_message:
                task["statusMessage"] = self.status_message
            if detailed and self.status == "completed" and self.result is not None:
                task["result"] = self.result
            if detailed and self.status == "failed" and self.error is not None:
                task["error"] = self.error
            return task

    def progress(self, phase: str, percent: float) -> None:
        """The work's ``progress(phase, percent)`` (``lib.progress``), on its thread: the status message says how
        far it has got; once cancelled, it stops the work at this checkpoint (``done`` is past stopping)."""
        with self.lock:
            if self.cancel_requested and phase != "done" and self.status == "working":
                self.stopped_by_cancel = True
                raise WorkCancelledError(f"The task was cancelled during {phase}; nothing of it was kept")
            if self.status == "working" and not self.cancel_requested:
                self.status_message = f"{phase} {min(100.0, percent):.0f}%"
                self.updated_at = _now()

    def cancel(self) -> None:
        """Ask the work to stop at its next checkpoint (a finished task stays as it ended)."""
        with self.lock:
            if self.status == "working" and not self.cancel_requested:
                self.cancel_requested = True
                self.status_message = "cancelling: the work stops at its next checkpoint"
                self.updated_at = _now()

    def finish(
        self, status: Status, *, result: dict[str, Any] | None = None, error: dict[str, Any] | None = None
    ) -> None:
        with self.lock:
            self.status, self.result, self.error = status, result, error
            self.finished = time.time()
            self.ttl_ms = int((self.finished - self.created) * 1000) + self.ttl_ms
            self.status_message = {"completed": "done", "failed": "failed", "cancelled": "cancelled"}.get(status)
            self.updated_at = _now()

    def expired(self, now: float) -> bool:
        return self.finished is not None and now >= self.created + self.ttl_ms / 1000


running_task: ContextVar[Task | None] = ContextVar("running_task", default=None)
"""The task whose work the current context runs (set by ``tasks.extension`` for a task's tool call): progress
goes to it (``tools.progress``) instead of ``notifications/progress``."""


class TaskStore:
    """The process's tasks, by id, bounded by the ``JobSettings`` it is given."""

    def __init__(self, settings: JobSettings) -> None:
        self.settings = settings
        self._tasks: dict[str, Task] = {}
        self._lock = threading.Lock()

    def create(self, owner: str, tool: str) -> Task:
        """A new working task of ``owner``'s, or ``OverloadedError`` past the bounds."""
        with self._lock:
            self._sweep()
            working = sum(1 for task in self._tasks.values() if task.owner == owner and task.finished is None)
            if working >= self.settings.task_max_per_caller:
                raise OverloadedError(
                    f"{working} of this caller's tasks are still working (TASK_MAX_PER_CALLER); "
                    "poll them with tasks/get, or wait, before starting another"
                )
            if len(self._tasks) >= self.settings.task_max:
                raise OverloadedError("This server holds as many tasks as it keeps (TASK_MAX); retry later")
            task = Task(
                task_id=secrets.token_hex(16),
                owner=owner,
                tool=tool,
                ttl_ms=self.settings.task_ttl_seconds * 1000,
                poll_interval_ms=self.settings.task_poll_interval_ms,
            )
            self._tasks[task.task_id] = task
            return task

    def get(self, owner: str, task_id: str) -> Task | None:
        """``owner``'s task of that id, or ``None`` (unknown, expired, or someone else's: all the same)."""
        with self._lock:
            self._sweep()
            task = self._tasks.get(task_id)
            return task if task is not None and task.owner == owner else None

    def __len__(self) -> int:
        with self._lock:
            return len(self._tasks)

    def _sweep(self) -> None:
        now = time.time()
        for task_id in [task_id for task_id, task in self._tasks.items() if task.expired(now)]:
            del self._tasks[task_id]
