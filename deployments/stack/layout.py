"""Where a local stack lives: its folder, the port of each process, and the environment every process sees.

A layout is saved as ``stack.json`` in its folder, so ``stack status``/``down``, the processes' readiness
waits (``deployments.stack.ready``) and other tools (benchmarks) find the ports of a running stack from
the folder alone. The environment uses the settings names of ``lib/config/`` (``REDIS_URL``,
``CHROMA_HOST``, ``OBJECT_STORE_URL``, ``S3_ENDPOINT_URL``, ``PREFECT_API_URL``, ...), as docker-compose does.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from deployments.stack.ports import free_port
from lib.glibc_heap import MMAP_THRESHOLD

PROJECT_ROOT = Path(__file__).resolve().parents[2]
PROCFILE = Path(__file__).resolve().parent / "Procfile"
STATE_FILE = "stack.json"
BUCKET = "policy-kb"
S3_CREDENTIALS = {"AWS_ACCESS_KEY_ID": "policykb", "AWS_SECRET_ACCESS_KEY": "policykb-dev-secret"}
"""moto accepts any credentials; these are docker-compose's MinIO defaults, so the two stacks read alike."""

DEFAULT_PORTS = {
    "redis": 6390,
    "chroma": 8000,
    "s3": 9000,
    "prefect": 4200,
    "replica-a": 3003,
    "replica-b": 3013,
    "document-store": 3002,
    "kb": 3004,
    "governance": 3005,
}
"""The ports of ``policy-kb stack up``; ``--free-ports`` (and the tests) pick free ones instead. The ``servers``
process serves the other three MCP servers (document-store, kb in front of replica-a's engine, governance) as
docker-compose's ``mcp``, ``kb`` and ``governance`` containers do, over the same stores, with one model loaded."""
OTHER_SERVERS = ("document-store", "kb", "governance")
REPLICAS = ("replica-a", "replica-b")
MARKER = "POLICY_KB_STACK"
"""Set to the stack folder in every process of a stack (inherited by whatever they start), so ``down``
finds and stops all of it, flow-run subprocesses of the worker included."""


_PROCFILE_LINE = re.compile(r"^(?P<name>[A-Za-z0-9_-]+):\s*(?P<command>.+)$")


def procfile() -> dict[str, str]:
    """The Procfile's processes in its order: name -> shell command (``#`` lines are comments)."""
    lines = (_PROCFILE_LINE.match(line.strip()) for line in PROCFILE.read_text().splitlines())
    return {m["name"]: m["command"] for m in lines if m is not None}


def process_names() -> list[str]:
    """The processes of the Procfile, in its order."""
    return list(procfile())


def procfile_command(name: str) -> str:
    """The shell command of one Procfile line (``$VARIABLES`` expanded by the shell from the layout's env)."""
    return procfile()[name]


