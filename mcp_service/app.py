"""The Starlette app every MCP server of this service is served in: the server over both transports,
``/health`` and any extra routes, behind bearer auth and, in front of it, the admission gate (``admission``).

    /health              GET               liveness, no auth
    /metrics             GET               Prometheus metrics (``observability.endpoint``; METRICS_API_KEY if set)
    /mcp                 GET POST DELETE   Streamable HTTP, stateless (any replica answers any request)
    /sse, /messages/     GET, POST         legacy SSE; sessions relayed across replicas (``transports.sse_routes``)
    ...                                    the server's own routes (``policy_kb`` mounts the REST API)

``/mcp`` is a ``Route``, not a ``Mount``: a mount would answer ``/mcp`` with a 307 to ``/mcp/``.
Streamable HTTP runs stateless with JSON responses: no session lives in this process, so replicas
behind a load balancer need no stickiness, and a request costs one JSON round trip
(``transports.streamable_http``).
"""

from __future__ import annotations

import logging
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, cast

import anyio.to_thread
from mcp.server.auth.routes import build_resource_metadata_url, create_protected_resource_routes
from mcp.server.extension import Extension
from mcp.server.mcpserver import MCPServer
from prometheus_client.registry import Collector
from pydantic import AnyHttpUrl, SecretStr
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import BaseRoute, Route

from lib.config import Settings
from lib.logs import configure_logging
from lib.observability import configure_tracing
from lib.stores.redis_server import async_redis_connector
from mcp_service import heap
from mcp_service.admission import AdmissionGate, AdmissionMiddleware
from mcp_service.auth import BearerAuthMiddleware, OAuthResource, configured_key, require_credentials
from mcp_service.auth.tokens import JwtVerifier
from mcp_service.health import liveness
from mcp_service.observability.endpoint import metrics_endpoint
from mcp_service.observability.operations import OperationMetrics
from mcp_service.rate_limit import RateLimiter
from mcp_service.rest.errors import http_error
from mcp_service.tools.access import ReadOnlyAccess
from mcp_service.tools.capabilities import HonestCapabilities
from mcp_service.tools.envelope import bounded_rpc_errors, envelope_sdk_errors
from mcp_service.tools.schemas import CompactToolList
from mcp_service.transports.refusals import JsonRpcRefusals
from mcp_service.transports.sse_relay import SseRelay
from mcp_service.transports.sse_routes import SseMessages, SseStream
from mcp_service.transports.streamable_http import mcp_endpoint

logger = logging.getLogger(__name__)

VERSION = "0.1.0"


def new_mcp_server(name: str, instructions: str, extensions: Sequence[Extension] = ()) -> MCPServer:
    """An empty MCP server with the service's error envelope, ready for its tools; ``extensions`` are the SDK's
    (``policy-kb`` offers the MCP Apps citation viewer, ``tools.policies.viewer``)."""
    # MCPServer() configures logging itself (a Rich handler at INFO) when the process has not: a plain
    # format first, so every log line is not a rendered table on the event loop (figures: docs/performance.md).
    configure_logging()
    # Stateless Streamable HTTP ends a "session" per request, and the SDK logs each at INFO.
    logging.getLogger("mcp.server.streamable_http").setLevel(logging.WARNING)
    # No change notifications are ever sent (the tools are fixed): subscriptions=False, so no listChanged is claimed.
    server = MCPServer(
        name,
        instructions=instructions,
        version=VERSION,
        subscriptions=False,
        extensions=list(extensions),
        middleware=[bounded_rpc_errors, envelope_sdk_errors],
    )
    # Outside the envelope, so an outcome is the error_type the client reads; then what the server advertises
    # (``tools.capabilities``), what a read-only caller may see and call (``tools.access``) and the tool
    # schemas as published (``tools.schemas``).
    at = server.middleware.index(envelope_sdk_errors)
    server.middleware[at:at] = [
        OperationMetrics(name, server.list_tools),
        HonestCapabilities(server),
        ReadOnlyAccess(server),
        CompactToolList(),
    ]
    return server


JOB_GRACE_S = 8.0
"""How long a stopping service lets its background jobs finish: under Docker's 10 s between SIGTERM and SIGKILL."""


