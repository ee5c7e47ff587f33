"""What every benchmark shares: a service started in its own process and waited for, percentiles, the table.

A service runs under mirakuru (``Service``): started in a process group of its own, ready once ``ready()``
holds (``/health`` answers, say, or an index is built), stopped with everything it started (uvicorn workers,
Prefect's local API), and killed at exit if a benchmark dies on the way.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Literal

import httpx
import numpy as np
from mirakuru import Executor
from mirakuru.exceptions import ProcessFinishedWithError

from deployments.stack.ports import free_port as free_port  # the one port picker, for the benchmarks

ROOT = Path(__file__).resolve().parents[1]
# A benchmark's services bind to loopback; one started without a key may serve open there (decision 0045).
os.environ.setdefault("ALLOW_UNAUTHENTICATED", "true")

PercentileMethod = Literal["linear", "nearest", "weibull"]
"""numpy's names: ``linear`` (``statistics.quantiles(method="inclusive")``), ``nearest`` (the nearest rank),
``weibull`` (``statistics.quantiles``' default, ``exclusive``)."""


def percentiles(
    samples: Sequence[float], qs: Sequence[float] = (50, 95, 99), method: PercentileMethod = "linear"
) -> tuple[float, ...]:
    """The ``qs`` percentiles of ``samples`` (one figure per q)."""
    return tuple(float(v) for v in np.percentile(np.asarray(samples, dtype=float), list(qs), method=method))


def row(label: str, samples_ms: Sequence[float], note: str = "", *, width: int = 44) -> tuple[float, float, float]:
    """Print one table row (label, p50, p95, p99 in ms, n) and return the three figures."""
    p50, p95, p99 = percentiles(samples_ms)
    print(f"  {label:<{width}}{p50:>8.2f}{p95:>8.2f}{p99:>8.2f}   n={len(samples_ms)}" + (f"   {note}" if note else ""))
    return p50, p95, p99


def clients_start_together(seconds: float = 2.0) -> float:
    """A wall-clock moment ``seconds`` ahead, at which client processes started now all begin."""
    return time.time() + seconds


async def wait_until(start_at: float) -> None:
    await asyncio.sleep(max(0.0, start_at - time.time()))


def health_ok(base_url: str) -> Callable[[], bool]:
    """The usual readiness: ``GET /health`` answers 200 (a port accepts connections once its warm-up is done)."""
    return lambda: httpx.get(f"{base_url}/health", timeout=1).status_code == 200


class Service(Executor):
    """A service process, ready once ``ready()`` holds; ``ready`` may raise ``httpx.HTTPError`` (not yet)."""

    def __init__(
        self,
        command: Sequence[str],
        env: Mapping[str, str],
        ready: Callable[[], bool],
        timeout: float,
        log: Path | None = None,
    ) -> None:
        """``log``: a file its output goes to (appended), else nowhere."""
        quiet = subprocess.DEVNULL
        self._log = log.open("ab") if log is not None else None
        output = self._log or quiet
        super().__init__(
            list(command),
            cwd=str(ROOT),
            timeout=timeout,
            sleep=0.3,
            envvars=dict(env),
            stdin=quiet,
            stdout=output,
            stderr=output,
        )
        self._ready = ready

    def pre_start_check(self) -> bool:
        return False

    def after_start_check(self) -> bool:
        try:
            return self._ready()
        except httpx.HTTPError:
            return False

    @property
    def pid(self) -> int:
        assert self.process is not None, "the service is not running"
        return int(self.process.pid)

    def stop(self, stop_signal: int | None = None, expected_returncode: int | None = None) -> Service:
        """Stop it and what it started; a benchmark does not judge how the service exits."""
        with contextlib.suppress(ProcessFinishedWithError):
            super().stop(stop_signal, expected_returncode)
        if self._log is not None:
            self._log.close()
        return self


def start_service(
    command: Sequence[str],
    env: Mapping[str, str],
    ready: Callable[[], bool],
    timeout: float = 180,
    log: Path | None = None,
) -> Service:
    """``command`` (``sys.executable`` first) started with ``env`` added to this environment, once ``ready()``;
    exits the benchmark if it does not get there within ``timeout`` seconds. ``log``: where its output goes."""
    service = Service(command, env, ready, timeout, log)
    try:
        return service.start()
    except Exception as exc:
        raise SystemExit(f"the service {' '.join(command[1:])} did not start: {exc}") from exc
