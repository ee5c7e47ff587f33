"""The ``governance`` server (spec 004): its tools (``tools.governance``) in the shared
app shape (``app.create_mcp_app``) on ``GOVERNANCE_PORT`` (3005), with ``GET /query`` and a ``/health``
that reports the index (``rest.governance``); and the same tools over stdio for Claude Code
(``policy-kb serve --stdio --servers governance``, ``python -m mcp_service --stdio``).

Over stdio, stdout is the protocol's wire: logging goes to stderr, anything printed while the stores
open is sent to stderr too, and once serving the SDK points file descriptor 1 at stderr.
"""

from __future__ import annotations

import contextlib
import logging
import sys
import threading
from typing import NoReturn, cast

import anyio
from fastapi import FastAPI
from mcp_types import Tool
from pydantic import SecretStr
from starlette.routing import Route
from starlette.types import ASGIApp

from lib.composition import Stores, open_stores
from lib.config import Settings, load_settings
from lib.governance.search import warm_catalog
from lib.governance.stores import GovernanceStores
from lib.integrations.query_log import install_query_log_handler
from lib.logs import configure_logging
from mcp_service import heap
from mcp_service.app import create_mcp_app, new_mcp_server, server_access
from mcp_service.rest.governance import create_governance_rest_app, governance_health
from mcp_service.tools.governance.prompts import register_prompts
from mcp_service.tools.governance.tools import INSTRUCTIONS, SERVER_NAME, register_tools

__all__ = ["create_app", "register_tools", "serve_stdio"]

logger = logging.getLogger(__name__)


class _Unopened:
    """Stands for the stores of a server built only to list its tools; its tools touch stores only when called."""

    def __getattr__(self, name: str) -> NoReturn:
        raise RuntimeError("this server was built for its tool list only")


def governance_tool_list() -> list[Tool]:
    """The governance tools as MCP lists them (names, descriptions, input and output schemas), without
    opening a store: what ``policy-kb tools openai`` turns into function schemas."""
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
    register_tools(server, cast(GovernanceStores, _Unopened()))
    return anyio.run(server.list_tools)


def warm_up(stores: GovernanceStores) -> None:
    """The query encoder and this process's catalog, loaded before the server answers (ready means warm)."""
    try:
        stores.embedder.warm_up()
        logger.info("service.warm governance_documents=%d", warm_catalog(stores))
    except Exception:
        logger.exception("service.warm_up_failed; the first query loads what it needs")


def governance_keys(settings: Settings) -> tuple[SecretStr | None, SecretStr | None]:
    """The keys callers present: ``GOVERNANCE_API_KEY`` alone (empty: none, the server is open
    if ``ALLOW_UNAUTHENTICATED`` lets it start), or, when it is
    unset, ``MCP_API_KEY`` and ``MCP_READ_API_KEY`` as before. The server only reads, so its own key needs no
    read-only twin, and a public governance server need not share the policy-kb write key."""
    own = settings.auth.governance_api_key
    return (own, None) if own is not None else (settings.auth.api_key, settings.auth.read_api_key)


def rest_routes(rest: FastAPI) -> list[Route]:
    """The REST app's paths (``/query``, ``/openapi.json``) as routes of the server's own router, each with its
    methods: a wrong method on any path then answers 405 with ``Allow`` and an unknown path 404, where a catch-all
    mount took every request the other routes did not fully match (``POST /health`` answered 404)."""
    return [
        Route(route.path, rest, methods=sorted(route.methods or ()))
        for route in rest.routes
        if isinstance(route, Route)
    ]


def create_app(settings: Settings | None = None, *, stores: Stores | None = None, warm: bool = True) -> ASGIApp:
    """The governance app: ``/mcp``, ``/sse``, ``/messages/``, ``/health`` (with the index's state) and ``/query``."""
    settings = settings or load_settings()
    governance = (stores or open_stores(settings)).governance
    install_query_log_handler()
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
    register_tools(server, governance)
    register_prompts(server)
    api_key, read_api_key = governance_keys(settings)
    return create_mcp_app(
        settings,
        server,
        port=settings.service.governance_port,
        access=server_access(
            settings,
            server="governance",
            scope="governance",
            port=settings.service.governance_port,
            api_key=api_key,
            read_api_key=read_api_key,
            writes=False,  # scope governance:read only
            key_names="GOVERNANCE_API_KEY or MCP_API_KEY",
        ),
        routes=rest_routes(create_governance_rest_app(governance)),
        warm_up=(lambda: warm_up(governance)) if warm else None,
        health=governance_health(governance),
    )


def serve_stdio(settings: Settings) -> None:
    """Serve the governance tools over this process's stdin and stdout until stdin closes."""
    configure_logging()
    install_query_log_handler(sys.stderr)
    with contextlib.redirect_stdout(sys.stderr):
        governance = open_stores(settings).governance
        server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
        register_tools(server, governance, interface="stdio")
        register_prompts(server)
    warming = threading.Thread(target=_warm_and_freeze, args=(governance,), name="governance-warm-up")
    warming.start()
    try:
        anyio.run(server.run_stdio_async)
    finally:
        warming.join()  # native code (torch) must not be running when the interpreter exits


def _warm_and_freeze(stores: GovernanceStores) -> None:
    warm_up(stores)
    if heap.owns_process():
        heap.freeze_startup_heap()
