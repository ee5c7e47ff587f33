"""``python -m mcp_service``: serve policy-kb on ``POLICY_KB_HOST``:``POLICY_KB_PORT`` (default 127.0.0.1:3003).

``serve(servers=("policy-kb", "document-store"))`` (``policy-kb serve --servers policy-kb,document-store``)
runs several servers in one process, each on its own port (``DOCUMENT_STORE_PORT``, default 3002, for
the document store) and all over one ``Stores`` (``lib.composition``), each server opening only the stores it
uses; an interrupt stops them all. Every server module has the same shape (``ServerModule``).

``python -m mcp_service --stdio`` (``policy-kb serve --stdio --servers governance``) serves one server over
stdin/stdout instead, for a client that starts it as a subprocess (Claude Code's ``.mcp.json``). Both entry points
read their options with one parser (``mcp_service.arguments``).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Callable, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

import uvicorn
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp

from lib.composition import Stores, open_stores
from lib.config import Settings, load_settings
from lib.errors import InvalidArgumentError
from lib.logs import UVICORN_LOG_CONFIG, configure_service_logging
from lib.observability.memory import report_on_signal
from lib.signals import exit_on_sigterm
from mcp_service import heap
from mcp_service.observability.workers import share_metrics_between_workers


class ServerModule(Protocol):
    """What every server module exposes: its app, and its tools registered on a server over its stores
    (``PolicyStores``, ``DocumentStores``, ``KbStores``, ``GovernanceStores``)."""

    def create_app(
        self, settings: Settings | None = None, *, stores: Stores | None = None, warm: bool = True
    ) -> ASGIApp: ...

    def register_tools(self, server: MCPServer, stores: Any) -> None: ...


class StdioServerModule(ServerModule, Protocol):
    def serve_stdio(self, settings: Settings) -> None: ...


class Server(NamedTuple):
    module: str
    """The server's module (a ``ServerModule``), imported only when that server is served."""
    port: Callable[[Settings], int]

    def load(self) -> ServerModule:
        return cast(ServerModule, importlib.import_module(self.module))


SERVERS: dict[str, Server] = {
    "policy-kb": Server("mcp_service.policy_kb", lambda settings: settings.service.policy_kb_port),
    "document-store": Server("mcp_service.document_store", lambda settings: settings.service.document_store_port),
    "kb": Server("mcp_service.kb", lambda settings: settings.service.kb_mcp_port),
    "governance": Server("mcp_service.governance", lambda settings: settings.service.governance_port),
}
"""Server name → its module and its port in the settings. Modules are imported only for the servers asked for,
so one server's dependencies never slow another."""

STDIO_SERVERS = frozenset({"governance"})
"""The servers whose module also serves over stdio (a ``StdioServerModule``)."""

if TYPE_CHECKING:  # mypy checks every server module against the shape; nothing is imported at run time
    from mcp_service import document_store, governance, kb, policy_kb

    _SHAPES: tuple[ServerModule, ...] = (policy_kb, document_store, kb, governance)
    _STDIO: tuple[StdioServerModule, ...] = (governance,)


class _GroupServer(uvicorn.Server):
    """A uvicorn server that takes its siblings down with it: only the last one installed gets the signal."""

    def __init__(self, config: uvicorn.Config, group: list[uvicorn.Server]) -> None:
        super().__init__(config)
        self.group = group

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        for server in self.group:
            if server is not self:
                server.should_exit = True
        super().handle_exit(sig, frame)


async def _serve_all(servers: Sequence[uvicorn.Server]) -> None:
    await asyncio.gather(*(server.serve() for server in servers))


def check_servers(names: Sequence[str]) -> list[str]:
    unknown = sorted(set(names) - set(SERVERS))
    if not names or unknown:
        raise InvalidArgumentError(f"servers must be some of {', '.join(SERVERS)}; unknown: {', '.join(unknown)}")
    return list(dict.fromkeys(names))


def serve(
    settings: Settings | None = None,
    *,
    host: str | None = None,
    port: int | None = None,
    servers: Sequence[str] = ("policy-kb",),
) -> None:
    """Run the service in the foreground until interrupted (also what ``policy-kb serve`` calls).

    ``port`` overrides the port of a single server; with several, each listens on its settings' port."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    settings = settings or load_settings()
    if host is not None:  # the address bound is the one the start-up checks (``auth.require_credentials``)
        settings = settings.replace(host=host)
        os.environ["POLICY_KB_HOST"] = host  # for the worker processes, which read the environment
    names = check_servers(servers)
    heap.claim_process()
    report_on_signal(settings)
    exit_on_sigterm()  # so what this process started (Prefect's local API) is stopped on SIGTERM too
    configure_service_logging()
    if len(names) > 1 and port is not None:
        raise InvalidArgumentError("--port applies to one server; with several, set each one's port variable")
    if names == ["policy-kb"] and settings.service.policy_kb_workers > 1:
        from mcp_service.policy_kb import policy_access

        policy_access(settings).require_credentials(settings)  # here, not in each worker that would exit on it
        if not settings.chroma.host:
            logging.getLogger(__name__).warning(
                "service.workers_on_embedded_chroma workers=%d: each worker opens CHROMA_PERSIST_DIR on its own; "
                "searching is fine, but upload and reindex through one process or a Chroma server (CHROMA_HOST)",
                settings.service.policy_kb_workers,
            )
        # Several processes, so request handling (mostly Python, under the GIL) uses every core. Each worker
        # builds its app from the environment; the app keeps no state that workers would need to share.
        share_metrics_between_workers(settings)  # /metrics on any worker sums them all
        uvicorn.run(
            f"{SERVERS['policy-kb'].module}:create_worker_app",
            factory=True,
            workers=settings.service.policy_kb_workers,
            host=settings.service.host,
            port=port or settings.service.policy_kb_port,
            proxy_headers=True,
            log_level="info",
            log_config=UVICORN_LOG_CONFIG,
        )
        return
    stores = open_stores(settings)
    group: list[uvicorn.Server] = []
    for name in names:
        server = SERVERS[name]
        config = uvicorn.Config(
            server.load().create_app(settings, stores=stores),
            host=settings.service.host,
            port=port or server.port(settings),
            proxy_headers=True,
            log_level="info",
            log_config=UVICORN_LOG_CONFIG,
        )
        group.append(_GroupServer(config, group))
    with contextlib.suppress(KeyboardInterrupt):  # re-raised by uvicorn after a clean shutdown, as uvicorn.run does
        asyncio.run(_serve_all(group))


def serve_stdio(settings: Settings | None = None, *, servers: Sequence[str] = ("governance",)) -> None:
    """Serve one server over this process's stdin/stdout until stdin closes; logs go to stderr."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    names = check_servers(servers)
    if len(names) != 1 or names[0] not in STDIO_SERVERS:
        raise InvalidArgumentError(f"--stdio serves one server, one of: {', '.join(STDIO_SERVERS)}")
    module = cast(StdioServerModule, SERVERS[names[0]].load())
    heap.claim_process()
    module.serve_stdio(settings or load_settings())


def main(argv: Sequence[str]) -> None:
    """``python -m mcp_service [--servers S] [--host H] [--port P] [--stdio]``: the options of ``policy-kb serve``."""
    from mcp_service.arguments import run_serve_command

    run_serve_command(argv, prog="python -m mcp_service")


if __name__ == "__main__":
    main(sys.argv[1:])
