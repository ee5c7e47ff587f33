"""The whole stack in the background under supervisord: what ``policy-kb stack up|down|status`` and the
tests' session fixture call.

``up`` saves the layout and its environment (``stack.env``) in the stack folder, writes
``supervisord.conf`` from the Procfile (``supervision``), starts supervisord detached from the caller (its
own session; its log ``logs/supervisord.log``, each process's output ``logs/<name>.log``) and waits until
every process is healthy. supervisord keeps the processes: one that dies is restarted with backoff while
the others keep running. ``down`` stops supervisord (which stops each process's group) and then every
process still carrying the stack's marker variable, e.g. a flow run the worker started in a session of
its own. ``status`` joins supervisord's view (state, pid, spawn error, over XML-RPC), its log (restarts,
last exit: ``history``) and the health checks.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import psutil

from deployments.stack.health import Health, check, wait_healthy
from deployments.stack.history import read_history
from deployments.stack.layout import MARKER, PROJECT_ROOT, StackLayout, process_names
from deployments.stack.supervision import CONFIG_FILE, LOG_FILE, PID_FILE, config
from deployments.stack.supervisor_client import process_info

UP_TIMEOUT_S = 300.0
DOWN_TIMEOUT_S = 60.0
"""supervisord stops the processes one after the other (replicas first), each within its stop wait."""


@dataclass(frozen=True)
class ProcessStatus:
    name: str
    pid: int | None
    port: int | None
    health: Health
    rss_mb: float | None
    state: str = "-"
    """supervisord's state: RUNNING, STARTING, BACKOFF (retrying a quick death), FATAL (gave up), EXITED, ..."""
    restarts: int = 0
    """Starts since ``up`` after the first."""
    last_exit: str | None = None
    """``SIGKILL at 13:05:02``, ``exit 1 at 13:05:02``; None if it never exited."""
    spawn_error: str | None = None


def _env_file(env: dict[str, str]) -> str:
    return "".join(f"{key}={value}\n" for key, value in sorted(env.items()) if "\n" not in value)


def supervisor_pid(directory: Path) -> int | None:
    """supervisord's pid if the stack in ``directory`` is running (a reused pid of another process is not)."""
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


def _given_up(layout: StackLayout) -> list[str]:
    return [name for name, info in process_info(layout).items() if info["statename"] == "FATAL"]


def up(layout: StackLayout, timeout: float = UP_TIMEOUT_S) -> subprocess.Popen[bytes]:
    """Start the stack of ``layout`` in background under supervisord; return once every process is healthy.

    Raises ``RuntimeError`` if a stack already runs there, supervisord stops or gives up on a process while
    starting, ``TimeoutError`` if it is not healthy in time (the stack is stopped again in all those cases).
    """
    if supervisor_pid(layout.directory) is not None:
        raise RuntimeError(f"a stack is already running in {layout.directory}")
    layout.save()
    env = layout.env(dict(os.environ))
    (layout.directory / "stack.env").write_text(_env_file({k: v for k, v in layout.env({}).items() if k != "PATH"}))
    conf = layout.directory / CONFIG_FILE
    conf.write_text(config(layout))
    with open(layout.logs / "supervisord.out", "ab") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "supervisor.supervisord", "-n", "-c", str(conf)],
            cwd=PROJECT_ROOT,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )

    def alive() -> bool:
        if proc.poll() is not None:
            return False
        if fatal := _given_up(layout):
            raise RuntimeError(f"supervisord gave up on {', '.join(fatal)} (see {layout.logs})")
        return True

    try:
        wait_healthy(process_names(), layout, timeout, alive=alive)
    except (TimeoutError, RuntimeError):
        down(layout.directory)
        raise
    return proc


def _marked(directory: Path) -> list[psutil.Process]:
    """Every process of this user carrying the stack's marker (supervisord, the processes, their children)."""
    found = []
    for proc in psutil.process_iter():
        with contextlib.suppress(psutil.Error):
            mine = proc.pid != os.getpid() and proc.uids().real == os.getuid()
            if mine and proc.environ().get(MARKER) == str(directory):
                found.append(proc)
    return found


def down(directory: Path, timeout: float = DOWN_TIMEOUT_S) -> list[int]:
    """Stop the stack in ``directory`` and all it started; return the pids that had to be stopped after
    supervisord had gone."""
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


def _tree_rss_mb(pid: int) -> float | None:
    """Resident memory of a process and its descendants (a worker's flow runs, a replica's helpers)."""
    try:
        root = psutil.Process(pid)
        return sum(p.memory_info().rss for p in [root, *root.children(recursive=True)]) / 2**20
    except psutil.Error:
        return None


def status(directory: Path) -> list[ProcessStatus]:
    """Each process of the stack in ``directory``: supervisord's state and pid, its port, health, memory,
    restarts since ``up`` and last exit."""
    layout = StackLayout.load(directory.resolve())
    running = supervisor_pid(layout.directory) is not None
    infos = process_info(layout) if running else {}
    history = read_history(layout.logs / LOG_FILE) if running else {}
    rows = []
    for name in process_names():
        info = infos.get(name, {})
        pid = int(info.get("pid") or 0) or None
        rss = _tree_rss_mb(pid) if pid is not None else None
        past = history.get(name)
        last = past.last_exit if past else None
        rows.append(
            ProcessStatus(
                name,
                pid,
                layout.ports.get(name),
                check(name, layout),
                rss,
                state=str(info.get("statename", "-")),
                restarts=past.restarts if past else 0,
                last_exit=last.describe() if last else None,
                spawn_error=str(info.get("spawnerr") or "") or None,
            )
        )
    return rows


def wait_stopped(directory: Path, timeout: float = DOWN_TIMEOUT_S) -> bool:
    """True once nothing of the stack in ``directory`` runs any more."""
    deadline = time.monotonic() + timeout
    while _marked(directory.resolve()):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.2)
    return True