def finish_started_jobs() -> None:
    """Let this process's background jobs finish (``JOB_GRACE_S``), then stop Prefect's temporary local API
    they started (``flows.submit.finish_background_jobs``).

    On the app's shutdown, whatever runs it: a uvicorn worker (``POLICY_KB_WORKERS`` > 1) ends by re-raising
    SIGTERM under the default action, so it never reaches the ``atexit`` that would stop that server
    otherwise (it was left running). Prefect is imported only by jobs: a process that never loaded
    ``flows.submit`` started none, and does not pay for the import here."""
    submit = sys.modules.get("flows.submit")
    if submit is not None:
        submit.finish_background_jobs(JOB_GRACE_S)


@dataclass(frozen=True)
class Access:
    """How one server checks its callers (``auth``): its keys, its OAuth resource, its rate limit."""

    server: str
    api_key: SecretStr | None
    read_api_key: SecretStr | None
    oauth: OAuthResource | None
    rate_limiter: RateLimiter | None
    key_names: str = "MCP_API_KEY"
    """The settings a caller's key comes from, named when the server refuses to start without credentials."""

    @property
    def secured(self) -> bool:
        """Whether any credential is configured: a key (``auth.configured_key``) or OAuth."""
        return configured_key(self.api_key) is not None or self.oauth is not None

    def require_credentials(self, settings: Settings) -> None:
        """Start-up refuses an open server unless ``ALLOW_UNAUTHENTICATED``, and then on loopback only
        (``auth.require_credentials``)."""
        require_credentials(
            self.server,
            secured=self.secured,
            key_names=self.key_names,
            allow_open=settings.service.allow_unauthenticated,
            host=settings.service.host,
        )

    def middleware_options(self) -> dict[str, Any]:
        return {
            "api_key": self.api_key,
            "read_api_key": self.read_api_key,
            "oauth": self.oauth,
            "rate_limiter": self.rate_limiter,
            "server": self.server,
        }

    def metadata_routes(self, resource_name: str) -> list[BaseRoute]:
        """RFC 9728 metadata, for the server (``/.well-known/oauth-protected-resource``) and for its ``/mcp``
        (the path-suffixed form MCP clients ask for first), through the SDK's route. URLs go in as strings: the
        metadata model keeps an empty path empty (RFC 8414 issuers compare exactly), AnyHttpUrl() adds a "/"."""
        if self.oauth is None:
            return []
        verifier = self.oauth.verifier
        issuer = [cast(AnyHttpUrl, verifier.issuer)] if isinstance(verifier, JwtVerifier) else []
        return [
            route
            for url in (self.oauth.resource_url, self.oauth.resource_url + "/mcp")
            for route in create_protected_resource_routes(
                cast(AnyHttpUrl, url), issuer, scopes_supported=self.oauth.scopes, resource_name=resource_name
            )
        ]


def server_access(
    settings: Settings,
    *,
    server: str,
    scope: str,
    port: int,
    api_key: SecretStr | None,
    read_api_key: SecretStr | None = None,
    writes: bool = True,
    key_names: str = "MCP_API_KEY",
) -> Access:
    """A server's ``Access`` from the settings: OAuth when ``OAUTH_ISSUER_URL`` is set (audience: the server's
    resource URL and its ``/mcp``, or ``OAUTH_AUDIENCE``; scopes ``<scope>:read`` and, unless ``writes`` is
    false, ``<scope>:write``), a rate limit when ``RATE_LIMIT_PER_MINUTE`` is."""
    oauth = None
    if settings.oauth.issuer_url:
        resource = settings.oauth.resource_url(settings.service.host, port)
        audiences = settings.oauth.audience or [resource, resource + "/mcp"]
        oauth = OAuthResource(
            verifier=JwtVerifier(settings.oauth, audiences),
            resource_url=resource,
            metadata_url=str(build_resource_metadata_url(AnyHttpUrl(resource + "/mcp"))),
            scope=scope,
            writes=writes,
        )
    limiter = None
    if settings.rate_limit.per_minute is not None:
        limiter = RateLimiter(settings.rate_limit, server, async_redis_connector(settings))
    return Access(server, api_key, read_api_key, oauth, limiter, key_names)


