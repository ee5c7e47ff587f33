"""The CPUs a process may use: its affinity and its cgroup's CPU quota, read from files laid out as the kernel
lays them (cgroup v2's ``cpu.max``; v1's ``cpu.cfs_quota_us`` and ``cpu.cfs_period_us``, with the controller
mounted alone or beside ``cpuacct``), and from this machine's own."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lib.cpus import cgroup_cpu_quota, usable_cpus


def lay(root: Path, files: dict[str, str], membership: str) -> Path:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    proc = root / "proc-self-cgroup"
    proc.write_text(membership)
    return proc


V1_UNLIMITED = {"cpu/cpu.cfs_quota_us": "-1\n", "cpu/cpu.cfs_period_us": "100000\n"}


@pytest.mark.parametrize(
    ("files", "membership", "quota"),
    [
        ({"cpu.max": "max 100000\n"}, "0::/\n", None),
        ({"cpu.max": "150000 100000\n"}, "0::/\n", 1.5),
        (
            {"system.slice/app.scope/cpu.max": "200000 100000\n", "cpu.max": "max 100000\n"},
            "0::/system.slice/app.scope\n",
            2.0,
        ),
        ({"cpu.max": "50000 100000\n"}, "0::/gone.scope\n", 0.5),  # the group's folder not mounted: the root's
        (V1_UNLIMITED, "4:memory:/x\n1:cpu:/\n0::/\n", None),
        (
            {
                "cpu,cpuacct/docker/abc/cpu.cfs_quota_us": "300000\n",
                "cpu,cpuacct/docker/abc/cpu.cfs_period_us": "100000\n",
            },
            "3:cpu,cpuacct:/docker/abc\n",
            3.0,
        ),
        ({"cpu/cpu.cfs_quota_us": "25000\n", "cpu/cpu.cfs_period_us": "50000\n"}, "2:cpuacct,cpu:/\n0::/\n", 0.5),
        ({}, "0::/\n", None),  # no cpu controller anywhere: unlimited
    ],
)
def test_the_quota_is_read_as_the_kernel_lays_it_out(
    tmp_path: Path, files: dict[str, str], membership: str, quota: float | None
) -> None:
    proc = lay(tmp_path, files, membership)
    assert cgroup_cpu_quota(tmp_path, proc) == quota


def test_the_usable_count_is_the_fewer_of_affinity_and_quota_rounded_up(tmp_path: Path) -> None:
    affinity = len(os.sched_getaffinity(0))
    unlimited = lay(tmp_path / "a", {"cpu.max": "max 100000\n"}, "0::/\n")
    assert usable_cpus(cgroup_root=tmp_path / "a", proc_cgroup=unlimited) == affinity
    half = lay(tmp_path / "b", {"cpu.max": "50000 100000\n"}, "0::/\n")
    assert usable_cpus(cgroup_root=tmp_path / "b", proc_cgroup=half) == 1
    many = lay(tmp_path / "c", {"cpu.max": f"{(affinity + 8) * 100000} 100000\n"}, "0::/\n")
    assert usable_cpus(cgroup_root=tmp_path / "c", proc_cgroup=many) == affinity
    assert usable_cpus(cgroup_root=tmp_path / "d", proc_cgroup=tmp_path / "d" / "absent") == affinity


def test_this_machine_is_read_without_error() -> None:
    """The real files of the machine the suite runs on: a count within its affinity, and a quota that is None or
    positive."""
    quota = cgroup_cpu_quota()
    assert quota is None or quota > 0
    assert 1 <= usable_cpus() <= len(os.sched_getaffinity(0))
