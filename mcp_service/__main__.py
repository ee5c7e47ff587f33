"""``python -m mcp_service``: serve policy-kb on ``POLICY_KB_HOST``:``POLICY_KB_PORT`` (default 127.0.0.1:3003).

``serve(servers=("policy-kb", "document-store"))`` (``policy-kb serve --servers policy-kb,document-store``)
runs several servers in one process, each on its own port (``DOCUMENT_STORE_PORT``, default 3002, for
the document store) and all over one knowledge base; an interrupt stops them all.

``python -m mcp_service --stdio governance`` (``policy-kb serve --stdio --servers governance``) serves one
server over stdin/stdout instead, for a client that starts it as a subprocess (Claude Code's ``.mcp.json``).
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

import uvicorn
from starlette.applications import Starlette

from lib.config import Settings, load_settings
from lib.errors import InvalidArgumentError
from lib.kb import KnowledgeBase, open_kb
from lib.signals import exit_on_sigterm

SERVERS: dict[str, tuple[str, Callable[[Settings], int]]] = {
    "policy-kb": ("mcp_service.policy_kb:create_app", lambda settings: settings.policy_kb_port),
    "document-store": ("mcp_service.document_store:create_document_store_app", lambda s: s.document_store_port),
    "kb": ("mcp_service.kb:create_kb_app", lambda settings: settings.kb_mcp_port),
    "governance": ("mcp_service.governance:create_governance_app", lambda settings: settings.governance_port),
}
"""Server name → (``module:factory`` of its app, taking ``settings`` and ``kb=``; its port in the settings).
Factories are imported only for the servers asked for, so one server's dependencies never slow another."""


STDIO_SERVERS: dict[str, str] = {"governance": "mcp_service.governance:serve_governance_stdio"}
"""Server name → ``module:function`` serving it over stdio, taking ``settings``."""


def app_factory(name: str) -> Callable[..., Starlette]:
    module, attribute = SERVERS[name][0].split(":")
    factory: Callable[..., Starlette] = getattr(importlib.import_module(module), attribute)
    return factory


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
    names = check_servers(servers)
    exit_on_sigterm()  # so what this process started (Prefect's local API) is stopped on SIGTERM too
    if not logging.getLogger().handlers:
        logging.basicConfig(
            level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s", stream=sys.stderr
        )
    if len(names) > 1 and port is not None:
        raise InvalidArgumentError("--port applies to one server; with several, set each one's port variable")
    if names == ["policy-kb"] and settings.policy_kb_workers > 1:
        if not settings.chroma_host:
            logging.getLogger(__name__).warning(
                "service.workers_on_embedded_chroma workers=%d: each worker opens CHROMA_PERSIST_DIR on its own; "
                "searching is fine, but upload and reindex through one process or a Chroma server (CHROMA_HOST)",
                settings.policy_kb_workers,
            )
        # Several processes, so request handling (mostly Python, under the GIL) uses every core. Each worker
        # builds its app from the environment; the app keeps no state that workers would need to share.
        uvicorn.run("mcp_service.policy_kb:create_app", factory=True, workers=settings.policy_kb_workers,
                    host=host or settings.host, port=port or settings.policy_kb_port, proxy_headers=True,
                    log_level="info")  # fmt: skip
        return
    kb: KnowledgeBase = open_kb(settings)
    group: list[uvicorn.Server] = []
    for name in names:
        default_port = SERVERS[name][1]
        config = uvicorn.Config(
            app_factory(name)(settings, kb=kb),
            host=host or settings.host,
            port=port or default_port(settings),
            proxy_headers=True,
            log_level="info",
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
    module, attribute = STDIO_SERVERS[names[0]].split(":")
    getattr(importlib.import_module(module), attribute)(settings or load_settings())


def main(argv: Sequence[str]) -> None:
    if argv[:1] != ["--stdio"]:
        serve()
        return
    try:
        serve_stdio(servers=list(argv[1:]) or ["governance"])
    except InvalidArgumentError as exc:
        print(f"error ({exc.error_type}): {exc.message}", file=sys.stderr)
        raise SystemExit(2) from None


if __name__ == "__main__":
    main(sys.argv[1:])
