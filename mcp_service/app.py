"""The service: one Starlette app serving the ``policy-kb-mcp`` MCP server over both transports, the REST
API and health, behind bearer auth.

    /health              GET               liveness, no auth
    /mcp                 GET POST DELETE   Streamable HTTP, stateless (any replica answers any request)
    /sse, /messages/     GET, POST         legacy SSE; sessions relayed across replicas (``sse_relay``)
    /api/v1/...                            REST (``rest``), deep health, OpenAPI at /api/v1/openapi.json

``create_mcp_app`` is that shape without the REST API, shared with the ``document-store-mcp`` server
(``document_tools``), which runs as an app of its own on its own port.

``/mcp`` is a ``Route``, not a ``Mount``: a mount would answer ``/mcp`` with a 307 to ``/mcp/``.
Streamable HTTP runs stateless with JSON responses: no session lives in this process, so replicas
behind a load balancer need no stickiness, and a request costs one JSON round trip. Plain requests take
the single-exchange lane (``single_exchange``) straight to the SDK's request kernel.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from contextlib import asynccontextmanager

import anyio.to_thread
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPASGIApp
from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.routing import BaseRoute, Mount, Route

from lib.config import Settings, load_settings
from lib.kb import KnowledgeBase, open_kb
from lib.policies.search import searchable_revisions
from lib.stores.redis_server import ensure_embedded_redis
from mcp_service.auth import BearerAuthMiddleware
from mcp_service.envelope import envelope_sdk_errors
from mcp_service.health import liveness
from mcp_service.policy_tools import INSTRUCTIONS, SERVER_NAME, WRITE_TOOLS, register_policy_tools
from mcp_service.rest import API_PREFIX, create_rest_app
from mcp_service.single_exchange import mcp_endpoint
from mcp_service.sse_relay import SseRelay

logger = logging.getLogger(__name__)

VERSION = "0.1.0"
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def build_mcp_server(kb: KnowledgeBase) -> MCPServer:
    # MCPServer() configures logging itself (a Rich handler at INFO) when the process has not: a plain
    # format first, so every log line is not a rendered table (~2 ms each on the event loop).
    if not logging.getLogger().handlers:
        logging.basicConfig(level=logging.INFO, format=LOG_FORMAT, stream=sys.stderr)
    # Stateless Streamable HTTP ends a "session" per request, and the SDK logs each at INFO.
    logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)
    server: MCPServer = MCPServer(
        SERVER_NAME, instructions=INSTRUCTIONS, version=VERSION, middleware=[envelope_sdk_errors]
    )
    register_policy_tools(server, kb)
    return server


def warm_up(kb: KnowledgeBase) -> None:
    """Load the query encoder and every searchable revision's embeddings, so first requests are fast."""
    try:
        kb.embedder.warm_up()
        cached = kb.vectors.warm(searchable_revisions(kb, None, None))
        logger.info("service.warm revisions_cached=%d", cached)
    except Exception:
        logger.exception("service.warm_up_failed; requests will load what they need")


def create_app(settings: Settings | None = None, *, kb: KnowledgeBase | None = None, warm: bool = True) -> Starlette:
    """The composition root of the service (``uvicorn --factory mcp_service.app:create_app``)."""
    settings = settings or load_settings()
    kb = kb or open_kb(settings)
    return create_mcp_app(
        settings,
        build_mcp_server(kb),
        port=settings.policy_kb_port,
        write_tools=WRITE_TOOLS,
        routes=[Mount(API_PREFIX, app=create_rest_app(kb))],
        warm_up=(lambda: warm_up(kb)) if warm else None,
    )


def create_mcp_app(
    settings: Settings,
    server: MCPServer,
    *,
    port: int,
    write_tools: Collection[str],
    routes: Sequence[BaseRoute] = (),
    warm_up: Callable[[], None] | None = None,
    single_exchange: bool = True,
) -> Starlette:
    """One MCP server on both transports with ``/health`` and ``routes``, behind bearer auth: the shape every
    server of this service shares (``policy-kb`` here, ``document-store`` in ``document_tools``).
    ``single_exchange=False`` serves ``/mcp`` with the SDK transport alone, the reference the lane is
    tested against."""
    # Builds the session manager; the app it returns is not used, the route below is ours.
    server.streamable_http_app(stateless_http=True, json_response=True, host=settings.host)
    session_manager = server.session_manager
    relay = SseRelay(
        server.sse_app(sse_path="/sse", message_path="/messages/", host=settings.host),
        settings.redis_url or ensure_embedded_redis(settings.redis_dir, settings.redis_server_binary),
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        warming = threading.Thread(target=warm_up or (lambda: None), name=f"{server.name}-warm-up")
        async with session_manager.run(), relay.run():
            if warm_up is not None:
                warming.start()
            logger.info("service.started server=%s host=%s port=%d auth=%s", server.name, settings.host, port,
                        "on" if settings.mcp_api_key else "off")  # fmt: skip
            yield
        if warming.is_alive():
            # Native code (torch, onnxruntime) must not be running when the interpreter exits.
            await anyio.to_thread.run_sync(warming.join)

    all_routes = [
        Route("/health", liveness, methods=["GET"]),
        Route(
            "/mcp",
            mcp_endpoint(server, session_manager) if single_exchange else StreamableHTTPASGIApp(session_manager),
            methods=["GET", "POST", "DELETE"],
        ),
        Route("/sse", relay.stream, methods=["GET"]),
        Route("/messages/", relay.messages, methods=["POST"]),
        *routes,
    ]
    auth = Middleware(
        BearerAuthMiddleware,
        api_key=settings.mcp_api_key,
        read_api_key=settings.mcp_read_api_key,
        write_tools=write_tools,
    )
    return Starlette(routes=all_routes, middleware=[auth], lifespan=lifespan)
