"""Terminal progress for the CLI's flow runs, read from where any process can see it: the revisions in Redis.

``lib.policies.ingest`` records each revision's phase and percent on its registry entry, so the same display
works whether the flow runs in this process or on a worker. Prefect's own console log is turned down
while a bar is shown (the runs still log to the Prefect API, so the UI keeps every line).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from types import TracebackType

from rich.console import Console
from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TextColumn, TimeElapsedColumn

from lib.errors import KBError
from lib.policies.models import RevisionStatus
from lib.policies.registry import PolicyRegistry

POLL_SECONDS = 0.25


class _NotPrefect(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        return not record.name.startswith("prefect")


def quiet_prefect_console(verbose: bool) -> None:
    """Show Prefect's log lines on the terminal only with ``--verbose``; the CLI prints results and errors.

    Only the root logger's (console) handlers are filtered: flow and task run logs still reach the
    Prefect API through the handlers Prefect attaches to its own loggers, so its UI keeps every line.
    """
    if verbose:
        return
    for handler in logging.getLogger().handlers:
        if not any(isinstance(f, _NotPrefect) for f in handler.filters):
            handler.addFilter(_NotPrefect())


class RevisionProgress:
    """One bar per ``(source, revision_id)``, polled from the registry until the ``with`` block ends."""

    def __init__(self, registry: PolicyRegistry, targets: Sequence[tuple[str, str]], *, title: str = "") -> None:
        self._registry = registry
        self._targets = list(dict.fromkeys(targets))
        self._progress = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            TextColumn("{task.percentage:>3.0f}%"),
            TimeElapsedColumn(),
            console=Console(stderr=True),
        )
        self._tasks: dict[tuple[str, str], TaskID] = {}
        self._title = title
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, name="policy-kb-progress", daemon=True)

    def __enter__(self) -> RevisionProgress:
        if self._title:
            self._progress.console.print(self._title)
        for source, revision_id in self._targets:
            self._tasks[(source, revision_id)] = self._progress.add_task(f"{source} {revision_id}: waiting", total=100)
        self._progress.start()
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self._stop.set()
        self._thread.join()
        self._refresh()
        self._progress.stop()

    def _poll(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            self._refresh()

    def _refresh(self) -> None:
        for (source, revision_id), task in self._tasks.items():
            try:
                revision = self._registry.get_revision(source, revision_id)
            except KBError:
                continue
            phase = revision.progress_phase or "registered"
            if revision.resolvable and not revision.progress_phase:
                phase, percent = "in place", 100.0
            else:
                percent = revision.progress_percent
            if revision.status == RevisionStatus.FAILED:
                phase = "failed"
            self._progress.update(task, completed=percent, description=f"{source} {revision_id}: {phase}")
