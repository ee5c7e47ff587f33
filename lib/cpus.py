"""How many CPUs this process may run on: what the defaults that size threads and workers are read from."""

from __future__ import annotations

import os


def usable_cpus() -> int:
    """The CPUs this process may run on: its affinity (``taskset``, a container's cpuset), not the machine's
    count, so a process pinned to one core of many sizes its pools for one (decision 0051). The machine's count
    where the platform has no affinity call (macOS, Windows); at least 1."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1
