"""``deployments.stack.run`` (how supervisord and ``start_process`` start each process of the stack, and how the
stack tests start a second worker) gives SIGINT back its default action. A suite run as a shell's background job
(``make test &`` in a script) inherits SIGINT ignored, and a Prefect worker stops on SIGTERM by sending itself
SIGINT: started without this, it discarded that SIGINT and never stopped (decision 0047, issue 46 item 7)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from deployments.stack.layout import PROJECT_ROOT

BACKGROUND_JOB = ["bash", "-c", '"$@" & wait $!', "bash"]
"""Runs its arguments as a non-interactive shell's background job: SIGINT and SIGQUIT ignored (POSIX)."""

# Prefect's own worker signal handling (what ``prefect worker start`` installs), in a loop that waits for work.
WORKER_LIKE = """
import asyncio, os, signal
from prefect.utilities.processutils import setup_signal_handlers_worker

async def main():
    inherited = signal.getsignal(signal.SIGINT) is not signal.SIG_IGN
    setup_signal_handlers_worker(os.getpid(), "the worker", print)
    print(os.getpid(), inherited, flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def test_a_background_job_inherits_sigint_ignored() -> None:
    """The condition the fix is for: without ``deployments.stack.run`` the child's SIGINT is ignored."""
    probe = [sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT) is signal.SIG_IGN)"]
    done = subprocess.run([*BACKGROUND_JOB, *probe], capture_output=True, text=True, check=True)
    assert done.stdout.split() == ["True"]


def test_a_worker_started_through_stack_run_from_a_background_job_stops_on_sigterm() -> None:
    command = [sys.executable, "-m", "deployments.stack.run", "--", sys.executable, "-c", WORKER_LIKE]
    job = subprocess.Popen(
        [*BACKGROUND_JOB, *command], cwd=PROJECT_ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    assert job.stdout is not None
    pid, sigint_default = job.stdout.readline().split()
    try:
        assert sigint_default == "True"
        os.kill(int(pid), signal.SIGTERM)
        job.wait(timeout=60)  # a guard against hanging the suite, not a measure: it stops within a second
        output = job.stdout.read()
    finally:
        if job.poll() is None:
            os.kill(int(pid), signal.SIGKILL)
            job.wait()
    assert "Received SIGTERM. Sending SIGINT to the worker" in output, output
