"""Session fixtures that start real services: redis-server on a free port, Chroma on disk, the model.

A missing binary fails the session loudly; nothing is skipped and nothing is faked.
"""

from __future__ import annotations

import contextlib
import gc
import os
import shutil
import socket
import subprocess
import tempfile
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
# Every server a test starts binds to loopback; those started without a key may serve open (decision 0045).
# The tests of that refusal (tests/mcp_service/test_secure_by_default.py) set it false themselves.
os.environ.setdefault("ALLOW_UNAUTHENTICATED", "true")
# The admission gate refuses a search that would wait past a latency budget: on a loaded test machine, a matter of
# timing. The suite's servers get the search lane's generous bound (5 s) instead; the gate's own tests set theirs
# (tests/mcp_service/test_admission_gate.py, decision 0051).
os.environ.setdefault("SEARCH_ADMISSION_WAIT_MS", "5000")
# Prefect's home (its profiles, result storage, and the SQLite database of the temporary API server a service
# starts on first use) is this process's own, not ~/.prefect: two pytest-xdist workers (or two checkouts' test
# runs) migrating and writing one prefect.db at once answer "database is locked". Set before Prefect is imported.
# A fresh home means a fresh database to migrate: more than Prefect's default 20 s start-up on a loaded machine.
os.environ["PREFECT_HOME"] = tempfile.mkdtemp(prefix="policy-kb-tests-prefect-")
os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "90")

from deployments.stack.ports import PORT_RANGE_ENV, free_port
from lib.composition import Stores
from lib.config import Settings, load_settings
from lib.policies.chunks import PolicyVectorStore
from lib.policies.registry import PolicyRegistry
from lib.policies.resolver import EffectiveDateResolver
from lib.policies.stores import PolicyStores
from lib.stores.chroma import open_chroma
from lib.stores.embeddings import Embedder, settings_embedder
from lib.stores.objects import LocalObjectStore
from tests.polling import eventually

PREFECT_HOME = Path(os.environ["PREFECT_HOME"])


def worker_port_range(worker: str | None, workers: int, ephemeral_low: int) -> tuple[int, int]:
    """The ports of one pytest-xdist worker (``gw0``, ``gw1``, ...): its own slice of 10000 up to the ephemeral
    range, so two workers never pick the same port and no outgoing connection's source port is ever one of
    them. Run without xdist, the whole span."""
    low, high = 10000, min(ephemeral_low, 32768) - 1
    if worker is None:
        return low, high
    index, width = int(worker.removeprefix("gw")), (high - low + 1) // workers
    return low + index * width, low + (index + 1) * width - 1


