"""``/mcp``: the MCP SDK's Streamable HTTP transport, stateless, through its public API.

Stateless mode (the 2026-07-28 revision's way) keeps no session in this process, so any replica answers any
request. A request is answered with plain JSON (one round trip), except one that asked for progress (a
``progressToken`` in its ``_meta``) from a client that accepts a stream (``Accept: text/event-stream``): that
one is answered as a server-sent event stream, so its ``notifications/progress`` reach the client before the
result (``tools.progress``). The two are the SDK's own transport over two session managers, one in each
response mode. The optional single-exchange lane that once stood in front of it used SDK internals and was
removed (decision 0048).
"""

from __future__ import annotations

import json
from typing import Any

from mcp.server.streamable_http_manager import StreamableHTTPASGIApp, StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_service.transports.bodies import read_body_prefix, replaying

MAX_INSPECTED_BODY = 4 * 1024 * 1024
"""As much of a POST as is read to see whether it asks for progress; a longer one is answered in JSON."""


def asks_for_progress(body: bytes) -> bool:
    """Whether a JSON-RPC request (or any request of a batch) carries a ``progressToken`` in its ``_meta``. A body
    that does not spell the word is not parsed again (``auth`` parsed it once); one that escapes it is answered in
    JSON, without progress."""
    if b"progressToken" not in body:
        return False
    try:
        parsed: Any = json.loads(body)
    except ValueError:
        return False
    for message in parsed if isinstance(parsed, list) else [parsed]:
        params = message.get("params") if isinstance(message, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and meta.get("progressToken") is not None:
            return True
    return False


class McpEndpoint:
    """The ``/mcp`` app: JSON answers, or the streaming transport for a POST that asked for progress."""

    def __init__(self, json_answers: ASGIApp, streamed: ASGIApp | None) -> None:
        self.json_answers, self.streamed = json_answers, streamed

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        accepts_stream = "text/event-stream" in Headers(scope=scope).get("accept", "")
        if self.streamed is None or scope.get("method") != "POST" or not accepts_stream:
            await self.json_answers(scope, receive, send)
            return
        read = await read_body_prefix(receive, MAX_INSPECTED_BODY)
        if read is None:
            return
        body, whole = read
        app = self.streamed if whole and asks_for_progress(body) else self.json_answers
        await app(scope, replaying(body, receive, more_body=not whole), send)


def mcp_endpoint(
    session_manager: StreamableHTTPSessionManager, streaming: StreamableHTTPSessionManager | None = None
) -> ASGIApp:
    """The ``/mcp`` app: the SDK's Streamable HTTP transport over ``session_manager`` (JSON responses), and over
    ``streaming`` (event-stream responses) for the requests that asked for progress."""
    streamed = StreamableHTTPASGIApp(streaming) if streaming is not None else None
    return McpEndpoint(StreamableHTTPASGIApp(session_manager), streamed)
