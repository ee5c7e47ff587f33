"""A real Sentinel deployment on loopback for tests: a primary, a replica (``--replicaof``) and three sentinels
(``redis-server <conf> --sentinel``, each with its own config file, which Sentinel rewrites as it learns).

Every process is a real ``redis-server`` started by mirakuru on a free port in a folder of its own, with AOF
``appendfsync always`` as in production. The sentinels agree on a failure in ``DOWN_AFTER_MS`` (quorum 2 of 3)
and a failover may take ``FAILOVER_TIMEOUT_MS``: short, so a test sees a promotion in a few seconds.
"""

from __future__ import annotations

import contextlib
import shutil
import signal
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import redis
from mirakuru import TCPExecutor
from mirakuru.exceptions import ProcessFinishedWithError

from deployments.stack.ports import free_port
from lib.config import Settings, load_settings
from tests.polling import eventually

MASTER = "policy-kb-test"
DOWN_AFTER_MS = 1000
FAILOVER_TIMEOUT_MS = 5000
QUORUM = 2
_START_TIMEOUT_S = 15.0


def _binary() -> str:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed: run `make test`, which installs it", pytrace=False)
    return binary


def ping(port: int) -> bool:
    try:
        return bool(redis.Redis(port=port, socket_connect_timeout=0.2, socket_timeout=0.5).ping())
    except (redis.ConnectionError, redis.TimeoutError):
        return False


@dataclass
class Node:
    """One redis-server (data node) on ``port``, its AOF in ``directory``; ``replicaof`` its primary's port."""

    port: int
    directory: Path
    replicaof: int | None = None
    executor: TCPExecutor | None = field(default=None, repr=False)

    def command(self) -> list[str]:
        args = [
            _binary(),
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(self.directory),
            "--save",
            "",
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--repl-diskless-sync",
            "yes",
            "--repl-diskless-sync-delay",
            "0",
            "--logfile",
            str(self.directory / "redis.log"),
        ]
        if self.replicaof is not None:
            args += ["--replicaof", "127.0.0.1", str(self.replicaof)]
        return args

    def start(self) -> Node:
        """Start (or start again, on the same port and AOF) and wait until it answers."""
        self.directory.mkdir(parents=True, exist_ok=True)
        self.executor = TCPExecutor(self.command(), host="127.0.0.1", port=self.port, timeout=_START_TIMEOUT_S)
        self.executor.start()
        return self

    def kill(self) -> None:
        """``kill -9``: nothing of its own shutdown runs, nothing more is replicated."""
        if self.executor is not None and self.executor.running():
            self.executor.kill(sig=signal.SIGKILL)

    def stop(self) -> None:
        if self.executor is not None and self.executor.running():
            with contextlib.suppress(ProcessFinishedWithError):
                self.executor.stop()

    def client(self) -> redis.Redis:
        return redis.Redis(port=self.port, decode_responses=True, socket_timeout=5)


@dataclass
class SentinelCluster:
    """The running deployment: ``nodes[0]`` started as the primary, ``nodes[1]`` as its replica."""

    nodes: list[Node]
    sentinel_ports: list[int]
    sentinels: list[TCPExecutor]

    def settings(self, base: Path, **overrides: object) -> Settings:
        """Service settings that find the primary through these sentinels (``REDIS_SENTINELS``)."""
        values: dict[str, object] = {
            "data_dir": base / "data",
            "redis_url": None,
            "redis_sentinels": [f"127.0.0.1:{port}" for port in self.sentinel_ports],
            "redis_sentinel_master": MASTER,
            "redis_wait_timeout_ms": 500,
        }
        return load_settings(**(values | overrides))

    def sentinel(self, index: int = 0) -> redis.Redis:
        return redis.Redis(port=self.sentinel_ports[index], decode_responses=True, socket_timeout=2)

    def reported_primary(self) -> int | None:
        """The primary's port as the first sentinel that answers names it."""
        for port in self.sentinel_ports:
            with contextlib.suppress(redis.ConnectionError, redis.TimeoutError):
                address = redis.Redis(port=port, socket_timeout=1).sentinel_get_master_addr_by_name(MASTER)
                return int(address[1]) if address else None
        return None

    def node(self, port: int) -> Node:
        return next(node for node in self.nodes if node.port == port)

    def ready(self) -> bool:
        """Every sentinel knows the primary's replica and the two other sentinels (a failover needs them), and
        the replica has synchronised."""
        for index in range(len(self.sentinel_ports)):
            try:
                sentinel = self.sentinel(index)
                replicas = sentinel.sentinel_slaves(MASTER)
                others = sentinel.sentinel_sentinels(MASTER)
            except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError):
                return False
            if len(others) != len(self.sentinel_ports) - 1 or not any(r.get("is_slave") for r in replicas):
                return False
        return self.replica_synchronised(self.nodes[1])

    @staticmethod
    def replica_synchronised(node: Node) -> bool:
        """The node replicates and its primary counts it online and acknowledging: the replica's own link being
        up comes first, and a WAIT on the primary counts the replica only once the primary sees it online."""
        try:
            info = node.client().info("replication")
            if info.get("role") != "slave" or info.get("master_link_status") != "up":
                return False
            primary = redis.Redis(host=str(info["master_host"]), port=int(info["master_port"]), socket_timeout=2)
            seen = primary.info("replication")
            online = [v for k, v in seen.items() if k.startswith("slave") and isinstance(v, dict)]
            return any(r.get("port") == node.port and r.get("state") == "online" for r in online) and bool(
                primary.execute_command("WAIT", 1, 2000)
            )
        except (redis.ConnectionError, redis.TimeoutError):
            return False


def _sentinel_config(directory: Path, port: int, primary: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    config = directory / "sentinel.conf"
    config.write_text(
        f"port {port}\n"
        "bind 127.0.0.1\n"
        f"dir {directory}\n"
        f"logfile {directory / 'sentinel.log'}\n"
        f"sentinel monitor {MASTER} 127.0.0.1 {primary} {QUORUM}\n"
        f"sentinel down-after-milliseconds {MASTER} {DOWN_AFTER_MS}\n"
        f"sentinel failover-timeout {MASTER} {FAILOVER_TIMEOUT_MS}\n"
        f"sentinel parallel-syncs {MASTER} 1\n"
    )
    return config


@contextlib.contextmanager
def sentinel_cluster(directory: Path) -> Iterator[SentinelCluster]:
    """Start a primary, its replica and three sentinels in ``directory``; wait until a failover could happen;
    stop them all at the end."""
    primary_port, replica_port = free_port(), free_port()
    nodes = [Node(primary_port, directory / "node-a"), Node(replica_port, directory / "node-b", primary_port)]
    sentinel_ports = [free_port() for _ in range(3)]
    sentinels: list[TCPExecutor] = []
    cluster = SentinelCluster(nodes, sentinel_ports, sentinels)
    try:
        for node in nodes:
            node.start()
        for index, port in enumerate(sentinel_ports):
            config = _sentinel_config(directory / f"sentinel-{index}", port, primary_port)
            executor = TCPExecutor(
                [_binary(), str(config), "--sentinel"], host="127.0.0.1", port=port, timeout=_START_TIMEOUT_S
            )
            sentinels.append(executor)
            executor.start()
        eventually(cluster.ready, within=30, every=0.05, what="sentinels that know each other and the replica")
        yield cluster
    finally:
        for executor in sentinels:
            with contextlib.suppress(ProcessFinishedWithError):
                executor.stop()
        for node in nodes:
            node.stop()
