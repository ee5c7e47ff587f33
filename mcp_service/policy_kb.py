"""The ``policy-kb-mcp`` server (``uvicorn --factory mcp_service.policy_kb:create_app``): its tools
(``tools.policies``) over the policy stores and the REST API (``rest``), in the shared app shape
(``app.create_mcp_app``) on ``POLICY_KB_PORT``."""

from __future__ import annotations

import logging

from starlette.routing import Mount
from starlette.types import ASGIApp

from lib.composition import Stores, open_stores
from lib.config import Settings, load_settings
from lib.observability.memory import report_on_signal
from lib.policies.revision_metrics import RevisionCollector
from lib.policies.search import registered_refs, searchable_revisions
from lib.policies.stores import PolicyStores
from mcp_service import heap
from mcp_service.app import Access, create_mcp_app, new_mcp_server, server_access
from mcp_service.rest.app import API_PREFIX, create_rest_app
from mcp_service.tools.policies.prompts import register_prompts
from mcp_service.tools.policies.resources import register_resources
from mcp_service.tools.policies.tools import INSTRUCTIONS, SERVER_NAME, register_tools
from mcp_service.tools.policies.viewer import viewer_extension
from mcp_service.tools.tasks import TasksExtension
from mcp_service.ui.app import UI_PREFIX, create_ui_app

__all__ = ["create_app", "register_tools"]

logger = logging.getLogger(__name__)


def warm_up(stores: PolicyStores) -> None:
    """Load the query encoder and every searchable revision's index before the first request; from then on
    keep today's searchable revisions loaded and fresh, those another process ingests included, so a pause
    costs no reload (``docs/decisions/0002-block-loader.md``); and delete the snapshots of revisions removed since.
    """

    def warm_searchable() -> int:
        cached = stores.vectors.warm(searchable_revisions(stores.registry, None, None))
        stores.vectors.prune_snapshots(registered_refs(stores.registry))
        return cached

    try:
        stores.embedder.warm_up()
        logger.info("service.warm revisions_cached=%d", warm_searchable())
    except Exception:
        logger.exception("service.warm_up_failed; requests will load what they need")
    stores.vectors.loader.keep_fresh(warm=warm_searchable)


def create_worker_app() -> ASGIApp:
    """One of ``POLICY_KB_WORKERS`` uvicorn worker processes: the service's own process, its app built from the
    environment."""
    settings = load_settings()
    heap.claim_process()
    report_on_signal(settings)
    return create_app(settings)


def policy_access(settings: Settings) -> Access:
    """Who may call the policy-kb server: ``MCP_API_KEY``, ``MCP_READ_API_KEY``, OAuth scope ``policy``."""
    return server_access(
        settings,
        server="policy-kb",
        scope="policy",
        port=settings.service.policy_kb_port,
        api_key=settings.auth.api_key,
        read_api_key=settings.auth.read_api_key,
    )


def create_app(settings: Settings | None = None, *, stores: Stores | None = None, warm: bool = True) -> ASGIApp:
    """The policy-kb app: ``/mcp``, ``/sse``, ``/messages/``, ``/health``, ``/api/v1`` and the web page ``/ui``."""
    settings = settings or load_settings()
    stores = stores or open_stores(settings)
    tasks = TasksExtension(frozenset({"ingest_policy_revision"}), settings.jobs)
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS, extensions=[viewer_extension(), tasks])
    register_tools(server, stores.policies)
    register_prompts(server)
    register_resources(server, stores.policies)
    access = policy_access(settings)
    return create_mcp_app(
        settings,
        server,
        port=settings.service.policy_kb_port,
        access=access,
        routes=[
            Mount(API_PREFIX, app=create_rest_app(stores)),
            Mount(UI_PREFIX, app=create_ui_app(stores, access.oauth, settings)),
        ],
        warm_up=(lambda: warm_up(stores.policies)) if warm else None,
        collectors=[RevisionCollector(stores.policies.registry, settings.jobs.processing_timeout_seconds)],
        own_auth_prefixes=(UI_PREFIX,),
    )
