"""The whole stack in the background under honcho: what ``policy-kb stack up|down|status`` and the tests'
session fixture call.

``up`` saves the layout and its environment (``stack.env``) in the stack folder, starts
``honcho start`` on the Procfile detached from the caller (its own session; output to
``logs/stack.log``; pid in ``honcho.pid``) and waits until every process is healthy. honcho keeps the
processes: when one exits it stops the others. ``down`` stops honcho (which stops each process's group)
and then every process still carrying the stack's marker variable, e.g. a flow run the worker started.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from deployments.stack.health import Health, check, wait_healthy
from deployments.stack.layout import MARKER, PROCFILE, PROJECT_ROOT, StackLayout, process_names

PID_FILE = "honcho.pid"
UP_TIMEOUT_S = 300.0
DOWN_TIMEOUT_S = 30.0
_STARTED = re.compile(r"\b(?P<name>[\w-]+)\.\d+ started \(pid=(?P<pid>\d+)\)")


@dataclass(frozen=True)
class ProcessStatus:
    name: str
    pid: int | None
    port: int | None
    health: Health
    rss_mb: float | None


def _env_file(env: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in sorted(env.items()) if "\n" not in value)


def supervisor_pid(directory: Path) -> int | None:
    """honcho's pid if the stack in ``directory`` is running (a reused pid of another process is not)."""
    try:
        pid = int((directory / PID_FILE).read_text())
    except (FileNotFoundError, ValueError):
        return None
    try:
        proc = psutil.Process(pid)
        ours = proc.status() != psutil.STATUS_ZOMBIE and proc.environ().get(MARKER) == str(directory.resolve())
    except psutil.Error:
        return None
    return pid if ours else None


def up(layout: StackLayout, timeout: float = UP_TIMEOUT_S) -> subprocess.Popen[bytes]:
    """Start the stack of ``layout`` in the background and return once every process is healthy.

    Raises ``RuntimeError`` if a stack already runs there or the stack stops while starting,
    ``TimeoutError`` if it is not healthy in time (the stack is stopped again in both cases).
    """
    if supervisor_pid(layout.directory) is not None:
        raise RuntimeError(f"a stack is already running in {layout.directory}")
    layout.save()
    env = layout.env(dict(os.environ))
    env_file = layout.directory / "stack.env"
    env_file.write_text(_env_file({k: v for k, v in layout.env({}).items() if k != "PATH"}))
    with open(layout.logs / "stack.log", "ab") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "honcho", "start", "--no-colour", "-f", str(PROCFILE), "-d", str(PROJECT_ROOT),
             "-e", str(env_file)],
            cwd=PROJECT_ROOT, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            start_new_session=True,
        )  # fmt: skip
    (layout.directory / PID_FILE).write_text(f"{proc.pid}\n")
    try:
        wait_healthy(process_names(), layout, timeout, alive=lambda: proc.poll() is None)
    except (TimeoutError, RuntimeError):
        down(layout.directory)
        raise
    return proc


def _marked(directory: Path) -> list[psutil.Process]:
    """Every process of this user carrying the stack's marker (honcho, the processes, their children)."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            mine = proc.pid != os.getpid() and proc.uids().real == os.getuid()
            if mine and proc.environ().get(MARKER) == str(directory):
                found.append(proc)
    return found


def down(directory: Path, timeout: float = DOWN_TIMEOUT_S) -> list[int]:
    """Stop the stack in ``directory`` and all it started; return the pids that had to be killed."""
    directory = directory.resolve()
    pid = supervisor_pid(directory)
    if pid is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
        with contextlib.suppress(psutil.Error):
            psutil.Process(pid).wait(timeout=timeout)
    leftovers = _marked(directory)
    for proc in leftovers:
        with contextlib.suppress(psutil.Error):
            proc.terminate()
    _, alive = psutil.wait_procs(leftovers, timeout=10)
    for proc in alive:
        with contextlib.suppress(psutil.Error):
            proc.kill()
    psutil.wait_procs(alive, timeout=5)
    (directory / PID_FILE).unlink(missing_ok=True)
    return [proc.pid for proc in leftovers]


def _started_pids(directory: Path) -> dict[str, int]:
    """The pid of each process, as honcho logged it when it last started it."""
    log = directory / "logs" / "stack.log"
    pids: dict[str, int] = {}
    if log.exists():
        for match in _STARTED.finditer(log.read_text(errors="replace")):
            pids[match["name"]] = int(match["pid"])
    return pids


def _tree_rss_mb(pid: int) -> float | None:
    """Resident memory of a process and its descendants (a worker's flow runs, a replica's helpers)."""
    try:
        root = psutil.Process(pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)]) / 2**20
    except psutil.Error:
        return None


def status(directory: Path) -> list[ProcessStatus]:
    """Each process of the stack in ``directory``: its pid (if alive), its port and its health."""
    layout = StackLayout.load(directory.resolve())
    running = supervisor_pid(layout.directory) is not None
    pids = _started_pids(layout.directory) if running else {}
    rows = []
    for name in process_names():
        pid = pids.get(name)
        alive = pid is not None and psutil.pid_exists(pid)
        rss = _tree_rss_mb(pid) if alive and pid is not None else None
        rows.append(ProcessStatus(name, pid if alive else None, layout.ports.get(name), check(name, layout), rss))
    return rows


def wait_stopped(directory: Path, timeout: float = DOWN_TIMEOUT_S) -> bool:
    """True once nothing of the stack in ``directory`` runs any more."""
    deadline = time.monotonic() + timeout
    while _marked(directory.resolve()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True