def ephemeral_port_low() -> int:
    """The first port of the kernel's ephemeral range (Linux), 32768 where it cannot be read."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def pytest_configure(config: pytest.Config) -> None:
    """Every port a test, a fixture or a process they start picks (``free_port``) comes from this worker's range
    (set before any fixture runs; inherited by the subprocesses tests start)."""
    worker, workers = os.environ.get("PYTEST_XDIST_WORKER"), int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    low, high = worker_port_range(worker, workers, ephemeral_port_low())
    os.environ[PORT_RANGE_ENV] = f"{low}-{high}"


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(PREFECT_HOME, ignore_errors=True)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: object) -> object:
    """``--dist loadfile`` (the Makefile's): a file, or all of tests/stack, per work unit (tests/xdist_scheduling)."""
    if config.getvalue("dist") != "loadfile":
        return None
    from tests.xdist_scheduling import FileGroupScheduling

    return FileGroupScheduling(config, log)  # type: ignore[arg-type]


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: run `make test`, which installs it", pytrace=False)
    port = free_port()
    proc = subprocess.Popen(
        [
            binary,
            "--port",
            str(port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(directory),
            "--save",
            "",
            "--appendonly",
            "yes",
            "--protected-mode",
            "yes",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.STDOUT,
    )
    url = f"redis://127.0.0.1:{port}/0"

    def answers() -> bool:
        try:
            return bool(redis.Redis.from_url(url).ping())
        except redis.ConnectionError:
            return False

    try:
        eventually(answers, within=10, every=0.05, what=f"redis-server on port {port}")
    except BaseException:
        proc.kill()
        raise
    return proc, url


FROZEN_BEFORE_ANY_TEST = gc.get_freeze_count()
"""What the interpreter and the imports froze themselves (0 on 3.11; a few hundred objects on 3.12)."""


@pytest.fixture(autouse=True)
def collector_left_alone() -> Iterator[None]:
    """No test leaves the test process's heap frozen: an app served in this process (not its own process, see
    ``mcp_service.heap.claim_process``) must leave the collector alone, or later tests run against a frozen heap
    (``gc.get_referrers`` no longer sees frozen objects: Hypothesis then refuses its own PRNG)."""
    yield
    assert gc.get_freeze_count() <= FROZEN_BEFORE_ANY_TEST, "the heap of the test process was left frozen"


@pytest.fixture(scope="session")
def moto_endpoint() -> Iterator[str]:
    """A real S3 API over HTTP on loopback (moto's server). Fails (never skips) if it does not come up."""
    from moto.server import ThreadedMotoServer

    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    # ``start()`` waits forever if the server thread dies (e.g. the port was taken): bound the wait.
    starter = threading.Thread(target=server.start, daemon=True)
    starter.start()
    starter.join(timeout=15)
    if starter.is_alive():
        pytest.fail(f"moto S3 server did not start on 127.0.0.1:{port} within 15 s", pytrace=False)
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5):
            pass
    except OSError as exc:
        server.stop()
        pytest.fail(f"moto S3 server is not accepting connections on 127.0.0.1:{port}: {exc}", pytrace=False)
    yield f"http://127.0.0.1:{port}"
    server.stop()


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    proc, url = start_redis(tmp_path_factory.mktemp("redis"))
    yield url
    proc.terminate()
    proc.wait(timeout=10)


@pytest.fixture
def redis_client(redis_url: str) -> redis.Redis:
    """A clean database for every test."""
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    client.flushdb()
    return client


@pytest.fixture
def registry(redis_client: redis.Redis) -> PolicyRegistry:
    return PolicyRegistry(redis_client)


@pytest.fixture
def resolver(registry: PolicyRegistry) -> EffectiveDateResolver:
    return EffectiveDateResolver(registry)


@pytest.fixture(scope="session")
def chroma_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("chroma")


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    """The configured encoder (``EMBEDDING_ENCODER``, int8 by default), its model files in ``MODEL_CACHE_DIR``."""
    return settings_embedder(load_settings().embeddings)


@pytest.fixture
def settings(tmp_path: Path, redis_url: str, chroma_dir: Path) -> Settings:
    return load_settings(
        redis_url=redis_url,
        data_dir=tmp_path / "data",
        chroma_persist_dir=chroma_dir,
        object_store_url=(tmp_path / "objects").as_uri(),
        allowed_file_roots=[tmp_path / "inbox"],
        policy_collection=f"policy_docs_{uuid.uuid4().hex[:12]}",
        document_collection=f"application_docs_{uuid.uuid4().hex[:12]}",
    )


def make_stores(settings: Settings, registry: PolicyRegistry, embedder: Embedder) -> Stores:
    """Every domain's stores over real services with collections of their own, so tests never see each other's
    chunks; the policy stores over ``registry``, every domain over its Redis client and one Chroma client."""
    assert settings.objects.url is not None
    objects = LocalObjectStore(Path(settings.objects.url.removeprefix("file://")))
    chroma = open_chroma(settings.chroma)
    policies = PolicyStores(
        settings=settings,
        registry=registry,
        resolver=EffectiveDateResolver(registry),
        objects=objects,
        vectors=PolicyVectorStore(chroma, settings.chroma.policy_collection, changed=registry.chunks_changed),
        embedder=embedder,
    )
    return Stores(settings, redis=registry.client, chroma=chroma, objects=objects, embedder=embedder, policies=policies)


def isolated_stores(redis_url: str, folder: Path, chroma_dir: Path, embedder: Embedder, **overrides: object) -> Stores:
    """The stores of a module-scoped fixture: its data folder, its Redis URL, collections of its own."""
    settings = load_settings(
        redis_url=redis_url,
        data_dir=folder,
        chroma_persist_dir=chroma_dir,
        policy_collection=f"policy_docs_{uuid.uuid4().hex[:12]}",
        document_collection=f"application_docs_{uuid.uuid4().hex[:12]}",
        **overrides,
    )
    return make_stores(settings, PolicyRegistry(redis.Redis.from_url(redis_url, decode_responses=True)), embedder)


@pytest.fixture
def stores(settings: Settings, registry: PolicyRegistry, embedder: Embedder) -> Stores:
    (settings.files.allowed_roots[0]).mkdir(parents=True, exist_ok=True)
    return make_stores(settings, registry, embedder)


PREFECT_HARNESS_START_TIMEOUT_S = 90


@contextlib.contextmanager
def prefect_harness() -> Iterator[str]:
    """A temporary Prefect server (SQLite in a temp dir) as this process's API; its URL. Flow-run heartbeats
    are off: they only add a second of thread join to every run."""
    from prefect.settings import PREFECT_API_URL, PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings
    from prefect.testing.utilities import prefect_test_harness

    with (
        prefect_test_harness(server_startup_timeout=PREFECT_HARNESS_START_TIMEOUT_S),
        temporary_settings({PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None}),
    ):
        url = PREFECT_API_URL.value()
        assert url, "the Prefect test harness did not set an API URL"
        yield url


@pytest.fixture(scope="session")
def prefect_api() -> Iterator[str]:
    """One Prefect test server for every test that runs flows in process, the fault tests' worker included."""
    with prefect_harness() as url:
        yield url