@dataclass(frozen=True)
class StackLayout:
    """A stack's folder, ports and extra environment (e.g. ``MCP_API_KEY`` or ``ENABLE_OCR`` for tests)."""

    directory: Path
    ports: dict[str, int] = field(default_factory=lambda: dict(DEFAULT_PORTS))
    extra_env: dict[str, str] = field(default_factory=dict)
    shared_data_dir: Path | None = None
    """``POLICY_KB_DATA_DIR`` of another stack to share (a second replica of it started alone keeps its
    ONNX export); unset = ``<directory>/data``."""

    @classmethod
    def with_free_ports(cls, directory: Path, extra_env: dict[str, str] | None = None) -> StackLayout:
        return cls(directory.resolve(), {name: free_port() for name in DEFAULT_PORTS}, dict(extra_env or {}))

    @classmethod
    def load(cls, directory: Path) -> StackLayout:
        """The layout saved in ``directory`` (raises ``FileNotFoundError`` when no stack was set up there)."""
        data = json.loads((directory / STATE_FILE).read_text())
        shared = Path(data["shared_data_dir"]) if data.get("shared_data_dir") else None
        return cls(Path(data["directory"]), {k: int(v) for k, v in data["ports"].items()}, data["extra_env"], shared)

    def save(self) -> None:
        for sub in ("redis", "chroma", "s3", "prefect", "data", "logs"):
            (self.directory / sub).mkdir(parents=True, exist_ok=True)
        state = {
            "directory": str(self.directory),
            "ports": self.ports,
            "extra_env": self.extra_env,
            "shared_data_dir": str(self.shared_data_dir) if self.shared_data_dir else None,
        }
        (self.directory / STATE_FILE).write_text(json.dumps(state, indent=2) + "\n")

    @property
    def logs(self) -> Path:
        return self.directory / "logs"

    @property
    def supervisor_socket(self) -> Path:
        """supervisord's XML-RPC socket: in the folder, or under the temp folder when the folder's path is
        too long for a unix socket (about 108 bytes)."""
        here = self.directory / "supervisor.sock"
        if len(str(here)) < 100:
            return here
        digest = hashlib.sha256(str(self.directory).encode()).hexdigest()[:16]
        return Path(tempfile.gettempdir()) / f"policy-kb-stack-{digest}.sock"

    @property
    def data_dir(self) -> Path:
        return self.shared_data_dir or self.directory / "data"

    def with_new_replica(self, directory: Path) -> StackLayout:
        """This stack's stores and data folder, with a fresh port for ``replica-a``, saved in ``directory``:
        one more replica (or a restarted one) started alone with ``start_process(..., "replica-a")``."""
        ports = {**self.ports, "replica-a": free_port()}
        return StackLayout(directory.resolve(), ports, dict(self.extra_env), self.data_dir)

    @property
    def redis_url(self) -> str:
        return f"redis://127.0.0.1:{self.ports['redis']}/0"

    @property
    def s3_endpoint(self) -> str:
        return f"http://127.0.0.1:{self.ports['s3']}"

    @property
    def prefect_api_url(self) -> str:
        return f"http://127.0.0.1:{self.ports['prefect']}/api"

    @property
    def object_store_url(self) -> str:
        return f"s3://{BUCKET}/objects/"

    def url(self, name: str) -> str:
        """``http://127.0.0.1:<port>`` of an HTTP process (chroma, s3, prefect, a replica)."""
        return f"http://127.0.0.1:{self.ports[name]}"

    def replica_urls(self) -> list[str]:
        return [self.url(name) for name in REPLICAS]

    def settings_env(self) -> dict[str, str]:
        """The stores of this stack under the names of ``lib/config/`` (what a replica or a flow reads)."""
        return {
            "REDIS_URL": self.redis_url,
            "CHROMA_HOST": "127.0.0.1",
            "CHROMA_PORT": str(self.ports["chroma"]),
            "OBJECT_STORE_URL": self.object_store_url,
            "S3_ENDPOINT_URL": self.s3_endpoint,
            **S3_CREDENTIALS,
            "AWS_DEFAULT_REGION": "us-east-1",
            "PREFECT_API_URL": self.prefect_api_url,
            "POLICY_KB_DATA_DIR": str(self.data_dir),
        }

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """``base`` (the caller's environment) with this stack's variables over it."""
        path = f"{Path(sys.executable).parent}:{base.get('PATH', '/usr/local/bin:/usr/bin:/bin')}"
        return {
            **base,
            "PATH": path,
            MARKER: str(self.directory),
            "STACK_DIR": str(self.directory),
            "STACK_REDIS_PORT": str(self.ports["redis"]),
            "STACK_S3_PORT": str(self.ports["s3"]),
            "STACK_PREFECT_PORT": str(self.ports["prefect"]),
            "STACK_REPLICA_A_PORT": str(self.ports["replica-a"]),
            "STACK_REPLICA_B_PORT": str(self.ports["replica-b"]),
            "STACK_DOCUMENT_STORE_PORT": str(self.ports["document-store"]),
            "STACK_KB_PORT": str(self.ports["kb"]),
            "STACK_GOVERNANCE_PORT": str(self.ports["governance"]),
            "PREFECT_HOME": str(self.directory / "prefect"),
            "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
            "PREFECT_WORKER_QUERY_SECONDS": "2",
            "PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS": "10",
            "ANONYMIZED_TELEMETRY": "False",
            "HF_HUB_OFFLINE": "1",
            "PYTHONUNBUFFERED": "1",
            "TRANSFORMERS_OFFLINE": "1",
            # glibc gives each thread that allocates its own 64 MB arena; a service's search and I/O threads then
            # hold freed memory in a dozen arenas (the soak's RSS kept climbing). Two bound it (docs/performance.md:
            # Soak).
            "MALLOC_ARENA_MAX": base.get("MALLOC_ARENA_MAX", "2"),
            # glibc maps blocks over 128 KB on their own, then raises that bar to the largest block freed (up to
            # 32 MB), so later large, short-lived blocks land in the heap and strand it. Fixed, they are given back
            # when freed (decision 0004; docs/performance.md: Soak, 14th run).
            "MALLOC_MMAP_THRESHOLD_": base.get("MALLOC_MMAP_THRESHOLD_", str(MMAP_THRESHOLD)),
            **self.settings_env(),
            **self.extra_env,
        }
