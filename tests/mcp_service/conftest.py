"""The service under test, for real: uvicorn on a free port in a thread, over the session's redis-server,
Chroma on disk, a local object store and the real model; clients are the MCP SDK's and httpx.

- ``nppf_service``: once per session, the two bundled NPPF PDFs seeded through the real pipeline
  (``lib.policies.seeding``) into a Redis database and Chroma collection of their own, served with both keys
  set. Tests against it must not change NPPF; they create their own policies when they write.
- ``fresh_service``: per test, an empty registry (its own Redis database, flushed) and collection.

The Redis databases here (7 and 8) are not the one the rest of the suite flushes (0).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import uuid
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest
import redis
import uvicorn
from mcp import ClientSession
from mcp.client.sse import sse_client
from mcp.client.streamable_http import streamable_http_client
from playwright.sync_api import Browser, sync_playwright
from pydantic import SecretStr
from starlette.types import ASGIApp

from lib.composition import Stores, open_stores
from lib.config import Settings, load_settings
from lib.policies.seeding import seed_policies
from mcp_service.policy_kb import create_app
from tests.conftest import free_port
from tests.fixtures_paths import SEED_FILE
from tests.mcp_http import mcp_http_client
from tests.polling import eventually

FULL_KEY = "full-key-" + "f" * 32
READ_KEY = "read-key-" + "r" * 32
NPPF_DB = 7
FRESH_DB = 8
SERVER_START_TIMEOUT_S = 30
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}
"""What a Streamable HTTP client sends with every POST to ``/mcp``."""
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}},
}


def bearer(key: str = FULL_KEY) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


@contextmanager
def running(app: ASGIApp, port: int | None = None) -> Iterator[str]:
    """Serve ``app`` with uvicorn on ``port`` (default: a free one) of loopback in a thread; yield its base URL."""
    port = port or free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", lifespan="on"))
    thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
    thread.start()

    def started() -> bool:
        if not thread.is_alive():
            pytest.fail(f"uvicorn exited before it started on port {port}", pytrace=False)
        return server.started

    eventually(started, within=SERVER_START_TIMEOUT_S, every=0.02, what=f"uvicorn on port {port}")
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=15)


def service_settings(base: Path, redis_url: str, chroma_dir: Path, db: int, **overrides: object) -> Settings:
    root = redis_url.rsplit("/", 1)[0]
    values: dict[str, object] = {
        "redis_url": f"{root}/{db}",
        "data_dir": base / "data",
        "chroma_persist_dir": chroma_dir,
        "policy_collection": f"svc_{uuid.uuid4().hex[:16]}",
        "governance_collection": f"gov_{uuid.uuid4().hex[:16]}",
        "object_store_url": (base / f"objects-{uuid.uuid4().hex[:8]}").as_uri(),
        "allowed_file_roots": [base / "inbox"],
        "mcp_api_key": SecretStr(FULL_KEY),
        "mcp_read_api_key": SecretStr(READ_KEY),
        "enable_ocr": False,
        "max_upload_bytes": 2 * 1024 * 1024,
    }
    values.update(overrides)
    (base / "inbox").mkdir(parents=True, exist_ok=True)
    return load_settings(**values)


@dataclass
class Service:
    url: str
    stores: Stores
    settings: Settings

    @property
    def mcp(self) -> str:
        return f"{self.url}/mcp"

    @property
    def sse(self) -> str:
        return f"{self.url}/sse"

    def rest(self, key: str = FULL_KEY) -> httpx.Client:
        return httpx.Client(base_url=f"{self.url}/api/v1", headers=bearer(key), timeout=60)


@pytest.fixture(scope="session", autouse=True)
def stop_prefect_temporary_server() -> Iterator[None]:
    """Uploads run the ingestion flow in the service's process, which starts Prefect's temporary API
    server on first use; stop it while the session's output streams are still open."""
    yield
    if "prefect.server.api.server" in sys.modules:
        from prefect.server.api.server import SubprocessASGIServer

        for server in list(SubprocessASGIServer._instances.values()):
            server.stop()


@pytest.fixture(scope="session")
def service_base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One data dir for every service of the session: the ONNX export under it is made once."""
    return tmp_path_factory.mktemp("service")


@pytest.fixture(scope="session")
def nppf_service(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Service]:
    settings = service_settings(service_base, redis_url, chroma_dir, NPPF_DB)
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    stores = open_stores(settings)
    steps = seed_policies(stores.policies, SEED_FILE)
    assert [s.action.value for s in steps] == ["created_policy", "ingested", "ingested"], steps
    with running(create_app(settings, stores=stores)) as url:
        yield Service(url, stores, settings)


@pytest.fixture
def fresh_service(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[Service]:
    settings = service_settings(service_base, redis_url, chroma_dir, FRESH_DB)
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    stores = open_stores(settings)
    with running(create_app(settings, stores=stores, warm=False)) as url:
        yield Service(url, stores, settings)


@asynccontextmanager
async def mcp_session(url: str, key: str | None = FULL_KEY, transport: str = "http") -> AsyncIterator[ClientSession]:
    """An initialised SDK client session over Streamable HTTP (``http``) or SSE (``sse``)."""
    headers = bearer(key) if key else {}
    if transport == "http":
        async with (
            mcp_http_client(headers=headers) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session
    else:
        async with sse_client(f"{url}/sse", headers=headers) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            yield session


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout: float = 300) -> None:
    """Poll ``/health`` of a service started as a subprocess; fail (never skip) if it dies or stays down. The
    limit only catches a hang: a death fails at once, and two worker processes loading the model on a 2-core
    machine at load 10-16 took over 90 s (a full run beside benchmarks, 2026-12-03)."""

    def healthy() -> bool:
        if proc.poll() is not None:
            pytest.fail(f"the service exited with {proc.returncode}", pytrace=False)
        try:
            return httpx.get(f"{url}/health", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    eventually(healthy, within=timeout, every=0.2, what="the service's /health")


def sse_events(stream: httpx.Response) -> Iterator[tuple[str, str]]:
    """``(event, data)`` pairs of a server-sent event stream, as they arrive."""
    event = ""
    for line in stream.iter_lines():
        if line.startswith("event:"):
            event = line.removeprefix("event:").strip()
        elif line.startswith("data:"):
            yield event, line.removeprefix("data:").strip()


def service_env(settings: Settings, port: int, **extra: str) -> dict[str, str]:
    """The environment a service subprocess reads ``settings``' stores from, listening on ``port``."""
    return os.environ | {
        "REDIS_URL": settings.redis.url or "",
        "POLICY_KB_DATA_DIR": str(settings.paths.data_dir),
        "CHROMA_PERSIST_DIR": str(settings.chroma.persist_dir),
        "CHROMA_POLICY_COLLECTION": settings.chroma.policy_collection,
        "OBJECT_STORE_URL": settings.objects.url or "",
        "POLICY_KB_PORT": str(port),
        "MCP_API_KEY": FULL_KEY,
        "HF_HUB_OFFLINE": "1",
        **extra,
    }


# The governance server's fixtures (spec 004), shared by the test_governance_* files; defined after what they use.
from tests.mcp_service.governance_fixtures import empty_governance_service, governance_service  # noqa: E402

__all__ = ["empty_governance_service", "governance_service"]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    """Debian's Chromium driven by Playwright (decision 0029), one per module of the web page's tests."""
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is a system package of `make system`"
    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium, args=["--no-sandbox"])
        yield launched
        launched.close()
