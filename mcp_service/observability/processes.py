"""Memory, CPU and open files of every worker process, for ``/metrics`` in multiprocess mode.

prometheus-client's process collector reads ``/proc/self``: with several uvicorn workers a scrape would see only
the worker that answered it, so ``endpoint`` leaves it out there. Instead the answering worker reads the same
figures (``process_resident_memory_bytes``, ``process_cpu_seconds_total``, ...) of each of its siblings, with
a ``pid`` label. The siblings are the processes that keep files in the metrics folder (every worker does from
its start: ``lib.observability`` binds its timers at import), still alive, under this worker's own supervisor
(so neither the supervisor nor a process that reused a dead worker's pid is counted).
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable
from pathlib import Path

from prometheus_client.metrics_core import Metric
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

PID_IN_NAME = re.compile(r"_(\d+)\.db$")
PROC = "/proc"


def parent_of(pid: int) -> int | None:
    """The parent pid of ``pid`` (``/proc/<pid>/stat``'s 4th field), ``None`` when it is gone."""
    try:
        with open(f"{PROC}/{pid}/stat", "rb") as stat:
            return int(stat.read().rsplit(b")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return None


def worker_pids(folder: Path) -> list[int]:
    """This worker and its live siblings that keep metric files in ``folder``."""
    me, supervisor = os.getpid(), os.getppid()
    named = {int(m.group(1)) for f in folder.glob("*.db") if (m := PID_IN_NAME.search(f.name)) is not None}
    return sorted({me} | {pid for pid in named if pid != me and parent_of(pid) == supervisor})


def _fixed(pid: int) -> Callable[[], int]:
    return lambda: pid


class WorkerProcesses(Collector):
    """prometheus-client's process metrics for each worker of ``worker_pids``, labelled ``pid``."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def collect(self) -> Iterable[Metric]:
        families: dict[str, Metric] = {}
        for pid in worker_pids(self.folder):
            for family in ProcessCollector(pid=_fixed(pid), proc=PROC, registry=None).collect():
                merged = families.setdefault(family.name, Metric(family.name, family.documentation, family.type))
                for sample in family.samples:
                    merged.add_sample(sample.name, {**sample.labels, "pid": str(pid)}, sample.value)
        return list(families.values())
