"""How many CPUs this process may run on: what the defaults that size threads and workers are read from.

Two limits count: the process's affinity (``taskset``, a container's cpuset) and its cgroup's CPU quota (a
container's ``--cpus``, compose's ``cpus:``, Kubernetes' CPU limit), which leaves every core visible but lets the
process use only so much time on them: sized by the core count, a search lane of 64 threads on a 2-CPU quota
would queue behind the throttle instead of refusing (decision 0051).
"""

from __future__ import annotations

import math
import os
from pathlib import Path

CGROUP_ROOT = Path("/sys/fs/cgroup")
PROC_CGROUP = Path("/proc/self/cgroup")


def usable_cpus(*, cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> int:
    """The CPUs this process may use: the fewer of its affinity's and its cgroup quota's (rounded up); the
    machine's count where the platform has no affinity call (macOS, Windows); at least 1."""
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    quota = cgroup_cpu_quota(cgroup_root, proc_cgroup)
    if quota is not None:
        cpus = min(cpus, math.ceil(quota))
    return max(cpus, 1)


def cgroup_cpu_quota(cgroup_root: Path = CGROUP_ROOT, proc_cgroup: Path = PROC_CGROUP) -> float | None:
    """CPUs' worth of time per period the process's cgroup allows (``cpu.max`` in cgroup v2,
    ``cpu.cfs_quota_us`` / ``cpu.cfs_period_us`` in v1), or None when unlimited or not on Linux. The group's
    own directory is tried first, then the mount's root (inside a container the group is usually its root)."""
    try:
        lines = proc_cgroup.read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        relative = path.lstrip("/")
        if controllers == "":  # v2: one unified hierarchy
            places = [(_v2, cgroup_root / relative), (_v2, cgroup_root)]
        elif "cpu" in controllers.split(","):
            mounts = (cgroup_root / controllers, cgroup_root / "cpu")
            places = [(_v1, folder) for mount in mounts for folder in (mount / relative, mount)]
        else:
            continue
        for read, folder in places:
            try:
                return read(folder)
            except (OSError, ValueError):  # not there (or not a cgroup file): the next place
                continue
    return None


def _v2(folder: Path) -> float | None:
    """The quota in ``folder``'s ``cpu.max`` (``"max 100000"``: None, unlimited; ``"200000 100000"``: 2.0)."""
    quota, period = (folder / "cpu.max").read_text().split()[:2]
    return None if quota == "max" else int(quota) / int(period)


def _v1(folder: Path) -> float | None:
    """The quota of a v1 ``cpu`` group folder (quota -1: None, unlimited)."""
    quota = int((folder / "cpu.cfs_quota_us").read_text())
    period = int((folder / "cpu.cfs_period_us").read_text())
    return None if quota < 0 else quota / period
