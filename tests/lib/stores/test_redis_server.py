"""The embedded default: a private redis-server under the data directory, shared and reused."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

import redis

from lib.config import load_settings
from lib.policies.models import PolicyCreate
from lib.policies.registry import PolicyRegistry
from lib.stores.redis_server import embedded_url, ensure_embedded_redis, redis_client, stop_embedded_redis

ROOT = Path(__file__).resolve().parents[3]


def short_dir(tmp_path: Path) -> Path:
    """Unix socket paths are limited to ~107 bytes; pytest's tmp paths can be long."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="kb-", dir="/tmp"))


def test_without_redis_url_a_private_server_starts_with_aof_and_is_reused(tmp_path: Path) -> None:
    data = short_dir(tmp_path)
    settings = load_settings(data_dir=data, redis_url=None)
    try:
        client = redis_client(settings)
        assert client.ping()
        assert client.config_get("appendonly") == {"appendonly": "yes"}
        pid = client.info("server")["process_id"]
        again = redis_client(settings)
        assert again.info("server")["process_id"] == pid, "a second process reuses the running server"
        assert (settings.paths.redis_dir / "redis.sock").exists()
    finally:
        stop_embedded_redis(settings.paths.redis_dir)


def test_the_registry_survives_a_restart_of_the_embedded_server(tmp_path: Path) -> None:
    data = short_dir(tmp_path)
    settings = load_settings(data_dir=data, redis_url=None)
    try:
        PolicyRegistry(redis_client(settings)).create_policy(
            PolicyCreate(source="NPPF", title="NPPF", category="national_policy")
        )
        assert stop_embedded_redis(settings.paths.redis_dir)
        assert PolicyRegistry(redis_client(settings)).get_policy("NPPF").title == "NPPF"
    finally:
        stop_embedded_redis(settings.paths.redis_dir)


def test_processes_starting_it_at_once_share_one_server(tmp_path: Path) -> None:
    redis_dir = short_dir(tmp_path) / "redis"
    urls: list[str] = []
    barrier = threading.Barrier(4)

    def start() -> None:
        barrier.wait()
        urls.append(ensure_embedded_redis(redis_dir))

    threads = [threading.Thread(target=start) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert set(urls) == {embedded_url(redis_dir)}
        pids = {redis.Redis.from_url(u).info("server")["process_id"] for u in urls}
        assert len(pids) == 1
    finally:
        stop_embedded_redis(redis_dir)


def test_the_server_outlives_the_process_that_started_it(tmp_path: Path) -> None:
    redis_dir = short_dir(tmp_path) / "redis"
    starter = "import sys; from pathlib import Path; from lib.stores.redis_server import ensure_embedded_redis; "
    starter += "print(ensure_embedded_redis(Path(sys.argv[1])))"
    try:
        done = subprocess.run(
            [sys.executable, "-c", starter, str(redis_dir)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        )
        url = done.stdout.strip()
        assert url == embedded_url(redis_dir)
        assert redis.Redis.from_url(url).ping(), "still running once its starter has exited"
    finally:
        stop_embedded_redis(redis_dir)
