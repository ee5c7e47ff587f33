"""The ``kb`` MCP server (spec 002; ``policy-kb serve --servers kb``, ``KB_MCP_PORT`` 3004).

Two faces on one port:

    /mcp /sse /messages/ /health   the kb tools (``tools.kb``), for callers presenting ``KB_MCP_API_KEY``
                                   (or an OAuth token with a ``kb`` scope); without either, the server
                                   refuses to start unless ``ALLOW_UNAUTHENTICATED`` (decision 0045)
    /api/v1/...                    the engine: this service's REST API, under its own key ``MCP_API_KEY``

With ``KB_ENGINE_URL`` set, the tools call the engine there over HTTP with ``KB_API_KEY``, as the spec's separate
MCP container does, and this app is only the MCP server in front of it and mounts no API. Unset, the engine is
the one mounted here, so ``--servers kb`` alone is a whole deployment, and the tools call its functions in
process (``kb_engine_local``), not over HTTP. The two keys are independent: the MCP key opens no engine route
and the engine key opens no MCP route. With ``OAUTH_ISSUER_URL`` set the MCP paths take tokens too, never passed
on, and a mounted engine needs ``MCP_API_KEY`` (the server refuses to start without it: the engine would be open).
The server starts whether or not the engine answers; a tool that needs it then returns ``engine_unavailable``.
Uploads are staged in this deployment's Redis and object store (``lib.notes.uploads``); without
``PREFECT_API_URL`` the server also removes abandoned ones itself (``upload_sweeper``).
"""

from __future__ import annotations

import logging
from functools import partial

from starlette.applications import Starlette
from starlette.types import ASGIApp, Receive, Scope, Send

from lib.composition import Stores, open_stores
from lib.config import Settings, load_settings
from lib.notes.uploads import upload_staging
from mcp_service.app import create_mcp_app, new_mcp_server, server_access
from mcp_service.auth import BearerAuthMiddleware, configured_key, require_credentials
from mcp_service.kb_engine_client import KbEngineClient, engine_url
from mcp_service.kb_engine_local import LocalKbEngine
from mcp_service.rest.app import API_PREFIX, create_rest_app
from mcp_service.tools.kb.prompts import register_prompts
from mcp_service.tools.kb.tools import INSTRUCTIONS, SERVER_NAME, register_tools
from mcp_service.tools.kb.work import KbEngine, KbStores
from mcp_service.upload_sweeper import sweep_uploads

__all__ = ["create_app", "register_tools"]

logger = logging.getLogger(__name__)


class _KbApp:
    """``/api/v1`` to the engine (behind its own auth), everything else (lifespan included) to the MCP app;
    the engine client is closed once the MCP app has shut down."""

    def __init__(self, mcp_app: Starlette, engine_app: ASGIApp | None, engine: KbEngine) -> None:
        self.mcp_app, self.engine_app, self.engine = mcp_app, engine_app, engine

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if self.engine_app is not None and scope["type"] == "http" and (path + "/").startswith(API_PREFIX + "/"):
            await self.engine_app({**scope, "root_path": scope.get("root_path", "") + API_PREFIX}, receive, send)
            return
        await self.mcp_app(scope, receive, send)
        if scope["type"] == "lifespan":
            await self.engine.aclose()


def create_app(settings: Settings | None = None, *, stores: Stores | None = None, warm: bool = True) -> ASGIApp:
    """The ``kb`` app: ``/mcp``, ``/sse``, ``/messages/``, ``/health`` and, with no ``KB_ENGINE_URL``, ``/api/v1``."""
    settings = settings or load_settings()
    if not settings.kb.engine_url and settings.oauth.issuer_url and configured_key(settings.auth.api_key) is None:
        # The engine takes static keys only (the tools' own credential): without MCP_API_KEY it would be open
        # to anyone while the operator believes OAuth guards the server.
        raise ValueError("kb: with OAUTH_ISSUER_URL set, the engine mounted at /api/v1 needs MCP_API_KEY")
    stores = stores or open_stores(settings)
    self_engine = not settings.kb.engine_url
    engine: KbEngine = (
        LocalKbEngine(stores, engine_url(settings)) if self_engine else KbEngineClient.from_settings(settings)
    )
    server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
    staging = upload_staging(stores.notes)
    register_tools(server, KbStores(settings, engine, staging))
    register_prompts(server)
    background = []
    if not settings.jobs.prefect_api_url:  # else the cleanup-kb-uploads schedule cleans
        background.append(partial(sweep_uploads, staging, settings.kb.upload_sweep_seconds))
    mcp_app = create_mcp_app(
        settings,
        server,
        port=settings.service.kb_mcp_port,
        access=server_access(
            settings,
            server="kb",
            scope="kb",
            port=settings.service.kb_mcp_port,
            api_key=settings.kb.mcp_api_key,
            key_names="KB_MCP_API_KEY",
        ),
        warm_up=stores.embedder.warm_up if warm and self_engine else None,
        background=background,
    )
    engine_app: ASGIApp | None = None
    if self_engine:
        require_credentials(
            "kb-engine",
            secured=configured_key(settings.auth.api_key) is not None,
            key_names="MCP_API_KEY",
            allow_open=settings.service.allow_unauthenticated,
            host=settings.service.host,
        )
        engine_app = BearerAuthMiddleware(
            create_rest_app(stores),
            api_key=settings.auth.api_key,
            read_api_key=settings.auth.read_api_key,
            server="kb-engine",  # static keys only: the kb tools call it with KB_API_KEY, never a caller's token
            exempt_paths=(),
        )
    logger.info("kb.engine url=%s in_process=%s", engine.base_url, self_engine)
    return _KbApp(mcp_app, engine_app, engine)
