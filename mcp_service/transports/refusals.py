"""The MCP SDK's transports refuse some requests in plain text (``Invalid Content-Type header``, ``session_id is
required``, ``Could not find session``, ``Could not parse message``); ``JsonRpcRefusals`` sends each as a JSON-RPC
error instead, with the same HTTP status and the SDK's text as its message, so every answer of an MCP path is in
one envelope (issue 46). Answers that are already JSON, and every success, pass through untouched."""

from __future__ import annotations

import json

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lib.errors import bounded

INVALID_REQUEST = -32600


class JsonRpcRefusals:
    """Wraps an SDK transport endpoint (``/mcp``, ``/sse``, ``/messages/``)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        held: Message | None = None
        text = bytearray()

        async def sending(message: Message) -> None:
            nonlocal held
            if message["type"] == "http.response.start" and _plain_refusal(message):
                held = message
                return
            if held is None or message["type"] != "http.response.body":
                await send(message)
                return
            text.extend(message.get("body", b""))
            if message.get("more_body", False):
                return
            reason = bounded(text.decode("utf-8", "replace").strip() or "The request was refused")
            body = json.dumps(
                {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": reason}}
            ).encode()
            headers = MutableHeaders(raw=list(held.get("headers", [])))
            headers["content-type"] = "application/json"
            headers["content-length"] = str(len(body))
            await send({**held, "headers": headers.raw})
            await send({"type": "http.response.body", "body": body, "more_body": False})

        await self.app(scope, receive, sending)


def _plain_refusal(start: Message) -> bool:
    """A 4xx whose body is not JSON (the SDK's plain-text refusals)."""
    if not 400 <= start["status"] < 500:
        return False
    types = [v.decode("latin-1").lower() for k, v in start.get("headers", []) if k.lower() == b"content-type"]
    return not types or not any("json" in t for t in types)
