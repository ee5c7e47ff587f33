"""The auth middleware: who may call what, for every route but ``/health`` and the protected-resource metadata,
as a plain ASGI middleware (the package docstring, ``mcp_service.auth``, has the whole story).

A request's caller comes from a static key (``keys``) or a verified OAuth token (``tokens``, ``scopes``); what
it needs comes from ``scopes`` (an MCP POST's JSON body, at most ``MAX_INSPECTED_BODY`` bytes, is read here and
replayed to the app, to see which tool it calls). Then the refusals (401, 403, 429, and 400 for a body that is
not JSON), the caller's name set for the request (``lib.callers``) and an ``audit.write`` line for every write.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Any

from mcp_types import Tool
from pydantic import SecretStr
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lib.callers import current_caller
from lib.logs import event_line
from lib.observability.metrics import rate_limited
from mcp_service.auth.keys import StaticKeys
from mcp_service.auth.scopes import Caller, OAuthResource, rest_writes, write_needs, write_tool_called
from mcp_service.rate_limit import RateLimiter
from mcp_service.tools.access import read_only
from mcp_service.tools.registration import write_tools
from mcp_service.transports.bodies import MalformedBody, malformed_response, parse_json, read_body_prefix, replaying

logger = logging.getLogger("mcp_service.auth")
audit_logger = logging.getLogger("policy_kb.audit")

MAX_INSPECTED_BODY = 4 * 1024 * 1024
BODY_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})
MISSING = "Missing Authorization header"
INVALID = "Invalid bearer token"
BAD_FORMAT = "Invalid Authorization header format: expected 'Bearer <token>'"
METADATA_PATH = "/.well-known/oauth-protected-resource"
RATE_LIMITED_RPC_CODE = -32029
"""The JSON-RPC error code of a rate-limited MCP request (implementation-defined server error range)."""


class BearerAuthMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        api_key: SecretStr | None,
        read_api_key: SecretStr | None = None,
        oauth: OAuthResource | None = None,
        rate_limiter: RateLimiter | None = None,
        server: str = "policy-kb",
        exempt_paths: Collection[str] = ("/health",),
        exempt_prefixes: Collection[str] = (),
        mcp_post_paths: Collection[str] = ("/mcp", "/messages/"),
        list_tools: Callable[[], Awaitable[Iterable[Tool]]] | None = None,
    ) -> None:
        """``list_tools`` is the MCP server's own (``MCPServer.list_tools``): its write tools are asked of it once,
        at the first MCP call. Without it (a REST-only app) no MCP call writes."""
        self.app = app
        self.keys = StaticKeys(api_key, read_api_key)
        self.oauth = oauth
        self.rate_limiter = rate_limiter
        self.server = server
        self._refusals = rate_limited.labels(server)
        self.exempt_paths = frozenset(exempt_paths)
        self.exempt_prefixes = tuple(exempt_prefixes)
        self.mcp_post_paths = frozenset(mcp_post_paths)
        self.list_tools = list_tools
        self.write_tools: frozenset[str] | None = None

    @property
    def enabled(self) -> bool:
        return self.keys.configured or self.oauth is not None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] != "http" or self._exempt(path) or path.startswith(METADATA_PATH):
            await self.app(scope, receive, send)
            return
        caller = await self._authenticate(scope, receive, send)
        if caller is None:
            return
        tool: str | None = None
        mcp_post = scope["method"] == "POST" and path in self.mcp_post_paths
        if mcp_post or _json_body_expected(scope):
            read = await read_body_prefix(receive, MAX_INSPECTED_BODY)
            if read is None:
                return
            body, whole = read
            receive = replaying(body, receive, more_body=not whole)
            if not whole and mcp_post and not caller.write:
                # Larger than the transports take: refused here, as it cannot be told what it calls.
                await JSONResponse({"error": {"code": "payload_too_large", "message": "Body too large"}}, 413)(
                    scope, receive, send
                )
                return
            parsed: Any = None
            if whole and (mcp_post or body):
                try:
                    parsed = parse_json(body)
                except MalformedBody as exc:
                    await self._malformed(scope, receive, send, caller, exc.reason, json_rpc=mcp_post)
                    return
            tool = await self._write_tool_in(parsed) if mcp_post and whole else None
        writes = tool is not None if mcp_post else rest_writes(scope["method"], path)
        if not caller.write and caller.read and scope["method"] == "POST" and path in self.mcp_post_paths:
            # The MCP server lists only the read tools to this caller and answers a write call with a tool error
            # naming what it needs (``tools.access``): the session goes on, where a 403 would end an SSE one. A
            # token on /mcp keeps the 403 with its scope challenge: the MCP authorization spec's step-up.
            scope = read_only(scope, write_needs(caller, self.oauth))
            if writes and not (caller.token and path == "/mcp"):
                logger.warning(
                    event_line(
                        "auth.write_refused", server=self.server, caller=caller.name, path=path, tool=tool or "-"
                    )
                )
                writes = False
        if not caller.may(writes):
            await self._forbid(scope, receive, send, caller, writes, tool)
            return
        if self.rate_limiter is not None:
            wait = await self.rate_limiter.retry_after(caller.name)
            if wait is not None:
                await self._rate_limited(scope, receive, send, caller, wait)
                return
        reset = current_caller.set(caller.name)
        try:
            if writes:
                await self._audited(scope, receive, send, caller, tool)
            else:
                await self.app(scope, receive, send)
        finally:
            current_caller.reset(reset)

    async def _authenticate(self, scope: Scope, receive: Receive, send: Send) -> Caller | None:
        """The caller, or ``None`` once a 401 has been sent."""
        if not self.enabled:
            client = scope.get("client")
            return Caller(f"ip:{client[0] if client else '-'}", read=True, write=True)
        header = Headers(scope=scope).get("authorization")
        if header is None:
            await self._refuse(scope, receive, send, 401, "unauthorized", MISSING)
            return None
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            await self._refuse(scope, receive, send, 401, "unauthorized", BAD_FORMAT)
            return None
        keyed = self.keys.caller(token)
        if keyed is not None:
            return keyed
        if self.oauth is not None and token.count(".") == 2:
            verified = await self.oauth.verifier.verify_token(token)
            if verified is not None and verified.resource is not None:
                return self.oauth.caller(verified)
        await self._refuse(scope, receive, send, 401, "unauthorized", INVALID, invalid_token=True)
        return None

    def _exempt(self, path: str) -> bool:
        """``/health``, and the paths of an app that checks the keys itself (the web page, ``/ui``: a signed
        session cookie after a sign-in with the same keys)."""
        return path in self.exempt_paths or any(path == p or path.startswith(p + "/") for p in self.exempt_prefixes)

    async def _write_tool_in(self, parsed: Any) -> str | None:
        # Always parsed, never searched for "tools/call": JSON may spell it "tools\/call".
        if self.write_tools is None:
            self.write_tools = write_tools(await self.list_tools()) if self.list_tools is not None else frozenset()
        return write_tool_called(parsed, self.write_tools)

    def _warn(self, event: str, scope: Scope, caller: Caller, **extra: object) -> None:
        """One WARNING line for a refused request: the server, the caller (never a token), method and path."""
        method, path = scope["method"], scope["path"]
        logger.warning(event_line(event, server=self.server, caller=caller.name, method=method, path=path, **extra))

    async def _malformed(
        self, scope: Scope, receive: Receive, send: Send, caller: Caller, reason: str, *, json_rpc: bool
    ) -> None:
        """400 for a body that is not JSON or nests too deep, in the envelope of the path (``bodies``)."""
        self._warn("request.malformed", scope, caller, reason=reason)
        await malformed_response(scope["path"], reason, json_rpc=json_rpc)(scope, receive, send)

    async def _audited(self, scope: Scope, receive: Receive, send: Send, caller: Caller, tool: str | None) -> None:
        """The app's answer to a write, then one ``audit.write`` line with who, what and its status."""
        status = 0

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, sending)
        finally:
            audit_logger.info(
                event_line(
                    "audit.write",
                    server=self.server,
                    caller=caller.name,
                    method=scope["method"],
                    path=scope["path"],
                    tool=tool or "-",
                    status=status,
                )
            )

    async def _forbid(
        self, scope: Scope, receive: Receive, send: Send, caller: Caller, writes: bool, tool: str | None
    ) -> None:
        if not caller.token:
            message = "This API key may only read" + (f"; '{tool}' writes" if tool else "")
            await self._refuse(scope, receive, send, 403, "forbidden", message)
            return
        assert self.oauth is not None
        needed = self.oauth.needed(writes)
        what = f"'{tool}'" if tool else "this request"
        await self._refuse(
            scope,
            receive,
            send,
            403,
            "insufficient_scope",
            f"{what} needs the scope {needed}",
            scope_needed=needed,
            caller=caller.name,
        )

    async def _rate_limited(self, scope: Scope, receive: Receive, send: Send, caller: Caller, wait: int) -> None:
        self._refusals.inc()  # policy_kb_rate_limited_total{server}
        self._warn("rate_limit.refused", scope, caller, retry_after=wait)
        message = f"Rate limit exceeded; retry after {wait} s"
        headers = {"Retry-After": str(wait)}
        if scope["path"] in self.mcp_post_paths:
            body: dict[str, Any] = {
                "jsonrpc": "2.0",
                "id": None,
                "error": {"code": RATE_LIMITED_RPC_CODE, "message": message, "data": {"retry_after": wait}},
            }
        else:
            body = {"error": {"code": "rate_limited", "message": message}}
        await JSONResponse(body, 429, headers=headers)(scope, receive, send)

    async def _refuse(
        self,
        scope: Scope,
        receive: Receive,
        send: Send,
        status: int,
        code: str,
        message: str,
        *,
        invalid_token: bool = False,
        scope_needed: str | None = None,
        caller: str = "-",
    ) -> None:
        client = scope.get("client")
        logger.warning(
            "auth.refused status=%d reason=%r client_ip=%s caller=%s method=%s path=%s",
            status,
            message,
            client[0] if client else "-",
            caller,
            scope["method"],
            scope["path"],
        )
        await JSONResponse(
            {"error": {"code": code, "message": message}},
            status,
            headers=self._challenge(status, invalid_token, scope_needed),
        )(scope, receive, send)

    def _challenge(self, status: int, invalid_token: bool, scope_needed: str | None) -> dict[str, str] | None:
        """``WWW-Authenticate``: with OAuth on, where the resource metadata is and which scope to ask for."""
        if self.oauth is None:
            return {"WWW-Authenticate": 'Bearer realm="policy-kb"'} if status == 401 else None
        parts = ['realm="policy-kb"']
        if scope_needed is not None:
            parts.append('error="insufficient_scope"')
        elif invalid_token:
            parts.append('error="invalid_token"')
        if status == 403 and scope_needed is None:
            return None  # a static read-only key: no token would help
        parts.append(f'resource_metadata="{self.oauth.metadata_url}"')
        parts.append(f'scope="{scope_needed or " ".join(self.oauth.scopes)}"')
        return {"WWW-Authenticate": "Bearer " + ", ".join(parts)}


def _json_body_expected(scope: Scope) -> bool:
    """A request whose body the app reads as JSON (FastAPI reads one without a content type as JSON too):
    parsed here first (``bodies.parse_json``), so a malformed one gets the same 400 on every server."""
    if scope["method"] not in BODY_METHODS:
        return False
    content_type = Headers(scope=scope).get("content-type")
    if content_type is None:
        return True
    media = content_type.split(";", 1)[0].strip().lower()
    return media == "application/json" or (media.startswith("application/") and media.endswith("+json"))
