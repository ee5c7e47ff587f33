"""``policy-kb stack status`` on the session's stack (started by the code behind ``policy-kb stack up``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from deployments.stack import StackLayout, process_names
from lib.glibc_heap import MMAP_THRESHOLD


def stack_status(stack: StackLayout) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "deployments.cli", "stack", "status", "--dir", str(stack.directory)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_stack_status_lists_every_process_up_with_its_pid_port_state_and_restarts(stack: StackLayout) -> None:
    done = stack_status(stack)
    assert done.returncode == 0, done.stdout + done.stderr
    header, *lines = done.stdout.splitlines()[1:]
    assert header.split() == ["process", "pid", "port", "RSS", "MB", "state", "restarts", "last", "exit", "health"]
    rows = {line.split()[0]: line.split() for line in lines}
    assert (
        list(rows)
        == process_names()
        == ["redis", "chroma", "s3", "prefect", "worker", "replica-a", "replica-b", "servers"]
    )
    for name, row in rows.items():
        assert row[1].isdigit() and row[4] == "RUNNING" and row[5].isdigit() and "up" in row, row
        if name not in {"worker", "servers"}:  # the servers process listens on three ports
            assert row[2] == str(stack.ports[name])


def test_the_stacks_services_run_with_glibc_held_to_two_arenas_and_a_fixed_mmap_threshold(stack: StackLayout) -> None:
    done = stack_status(stack)
    assert done.returncode == 0, done.stdout + done.stderr
    pids = {line.split()[0]: int(line.split()[1]) for line in done.stdout.splitlines()[2:]}
    for name in ("replica-a", "replica-b", "servers", "worker"):
        environ = Path(f"/proc/{pids[name]}/environ").read_bytes().split(b"\0")
        assert b"MALLOC_ARENA_MAX=2" in environ, name
        assert f"MALLOC_MMAP_THRESHOLD_={MMAP_THRESHOLD}".encode() in environ, name
