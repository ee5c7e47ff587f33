"""The ``document-store-mcp`` server's composition root: its tools (``tools.documents``) in the shared app
shape (``app.create_mcp_app``), on ``DOCUMENT_STORE_PORT`` (3002) with the same transports, auth and error
envelope as ``policy-kb``; ``policy-kb serve --servers policy-kb,document-store`` runs both at once."""

from __future__ import annotations

from mcp.server.mcpserver import MCPServer
from starlette.applications import Starlette

from lib.config import Settings, load_settings
from lib.kb import KnowledgeBase, open_kb
from mcp_service.app import create_mcp_app, new_mcp_server
from mcp_service.tools.documents import INSTRUCTIONS, SERVER_NAME, WRITE_TOOLS, register_document_tools


def build_document_server(kb: KnowledgeBase) -> MCPServer:
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
    register_document_tools(server, kb)
    return server


def create_document_store_app(
    settings: Settings | None = None, *, kb: KnowledgeBase | None = None, warm: bool = True
) -> Starlette:
    """The ``document-store-mcp`` app: ``/mcp``, ``/sse``, ``/messages/`` and ``/health`` on its own port."""
    settings = settings or load_settings()
    kb = kb or open_kb(settings)
    return create_mcp_app(
        settings,
        build_document_server(kb),
        port=settings.document_store_port,
        write_tools=WRITE_TOOLS,
        warm_up=kb.embedder.warm_up if warm else None,
    )
