"""``policy-kb stack status`` on the session's stack (started by the code behind ``policy-kb stack up``)."""

from __future__ import annotations

import subprocess
import sys

from deployments.stack import StackLayout, process_names


def test_stack_status_lists_every_process_up_with_its_pid_port_state_and_restarts(stack: StackLayout) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "deployments.cli", "stack", "status", "--dir", str(stack.directory)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
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
