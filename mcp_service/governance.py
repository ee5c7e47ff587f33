"""The ``governance`` server's composition root (spec 004): its tools (``tools.governance``) in the shared
app shape (``app.create_mcp_app``) on ``GOVERNANCE_PORT`` (3005), with ``GET /query`` and a ``/health``
that reports the index (``rest.governance``); and the same tools over stdio for Claude Code
(``policy-kb serve --stdio --servers governance``, ``python -m mcp_service --stdio governance``).

Over stdio, stdout is the protocol's wire: logging goes to stderr, anything printed while the stores
open is sent to stderr too, and once serving the SDK points file descriptor 1 at stderr.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading

import anyio
from mcp.server.mcpserver import MCPServer
from mcp_types import Tool
from starlette.applications import Starlette
from starlette.routing import Mount

from lib.config import Settings, load_settings
from lib.governance.api import warm_catalog
from lib.integrations.query_log import install_query_log_handler
from lib.kb import KnowledgeBase, open_kb
from mcp_service.app import LOG_FORMAT, create_mcp_app, new_mcp_server
from mcp_service.heap import freeze_startup_heap
from mcp_service.rest.governance import create_governance_rest_app, governance_health
from mcp_service.tools.governance import INSTRUCTIONS, SERVER_NAME, WRITE_TOOLS, register_governance_tools

logger = logging.getLogger(__name__)


def build_governance_server(kb: KnowledgeBase, *, interface: str = "mcp") -> MCPServer:
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
    register_governance_tools(server, lambda: kb, interface=interface)
    return server


def _no_store() -> KnowledgeBase:
    raise RuntimeError("this server was built for its tool list only")


def governance_tool_list() -> list[Tool]:
    """The governance tools as MCP lists them (names, descriptions, input and output schemas), without
    opening a store: what ``policy-kb tools openai`` turns into function schemas."""
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
    register_governance_tools(server, _no_store)
    return anyio.run(server.list_tools)


def warm_up(kb: KnowledgeBase) -> None:
    """The query encoder and this process's catalog, loaded before the server answers (ready means warm)."""
    try:
        kb.embedder.warm_up()
        logger.info("service.warm governance_documents=%d", warm_catalog(kb))
    except Exception:
        logger.exception("service.warm_up_failed; the first query loads what it needs")


def create_governance_app(
    settings: Settings | None = None, *, kb: KnowledgeBase | None = None, warm: bool = True
) -> Starlette:
    """The governance app: ``/mcp``, ``/sse``, ``/messages/``, ``/health`` (with the index's state) and ``/query``."""
    settings = settings or load_settings()
    kb = kb or open_kb(settings)
    install_query_log_handler()
    return create_mcp_app(
        settings,
        build_governance_server(kb),
        port=settings.governance_port,
        write_tools=WRITE_TOOLS,
        routes=[Mount("", app=create_governance_rest_app(kb))],
        warm_up=(lambda: warm_up(kb)) if warm else None,
        health=governance_health(kb),
    )


def serve_governance_stdio(settings: Settings) -> None:
    """Serve the governance tools over this process's stdin and stdout until stdin closes."""
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    install_query_log_handler(sys.stderr)
    with contextlib.redirect_stdout(sys.stderr):
        kb = open_kb(settings)
        server = build_governance_server(kb, interface="stdio")
    warming = threading.Thread(target=_warm_and_freeze, args=(kb,), name="governance-warm-up")
    warming.start()
    try:
        anyio.run(server.run_stdio_async)
    finally:
        warming.join()  # native code (torch) must not be running when the interpreter exits


def _warm_and_freeze(kb: KnowledgeBase) -> None:
    warm_up(kb)
    freeze_startup_heap()
