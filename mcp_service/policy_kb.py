"""The ``policy-kb-mcp`` server's composition root (``uvicorn --factory mcp_service.policy_kb:create_app``):
its tools (``tools.policies``) and the REST API (``rest``) over one knowledge base, in the shared app
shape (``app.create_mcp_app``) on ``POLICY_KB_PORT``."""

from __future__ import annotations

import logging

from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette
from starlette.routing import Mount

from lib.config import Settings, load_settings
from lib.kb import KnowledgeBase, open_kb
from lib.policies.search import searchable_revisions
from mcp_service.app import create_mcp_app, new_mcp_server
from mcp_service.rest.app import API_PREFIX, create_rest_app
from mcp_service.tools.policies import INSTRUCTIONS, SERVER_NAME, WRITE_TOOLS, register_policy_tools

logger = logging.getLogger(__name__)


def build_policy_server(kb: KnowledgeBase) -> MCPServer:
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
    register_policy_tools(server, kb)
    return server


def warm_up(kb: KnowledgeBase) -> None:
    """Load the query encoder and every searchable revision's embeddings, so first requests are fast; from
    then on keep the blocks in use fresh, so they are still there after a pause, and keep today's searchable
    revisions loaded, including those another process ingests, before a search asks (``BlockLoader.keep_fresh``
    with this ``warm``: an idle service checks each of them every ~22 s, ~7 ms of CPU, rather than reloading
    them in full after every 30 s of quiet)."""

    def warm_searchable() -> int:
        return kb.vectors.warm(searchable_revisions(kb.registry, None, None))

    try:
        kb.embedder.warm_up()
        logger.info("service.warm revisions_cached=%d", warm_searchable())
    except Exception:
        logger.exception("service.warm_up_failed; requests will load what they need")
    kb.vectors.loader.keep_fresh(warm=warm_searchable)


def create_app(settings: Settings | None = None, *, kb: KnowledgeBase | None = None, warm: bool = True) -> Starlette:
    """The policy-kb app: ``/mcp``, ``/sse``, ``/messages/``, ``/health`` and ``/api/v1``."""
    settings = settings or load_settings()
    kb = kb or open_kb(settings)
    return create_mcp_app(
        settings,
        build_policy_server(kb),
        port=settings.policy_kb_port,
        write_tools=WRITE_TOOLS,
        routes=[Mount(API_PREFIX, app=create_rest_app(kb))],
        warm_up=(lambda: warm_up(kb)) if warm else None,
    )
