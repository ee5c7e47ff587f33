"""Reading a whole ASGI request body with a cap, for the middlewares that must see it before the app, and
handing it on to the app afterwards; parsing it as JSON (``parse_json``) and the one 400 a malformed body gets
on every server (``malformed_response``)."""

from __future__ import annotations

import json
import re
from typing import Any

from starlette.responses import JSONResponse, Response
from starlette.types import Message, Receive

from lib.errors import bounded


class BodyTooLarge(Exception):
    """The body grew past the caller's limit; nothing more was read."""


async def read_body(receive: Receive, limit: int) -> bytes | None:
    """The request body, or ``None`` when the client disconnected first. Raises ``BodyTooLarge`` past ``limit``."""
    body = bytearray()
    more = True
    while more:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body.extend(message.get("body", b""))
        more = message.get("more_body", False)
        if len(body) > limit:
            raise BodyTooLarge
    return bytes(body)


async def read_body_prefix(receive: Receive, limit: int) -> tuple[bytes, bool] | None:
    """The request body up to ``limit`` bytes and whether that is all of it (the rest is left unread), or
    ``None`` when the client disconnected first: for a middleware that looks at bodies but must not refuse
    a large one on the app's behalf."""
    body = bytearray()
    more = True
    while more and len(body) <= limit:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        body.extend(message.get("body", b""))
        more = message.get("more_body", False)
    return bytes(body), not more


def replaying(body: bytes, receive: Receive, *, more_body: bool = False) -> Receive:
    """A ``receive`` that hands an already-read ``body`` to the next app first, then defers to ``receive``
    (``more_body``: the rest of the body is still to come from ``receive``)."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": more_body}
        return await receive()

    return replay


MAX_JSON_DEPTH = 64
"""The deepest nesting of objects and arrays a JSON body may have: far beyond any tool's arguments or REST
body, far short of what would exhaust a parser's stack."""
JSON_RPC_PARSE_ERROR = -32700


class MalformedBody(ValueError):
    """A body that is not JSON, is nested deeper than ``MAX_JSON_DEPTH``, or holds a string that is not Unicode
    text (an unpaired surrogate); ``reason`` says which."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def parse_json(body: bytes) -> Any:
    """The JSON value of ``body``; ``MalformedBody`` when it is not JSON, nests deeper than ``MAX_JSON_DEPTH``
    or holds an unpaired surrogate (valid JSON, but no text a store can keep). The one parse every middleware
    that reads a body uses, so no nesting, encoding or syntax error reaches an answer as a crash."""
    try:
        value = json.loads(body)
    except RecursionError:
        raise MalformedBody(f"JSON nested deeper than {MAX_JSON_DEPTH} levels") from None
    except ValueError as exc:
        raise MalformedBody(f"not valid JSON ({bounded(str(exc), 200)})") from None
    # Nesting needs an opening bracket per level: a body with few of them (every usual one) is not walked.
    if body.count(b"[") + body.count(b"{") > MAX_JSON_DEPTH and _deeper_than(value, MAX_JSON_DEPTH):
        raise MalformedBody(f"JSON nested deeper than {MAX_JSON_DEPTH} levels")
    # A lone surrogate can only arrive escaped (raw, it is invalid UTF-8): bodies without the escape are not walked.
    if _SURROGATE_ESCAPE.search(body) and _holds_lone_surrogate(value):
        raise MalformedBody("a string holds an unpaired UTF-16 surrogate escape (\\ud800-\\udfff), not Unicode text")
    return value


_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F]")


def _holds_lone_surrogate(value: Any) -> bool:
    """Whether a string (value or key) of ``value`` holds an unpaired surrogate, which no store, log or answer
    can encode as UTF-8 (I-JSON, RFC 7493, forbids them); a pair (an emoji) decodes to one character and passes."""
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            try:
                item.encode("utf-8")
            except UnicodeEncodeError:
                return True
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects and arrays more than ``limit`` levels deep (iterative: no recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))
    return False


def malformed_response(path: str, reason: str, *, json_rpc: bool) -> Response:
    """The 400 every server answers a malformed body with: on an MCP path, a JSON-RPC parse error (as the MCP
    SDK's own transports answer one); elsewhere the REST envelope ``{"error": {code, message, details}}``."""
    message = f"The request body is malformed: {reason}"
    if json_rpc:
        body: dict[str, Any] = {
            "jsonrpc": "2.0",
            "id": None,
            "error": {"code": JSON_RPC_PARSE_ERROR, "message": message},
        }
    else:
        body = {"error": {"code": "malformed_body", "message": message, "details": {"path": bounded(path, 200)}}}
    return JSONResponse(body, status_code=400)
