"""One process of the stack, started alone from its Procfile line under mirakuru, for tests that stop,
kill and restart it (the fault tests) while the rest of their stack keeps running.

The process runs its Procfile line as supervisord starts it (``deployments.stack.run``: SIGINT and SIGQUIT at
their defaults, then ``sh -c``) in a process group of its own, with the layout's environment; its output goes
to ``<stack dir>/logs/<name>.log``. ``stop`` (SIGTERM) and ``kill`` (SIGKILL)
reach the whole group and whatever it started (mirakuru marks its descendants); ``restart`` starts the
same line again on the same ports and folders (so redis-server reopens the same AOF).
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
from typing import IO, Any

from mirakuru import Executor
from mirakuru.exceptions import ProcessFinishedWithError

from deployments.stack.health import Health, check
from deployments.stack.layout import PROJECT_ROOT, StackLayout

START_TIMEOUT_S = 180.0
STOP_TIMEOUT_S = 15.0
"""How long a stop waits after SIGTERM before SIGKILL. A Prefect worker that inherited SIGINT ignored never
exited on SIGTERM (decision 0047); ``deployments.stack.run`` now restores it, and the SIGKILL stays the backstop."""


class _HealthExecutor(Executor):
    """A mirakuru executor whose start check is the stack's health check of the process."""

    def __init__(self, name: str, layout: StackLayout, log: IO[Any], timeout: float) -> None:
        super().__init__(
            [sys.executable, "-m", "deployments.stack.run", name],
            cwd=str(PROJECT_ROOT),
            timeout=timeout,
            sleep=0.2,
            envvars=layout.env(dict(os.environ)),
            stdin=None,
            stdout=log,
            stderr=log,
        )
        self._name = name
        self._layout = layout
        self._stopping = False

    def stop(self, stop_signal: int | None = None, expected_returncode: int | None = None) -> _HealthExecutor:
        self._stopping = True
        try:
            return super().stop(stop_signal, expected_returncode)
        finally:
            self._stopping = False

    def _set_timeout(self) -> None:
        """mirakuru waits as long for a stop as for a start; a stop gets ``STOP_TIMEOUT_S``."""
        super()._set_timeout()
        if self._stopping:
            self._endtime = time.time() + STOP_TIMEOUT_S

    def pre_start_check(self) -> bool:
        return check(self._name, self._layout).ok

    def after_start_check(self) -> bool:
        return check(self._name, self._layout).ok


class StackProcess:
    """A handle on one running process of a stack: ``stop()``, ``kill()``, ``restart()``, ``health()``."""

    def __init__(self, name: str, layout: StackLayout, timeout: float = START_TIMEOUT_S) -> None:
        self.name = name
        self.layout = layout
        self.log_path = layout.logs / f"{name}.log"
        self._log = open(self.log_path, "ab")  # noqa: SIM115 (kept open for the process's lifetime)
        self._executor = _HealthExecutor(name, layout, self._log, timeout)

    @property
    def port(self) -> int | None:
        return self.layout.ports.get(self.name)

    @property
    def url(self) -> str:
        return self.layout.url(self.name)

    @property
    def pid(self) -> int | None:
        process = self._executor.process
        return process.pid if process is not None and self._executor.running() else None

    def running(self) -> bool:
        return self._executor.running()

    def health(self) -> Health:
        return check(self.name, self.layout)

    def start(self) -> StackProcess:
        """Start and wait until healthy (mirakuru raises ``TimeoutExpired`` or ``ProcessExitedWithError``)."""
        self._executor.start()
        return self

    def stop(self) -> None:
        """SIGTERM to the process group, SIGKILL after the timeout; returns when it has exited."""
        if not self._executor.running():
            return
        with contextlib.suppress(ProcessFinishedWithError):  # stopped is stopped, whatever its exit code
            self._executor.stop()

    def kill(self) -> None:
        """SIGKILL to the process group (``kill -9``): no shutdown work of its own gets to run."""
        self._executor.kill(sig=signal.SIGKILL)

    def restart(self) -> StackProcess:
        self.stop()
        return self.start()

    def close(self) -> None:
        """Stop the process (if running) and close its log."""
        try:
            self.stop()
        finally:
            self._log.close()


def start_process(layout: StackLayout, name: str, timeout: float = START_TIMEOUT_S) -> StackProcess:
    """Start one named process of the Procfile on ``layout``'s ports and wait until it is healthy.

    The layout is saved first, so the readiness wait of a replica or worker line finds it.
    """
    layout.save()
    return StackProcess(name, layout, timeout).start()
