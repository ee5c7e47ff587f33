"""Prefect's temporary local API in the embedded default: started once per process, stopped with it.

Without ``PREFECT_API_URL`` Prefect starts a temporary server (a uvicorn subprocess; size: decision 0020) the first
time anything in the process needs its API. Prefect's own start is not safe across threads: a second
caller arriving while the first is still starting sees it "running" with no process yet and fails with a
bare ``AssertionError`` (two uploads posted back to back did exactly that). ``ensure_local_api`` makes the
first start happen once, under a process-wide lock, before any flow runs; later callers (Prefect's own
included) then find it up.

Prefect stops that server from ``atexit``, which a SIGTERM never reaches by default: the service and the
CLI install ``lib.signals.exit_on_sigterm`` so it does. ``stop_local_api`` stops it explicitly: a stopping
service does (``flows.submit.finish_background_jobs``), because a uvicorn worker process
(``POLICY_KB_WORKERS`` > 1) ends by re-raising SIGTERM under the default action, which skips ``atexit``.
"""

from __future__ import annotations

import logging
import threading

from prefect.events.worker import EventsWorker
from prefect.logging.handlers import APILogWorker
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import PREFECT_API_URL

logger = logging.getLogger(__name__)

_start_lock = threading.Lock()

DRAIN_TIMEOUT_S = 5.0
"""How long ``stop_local_api`` waits for each of Prefect's log and event workers to send what they hold."""


def uses_local_api() -> bool:
    """True when this process's Prefect has no API URL, so it would start its temporary server."""
    return not PREFECT_API_URL.value()


def ensure_local_api() -> str | None:
    """Start Prefect's temporary server if this process uses it and it is not up; return its API URL.

    None when an API URL is set (a real server, or a test harness). Raises what the start raised (a
    timeout, a crashed server): the caller decides what that failure means for its job.
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
            try:
                server.start()
            except BaseException:
                server.stop()  # Prefect leaves a process that missed its start-up timeout running
                raise
            logger.info("prefect.local_api_started url=%s pid=%s", server.api_url, _pid(server))
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


def _pid(server: SubprocessASGIServer) -> int | None:
    return server.server_process.pid if server.server_process is not None else None
