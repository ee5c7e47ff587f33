"""Prefect's temporary local API in the embedded default: started once per process, stopped with it.

Without ``PREFECT_API_URL`` Prefect starts a temporary server (a uvicorn subprocess; size: decision 0020) the first
time anything in the process needs its API. Prefect's own start is not safe across threads: a second
caller arriving while the first is still starting sees it "running" with no process yet and fails with a
bare ``AssertionError`` (two uploads posted back to back did exactly that). ``ensure_local_api`` makes the
first start happen once, under a process-wide lock, before any flow runs; later callers (Prefect's own
included) then find it up.

Nor is Prefect's start safe under load (decision 0047). It waits a fixed 20 s counted in sleeps, ignores
its process dying, and several processes starting servers on the one SQLite database at once (uvicorn
workers, the CLI beside the service) migrate it together and fail with "database is locked". Here the
start is serialized across processes by a file lock beside that database, waits in wall-clock time
(``start_timeout_s``) while watching the process, and is tried again with backoff when it fails.

Prefect stops that server from ``atexit``, which a SIGTERM never reaches by default: the service and the
CLI install ``lib.signals.exit_on_sigterm`` so it does. ``stop_local_api`` stops it explicitly: a stopping
service does (``flows.submit.finish_background_jobs``), because a uvicorn worker process
(``POLICY_KB_WORKERS`` > 1) ends by re-raising SIGTERM under the default action, which skips ``atexit``.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import logging
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import PREFECT_API_URL, PREFECT_HOME

logger = logging.getLogger(__name__)

_start_lock = threading.Lock()

DRAIN_TIMEOUT_S = 5.0
"""How long ``stop_local_api`` waits for each of Prefect's log and event workers to send what they hold."""
START_TIMEOUT_S = 120.0
"""Default wall-clock wait for one start (``JobSettings.local_api_start_timeout_seconds`` passes its own)."""
START_ATTEMPTS = 3
BACKOFF_S = 1.0
"""Before the second attempt; doubled before each further one."""
LOCK_FILE = "policy-kb-local-api.lock"
PORT_IN_USE = 3
"""Prefect's server exits with this code when its port was taken between choosing and binding it."""


class LocalApiStartError(RuntimeError):
    """Prefect's temporary server did not answer: it exited, or did not answer within the time allowed."""


def uses_local_api() -> bool:
    """True when this process's Prefect has no API URL, so it would start its temporary server."""
    return not PREFECT_API_URL.value()


def ensure_local_api(start_timeout_s: float = START_TIMEOUT_S, attempts: int = START_ATTEMPTS) -> str | None:
    """Start Prefect's temporary server if this process uses it and it is not up; return its API URL.

    None when an API URL is set (a real server, or a test harness). Each of ``attempts`` starts waits up to
    ``start_timeout_s`` seconds; the last one's ``LocalApiStartError`` is raised, and the caller decides what
    that means for its job (``flows.submit`` then runs the job without Prefect).
    """
    if not uses_local_api():
        return None
    with _start_lock:
        server = SubprocessASGIServer()
        if server.server_process is not None and server.server_process.poll() is not None:
            logger.warning("prefect.local_api_died returncode=%s: starting it again", server.server_process.returncode)
            server.stop()
            server = SubprocessASGIServer()
        if not server.running:
            with _one_start_at_a_time(start_timeout_s * attempts):
                server = _start_with_retries(start_timeout_s, attempts)
        if server.server_process is None:
            raise RuntimeError("Prefect's temporary server is being started outside ensure_local_api")
        return server.api_url


def stop_local_api() -> bool:
    """Stop Prefect's temporary server if this process started it; True when one was stopped. Does nothing
    when an API URL is set: that server (a real one, or a test harness's) is not this process's to stop.

    Prefect's log and event workers are drained first: they send what they hold at exit, and with the server
    gone they would retry against nothing and hold the process past its stop."""
    if not uses_local_api():
        return False
    for service in (APILogWorker, EventsWorker):
        service.drain_all(timeout=DRAIN_TIMEOUT_S)
    with _start_lock:
        server = SubprocessASGIServer()
        pid = _pid(server)
        server.stop()
    if pid is not None:
        logger.info("prefect.local_api_stopped pid=%s", pid)
    return pid is not None


def _start_with_retries(start_timeout_s: float, attempts: int) -> SubprocessASGIServer:
    for attempt in range(1, attempts + 1):
        server = SubprocessASGIServer()
        try:
            _start(server, start_timeout_s)
        except LocalApiStartError as exc:
            server.stop()  # a server that missed its start is not left running
            if attempt == attempts:
                raise
            delay = BACKOFF_S * 2 ** (attempt - 1)
            logger.warning("prefect.local_api_start_failed attempt=%d error=%s: again in %g s", attempt, exc, delay)
            time.sleep(delay)
        except BaseException:
            server.stop()
            raise
        else:
            logger.info("prefect.local_api_started url=%s pid=%s attempt=%d", server.api_url, _pid(server), attempt)
            return server
    raise ValueError("attempts must be at least 1")


def _start(server: SubprocessASGIServer, timeout_s: float) -> None:
    """What ``SubprocessASGIServer.start`` does (its process, its port, its ``running`` flag, its stop at exit),
    waiting in wall-clock seconds and giving up as soon as the process exits. Prefect's own wait counts only
    its sleeps, so under load it lasts far longer than it says, and it keeps waiting on a dead process."""
    server.port = server.find_available_port()
    server.running = True
    process = server._run_uvicorn_command()
    server.server_process = process
    atexit.register(server.stop)
    deadline = time.monotonic() + timeout_s
    with httpx.Client(timeout=5.0) as client:
        while True:
            code = process.poll()
            if code is not None:
                reason = "its port was taken" if code == PORT_IN_USE else "see its output above"
                raise LocalApiStartError(f"Prefect's local API exited with code {code} while starting ({reason})")
            with contextlib.suppress(httpx.HTTPError):
                if client.get(f"{server.api_url}/health").status_code == 200:
                    return
            if time.monotonic() >= deadline:
                raise LocalApiStartError(f"Prefect's local API did not answer within {timeout_s:g} s")
            time.sleep(0.2)


@contextlib.contextmanager
def _one_start_at_a_time(timeout_s: float) -> Iterator[None]:
    """Hold the file lock beside Prefect's database while starting, so that processes sharing it start their
    servers (and migrate the database) one after another. After ``timeout_s`` the start goes ahead anyway."""
    home = Path(PREFECT_HOME.value()).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    with (home / LOCK_FILE).open("a") as handle:
        deadline = time.monotonic() + timeout_s
        locked = False
        while not locked:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                locked = True
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    logger.warning("prefect.local_api_lock_timeout waited_s=%g: starting without it", timeout_s)
                    break
                time.sleep(0.2)
        try:
            yield
        finally:
            if locked:
                fcntl.flock(handle, fcntl.LOCK_UN)


def _pid(server: SubprocessASGIServer) -> int | None:
    return server.server_process.pid if server.server_process is not None else None
