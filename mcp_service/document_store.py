"""The ``document-store-mcp`` server: its tools (``tools.documents``) over the application-document stores, in
the shared app shape (``app.create_mcp_app``) on ``DOCUMENT_STORE_PORT`` (3002) with the same transports, auth
and error envelope as ``policy-kb``; ``ingest_document`` may run as an MCP task (``tools.tasks``).
``policy-kb serve --servers policy-kb,document-store`` runs both at once."""

from __future__ import annotations

from starlette.types import ASGIApp

from lib.composition import Stores, open_stores
from lib.config import Settings, load_settings
from mcp_service.app import create_mcp_app, new_mcp_server, server_access
from mcp_service.tools.documents.prompts import register_prompts
from mcp_service.tools.documents.tools import INSTRUCTIONS, SERVER_NAME, register_tools
from mcp_service.tools.tasks import TasksExtension

__all__ = ["create_app", "register_tools"]


def create_app(settings: Settings | None = None, *, stores: Stores | None = None, warm: bool = True) -> ASGIApp:
    """The ``document-store-mcp`` app: ``/mcp``, ``/sse``, ``/messages/`` and ``/health`` on its own port."""
    settings = settings or load_settings()
    stores = stores or open_stores(settings)
    documents = stores.documents
    tasks = TasksExtension(frozenset({"ingest_document"}), settings.jobs)
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS, extensions=[tasks])
    register_tools(server, documents)
    register_prompts(server)
    return create_mcp_app(
        settings,
        server,
        port=settings.service.document_store_port,
        access=server_access(
            settings,
            server="document-store",
            scope="documents",
            port=settings.service.document_store_port,
            api_key=settings.auth.api_key,
            read_api_key=settings.auth.read_api_key,
        ),
        warm_up=documents.embedder.warm_up if warm else None,
    )
