"""Bearer-token authentication for every route but ``/health`` (spec 000 FR-010), as a plain ASGI middleware.

- ``MCP_API_KEY`` unset or empty: no checks at all (the spec's backward-compatible no-op).
- Otherwise each request needs ``Authorization: Bearer <token>``. Missing header, another scheme and a
  wrong token get 401 with the spec's bodies; tokens are compared with ``hmac.compare_digest``.
- ``MCP_READ_API_KEY`` (optional) is a second token that may only read: REST ``GET``/``HEAD`` and MCP
  traffic except ``tools/call`` of a write tool, one whose ``readOnlyHint`` is not true in the server's own
  tool list (``tools.registration.write_tools``). A write with it gets 403 in the same body shape. To
  see which tool an MCP POST calls, its JSON body (at most ``MAX_INSPECTED_BODY`` bytes, as the MCP
  transports themselves allow) is read here and replayed to the app.

Every refusal is logged at WARNING with client IP, method and path, never with the token.
"""

from __future__ import annotations

import hmac
import json
import logging
from collections.abc import Awaitable, Callable, Collection, Iterable
from typing import Any

from mcp_types import Tool
from pydantic import SecretStr
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_service.tools.registration import write_tools
from mcp_service.transports.bodies import BodyTooLarge, read_body, replaying

logger = logging.getLogger(__name__)

MAX_INSPECTED_BODY = 4 * 1024 * 1024
READ_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
MISSING = "Missing Authorization header"
INVALID = "Invalid bearer token"
BAD_FORMAT = "Invalid Authorization header format: expected 'Bearer <token>'"


def _secret(value: SecretStr | None) -> bytes | None:
    raw = value.get_secret_value() if value is not None else ""
    return raw.encode() if raw else None


class BearerAuthMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        api_key: SecretStr | None,
        read_api_key: SecretStr | None = None,
        exempt_paths: Collection[str] = ("/health",),
        mcp_post_paths: Collection[str] = ("/mcp", "/messages/"),
        list_tools: Callable[[], Awaitable[Iterable[Tool]]] | None = None,
    ) -> None:
        """``list_tools`` is the MCP server's own (``MCPServer.list_tools``): its write tools are asked of it once,
        at the first MCP call with the read-only key. Without it (a REST-only app) no MCP call writes."""
        self.app = app
        self.api_key = _secret(api_key)
        self.read_api_key = _secret(read_api_key) if self.api_key else None
        self.exempt_paths = frozenset(exempt_paths)
        self.mcp_post_paths = frozenset(mcp_post_paths)
        self.list_tools = list_tools
        self.write_tools: frozenset[str] | None = None
        if read_api_key is not None and self.api_key is None:
            logger.warning("auth.disabled MCP_READ_API_KEY is set but MCP_API_KEY is not: authentication is off")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or self.api_key is None or scope["path"] in self.exempt_paths:
            await self.app(scope, receive, send)
            return
        header = Headers(scope=scope).get("authorization")
        if header is None:
            await self._refuse(scope, receive, send, 401, "unauthorized", MISSING)
            return
        scheme, _, token = header.strip().partition(" ")
        token = token.strip()
        if scheme.lower() != "bearer" or not token:
            await self._refuse(scope, receive, send, 401, "unauthorized", BAD_FORMAT)
            return
        presented = token.encode()
        full = hmac.compare_digest(presented, self.api_key)
        read_only = self.read_api_key is not None and hmac.compare_digest(presented, self.read_api_key)
        if full:
            await self.app(scope, receive, send)
        elif not read_only:
            await self._refuse(scope, receive, send, 401, "unauthorized", INVALID)
        elif scope["method"] in READ_METHODS:
            await self.app(scope, receive, send)
        elif scope["method"] == "POST" and scope["path"] in self.mcp_post_paths:
            await self._read_only_mcp_post(scope, receive, send)
        elif scope["path"] == "/mcp" and scope["method"] == "DELETE":
            await self.app(scope, receive, send)
        else:
            await self._refuse(scope, receive, send, 403, "forbidden", "This API key may only read")

    async def _read_only_mcp_post(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            body = await read_body(receive, MAX_INSPECTED_BODY)
        except BodyTooLarge:
            await JSONResponse({"error": {"code": "payload_too_large", "message": "Body too large"}}, 413)(
                scope, receive, send
            )
            return
        if body is None:
            return
        if self.write_tools is None:
            self.write_tools = write_tools(await self.list_tools()) if self.list_tools is not None else frozenset()
        tool = self._write_tool_called(body, self.write_tools)
        if tool is not None:
            await self._refuse(scope, receive, send, 403, "forbidden", f"This API key may only read; '{tool}' writes")
            return
        await self.app(scope, replaying(body, receive), send)

    @staticmethod
    def _write_tool_called(body: bytes, writes: frozenset[str]) -> str | None:
        """The first write tool a JSON-RPC message (or batch) calls; malformed JSON is left to the transport.

        Deliberately looser than the SDK's ``mcp_types.jsonrpc_message_adapter``: any object with
        ``"method": "tools/call"`` naming a write tool is refused, whether or not a transport would accept
        the rest of it, so no difference between this parse and a transport's can let a write through."""
        try:
            parsed: Any = json.loads(body)
        except ValueError:
            return None
        for message in parsed if isinstance(parsed, list) else [parsed]:
            if isinstance(message, dict) and message.get("method") == "tools/call":
                params = message.get("params")
                name = params.get("name") if isinstance(params, dict) else None
                if name in writes:
                    return str(name)
        return None

    @staticmethod
    async def _refuse(scope: Scope, receive: Receive, send: Send, status: int, code: str, message: str) -> None:
        client = scope.get("client")
        logger.warning(
            "auth.refused status=%d reason=%r client_ip=%s method=%s path=%s",
            status, message, client[0] if client else "-", scope["method"], scope["path"],
        )  # fmt: skip
        headers = {"WWW-Authenticate": 'Bearer realm="policy-kb"'} if status == 401 else None
        await JSONResponse({"error": {"code": code, "message": message}}, status, headers=headers)(scope, receive, send)