def create_mcp_app(
    settings: Settings,
    server: MCPServer,
    *,
    port: int,
    access: Access,
    routes: Sequence[BaseRoute] = (),
    warm_up: Callable[[], None] | None = None,
    health: Callable[[Request], Awaitable[Response]] = liveness,
    background: Sequence[Callable[[], Coroutine[Any, Any, None]]] = (),
    collectors: Sequence[Collector] = (),
    own_auth_prefixes: Sequence[str] = (),
) -> Starlette:
    """One MCP server on both transports with ``/health`` and ``routes``, behind bearer auth: the shape every
    server of this service shares. ``port`` is only logged; ``warm_up`` runs (on a thread) before the app accepts
    connections, and the warm heap is then frozen and what it freed given back (``heap``) if the process is the
    service's own; ``health`` answers ``/health`` (without auth) when a server has more to say than liveness;
    ``background`` loops run from start-up until shutdown; ``collectors`` add the server's own figures to
    ``/metrics``. ``access`` says who may call (``server_access``): a read-only key or a read-scoped token may
    call only the tools annotated read-only (``auth``); routes under ``own_auth_prefixes`` check the keys
    themselves (the web page's sign-in). In front of auth, the admission gate refuses a search call past
    capacity with 503 before its body is read (``admission``; ``SEARCH_ADMISSION_*``). Spans are exported when
    ``OTEL_EXPORTER_OTLP_ENDPOINT`` is set (``lib.observability.tracing``). A server with no credential
    configured refuses to start (``Access.require_credentials``); a path or method it does not serve answers
    404/405 (with ``Allow``) in the REST error envelope (``rest.errors.http_error``)."""
    access.require_credentials(settings)
    configure_tracing(settings.observability)
    # Builds the session managers (event-stream answers for the requests that ask for progress, then JSON for the
    # rest: the server keeps the last); the apps it returns are not used, ``mcp_endpoint`` is ours.
    server.streamable_http_app(stateless_http=True, json_response=False, host=settings.service.host)
    streaming = server.session_manager
    server.streamable_http_app(stateless_http=True, json_response=True, host=settings.service.host)
    session_manager = server.session_manager
    relay = SseRelay(
        server.sse_app(sse_path="/sse", message_path="/messages/", host=settings.service.host),
        async_redis_connector(settings),
    )

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with session_manager.run(), streaming.run(), relay.run():
            if warm_up is not None:
                # Ready means warm: uvicorn accepts no connection before the start-up ends, so no first caller
                # waits behind the encoder and the searched blocks loading (the p99 of a cold service).
                await anyio.to_thread.run_sync(warm_up)
            forever = list(background)
            if heap.owns_process():
                heap.freeze_startup_heap()
                heap.trim()  # the warm-up's peak (slices read from Chroma) leaves RSS before the first request
                forever += [heap.thaw_loop, heap.trim_loop]
            auth = "+".join(name for name, on in (("keys", access.api_key), ("oauth", access.oauth)) if on) or "off"
            logger.info(
                "service.started server=%s host=%s port=%d auth=%s", server.name, settings.service.host, port, auth
            )
            try:
                async with anyio.create_task_group() as loops:
                    for loop in forever:
                        loops.start_soon(loop)
                    try:
                        yield
                    finally:
                        loops.cancel_scope.cancel()
            finally:
                if access.rate_limiter is not None:
                    await access.rate_limiter.aclose()
                await anyio.to_thread.run_sync(finish_started_jobs)

    all_routes = [
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics_endpoint(settings.observability, collectors), methods=["GET"]),
        # No DELETE: stateless, there is no session to end; the router's 405 names what /mcp takes (``Allow``).
        Route("/mcp", JsonRpcRefusals(mcp_endpoint(session_manager, streaming)), methods=["GET", "POST"]),
        Route("/sse", JsonRpcRefusals(SseStream(relay)), methods=["GET"]),
        Route("/messages/", JsonRpcRefusals(SseMessages(relay)), methods=["POST"]),
        *access.metadata_routes(server.name),
        *routes,
    ]
    auth = Middleware(
        BearerAuthMiddleware,
        **access.middleware_options(),
        list_tools=server.list_tools,
        exempt_paths=("/health", "/metrics") if settings.observability.metrics_api_key else ("/health",),
        exempt_prefixes=own_auth_prefixes,
    )
    # Outermost, before auth reads a body: a search past capacity is refused from its headers (``admission``).
    gate = AdmissionGate.from_settings(settings.search)
    admission = [Middleware(AdmissionMiddleware, gate=gate, server=server.name)] if gate is not None else []
    app = Starlette(
        routes=all_routes,
        middleware=[*admission, auth],
        lifespan=lifespan,
        exception_handlers={HTTPException: http_error},
    )
    app.state.admission_gate = gate
    return app
