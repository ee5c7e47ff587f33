"""Background ingestions of a service in the embedded default (no ``PREFECT_API_URL``), as a new user
runs it: a real service subprocess whose uploads start Prefect's temporary local API on first use.

- Uploads posted back to back all end settled (never stuck ``processing``): the local API is started
  once for them all, not raced by each (the race failed the second with a bare ``AssertionError``).
- SIGTERM stops the service and everything it started (the local API server above all: ~230 MB each,
  orphaned before), in one process and with ``POLICY_KB_WORKERS=2`` (uvicorn's worker processes end by
  re-raising SIGTERM under the default action, past ``atexit``: their local API was orphaned until the app's
  shutdown stopped it).
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest
import redis

from lib.composition import open_stores
from lib.config import Settings
from lib.policies.models import PolicyCreate
from tests.conftest import free_port
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import FRESH_DB, bearer, service_env, service_settings, wait_healthy
from tests.polling import eventually

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("EMB_A", "EMB_B", "EMB_C")
SETTLE_TIMEOUT_S = 180
STOP_TIMEOUT_S = 30
LOCAL_API = "prefect.server.api.server:create_app"
"""In the command line of Prefect's temporary local API server."""
EXIT_GRACE_S = 10
PREFECT_START_TIMEOUT_S = 120
"""Prefect's 20 s default for its temporary server (a new SQLite database to migrate) is short on a busy CI."""


def settled(api: httpx.Client, source: str, revision_id: str) -> dict[str, object]:
    def status() -> dict[str, object] | None:
        body: dict[str, object] = api.get(f"/policies/{source}/revisions/{revision_id}/status").json()
        return None if body["status"] == "processing" else body

    return eventually(status, within=SETTLE_TIMEOUT_S, every=0.25, what=f"{source}/{revision_id} settling")


@pytest.fixture
def embedded_settings(service_base: Path, redis_url: str, chroma_dir: Path, tmp_path: Path) -> Settings:
    settings = service_settings(service_base, redis_url, chroma_dir, FRESH_DB)
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    registry = open_stores(settings).policies.registry
    for source in SOURCES:
        registry.create_policy(PolicyCreate(source=source, title=f"{source} title", category="national_policy"))
    return settings


@pytest.mark.parametrize("workers", [1, 2])
def test_uploads_back_to_back_all_settle_and_sigterm_leaves_no_process_of_the_service(
    embedded_settings: Settings, tmp_path: Path, workers: int
) -> None:
    port = free_port()
    env = service_env(
        embedded_settings,
        port,
        PREFECT_HOME=str(tmp_path / "prefect"),
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=str(PREFECT_START_TIMEOUT_S),
        POLICY_KB_WORKERS=str(workers),
    )
    env.pop("PREFECT_API_URL", None)
    log = tmp_path / "service.log"
    with log.open("wb") as sink:  # a file, not a pipe: a process left behind must not hold the test's pipe open
        proc = subprocess.Popen([sys.executable, "-m", "mcp_service"], cwd=ROOT, env=env, stdout=sink, stderr=sink)
    url = f"http://127.0.0.1:{port}"
    started: list[psutil.Process] = []
    local_apis: list[psutil.Process] = []
    try:
        wait_healthy(url, proc)
        with httpx.Client(base_url=f"{url}/api/v1", headers=bearer(), timeout=60) as api:
            accepted = [
                api.post(
                    f"/policies/{source}/revisions",
                    files={"file": ("policy.pdf", policy_pdf_bytes(edition=source), "application/pdf")},
                    data={"version_label": "2024", "effective_from": "2024-12-12"},
                )
                for source in SOURCES
            ]
            assert [response.status_code for response in accepted] == [202] * len(SOURCES), accepted[-1].text
            statuses = [
                settled(api, source, response.json()["revision_id"])
                for source, response in zip(SOURCES, accepted, strict=True)
            ]
        started = psutil.Process(proc.pid).children(recursive=True)
        local_apis = [child for child in started if LOCAL_API in " ".join(child.cmdline())]
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    # A moment for what exits on its own once the service is gone (multiprocessing's resource tracker).
    _, alive = psutil.wait_procs(started, timeout=EXIT_GRACE_S)
    left = [child for child in alive if child.is_running() and child.status() != psutil.STATUS_ZOMBIE]
    for child in left:  # this test's own leftovers, by pid
        child.kill()

    assert [status["status"] for status in statuses] == ["active"] * len(SOURCES), [s.get("error") for s in statuses]
    assert len(local_apis) == 1, f"the uploads started Prefect's temporary local API once: {started}"
    assert left == [], f"still running after SIGTERM: {left}"
    # One process exits through SystemExit(128 + SIGTERM); uvicorn's supervisor of workers exits normally.
    assert proc.returncode == (128 + signal.SIGTERM if workers == 1 else 0), log.read_text(errors="replace")[-2000:]
