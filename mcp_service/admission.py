"""The admission gate in front of a server's ``/mcp``: past capacity, a search call is refused at once with HTTP
503 and ``Retry-After``, before its body is read or parsed, from the work the server has already admitted.

Why here, in front of the SDK: a refusal from inside the tool (the search lane, ``search_lane``) comes only after
the request was read, parsed, validated and dispatched: 3-4 ms of CPU each, so far past capacity the refusals
alone fill the core and every answer is late. A refusal here costs the HTTP request line and headers only.

What is gated: ``tools/call`` of the tools that search (``GATED_TOOLS``); every other request (``initialize``,
``tools/list``, ``ping``, notifications, a section read) goes through, so a client can still connect and list
while searches are shed. A request names its method and tool in the ``Mcp-Method`` and ``Mcp-Name`` headers
(the 2026-07-28 protocol; the SDK checks they agree with the body), and then no byte of its body is read. A
request without them (an older client) is told by the first part of its body already received, looked at for the
method and tool name as bytes (never parsed; ``costly_body``); what cannot be told is treated as a search.

When: a gated call is refused when ``SEARCH_ADMISSION_MAX_IN_FLIGHT`` are in flight, or when at least
``SEARCH_THREADS`` are and the wait behind them (in flight × the recent time between completions) would pass
``SEARCH_ADMISSION_WAIT_MS``. The time between completions is measured while busy, so it is what the core (and
whatever else shares it) really delivers; a call stuck longer than that counts as the interval, so a stalled
server is not fed more. The lane stays the second line: an admitted call that then waits too long for a thread
still gets the tool error ``overloaded``, and the legacy SSE transport (``/messages/``, whose client drops its
session on an HTTP error) is bounded by the lane only (docs/decisions/0051-admission-gate.md).
"""

from __future__ import annotations

import logging
import math
import re
import time
from collections.abc import Callable

import anyio
from mcp.shared.inbound import MCP_METHOD_HEADER, MCP_NAME_HEADER, decode_header_value
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from lib.config import SearchSettings
from lib.logs import event_line
from lib.observability.metrics import admission_refused

logger = logging.getLogger(__name__)

GATED_TOOLS = frozenset(
    {"search_policy", "search_policy_batch", "search_application_docs", "query_governance", "kb_search"}
)
"""The tools whose calls search (the search lane's and the kb engine lane's): the ones worth refusing."""
OVERLOADED_RPC_CODE = -32030
"""The JSON-RPC error code of a refused call (implementation-defined server error range; -32029 is rate limited)."""
PEEK_WAIT_S = 0.01
"""How long the gate waits for the first part of a body without ``Mcp-Method``: it is nearly always there already."""
PEEK_BYTES = 16 * 1024
"""How much of that first part is looked at for the method and the tool's name."""
SMOOTHING = 0.2
"""Weight of the newest interval between completions in the running estimate."""
LOG_EVERY_S = 10.0
"""While refusals go on, one log line at their start and then at most one per this many seconds."""

_TOOLS_CALL = re.compile(rb'"method"\s*:\s*"tools/call"')
_ANY_METHOD = re.compile(rb'"method"\s*:')
_NAME = re.compile(rb'"name"\s*:\s*"([A-Za-z0-9_.\-]{1,128})"')


class AdmissionGate:
    """The gated calls in flight and how fast they complete; whether one more may start (``retry_after``)."""

    def __init__(
        self, wait_ms: int, floor: int, max_in_flight: int = 0, *, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.budget_s = wait_ms / 1000
        self.floor = max(1, floor)
        self.max_in_flight = max_in_flight
        self.clock = clock
        self.in_flight = 0
        self.interval_s = 0.0
        """Running estimate of the time between two completions while calls are in flight."""
        self.admitted = 0
        self.refused = 0
        self._busy_since = 0.0
        self._last_done = 0.0
        self._last_refusal = -math.inf
        self._last_log = -math.inf
        self._refused_at_log = 0

    @classmethod
    def from_settings(cls, settings: SearchSettings) -> AdmissionGate | None:
        """The gate ``settings`` ask for, or ``None`` when both of its bounds are off."""
        if not settings.admission_wait_ms and not settings.admission_max_in_flight:
            return None
        return cls(settings.admission_wait_ms, settings.threads, settings.admission_max_in_flight)

    def expected_wait_s(self, now: float) -> float:
        """How long a call admitted now would wait for the ones ahead of it to complete."""
        if self.in_flight == 0:
            return 0.0
        stalled = now - max(self._last_done, self._busy_since)  # no completion for this long: the interval is no less
        return self.in_flight * max(self.interval_s, stalled)

    def retry_after(self, now: float) -> int | None:
        """``None`` when one more call may start now; else the whole seconds to wait before trying again."""
        full = self.max_in_flight and self.in_flight >= self.max_in_flight
        wait = self.expected_wait_s(now)
        if not full and (self.in_flight < self.floor or not self.budget_s or wait <= self.budget_s):
            return None
        return max(1, math.ceil(wait))

    def admit(self, now: float) -> None:
        if self.in_flight == 0:
            self._busy_since = now
        self.in_flight += 1
        self.admitted += 1

    def done(self, now: float) -> None:
        sample = now - max(self._last_done, self._busy_since)
        self.interval_s = sample if not self.interval_s else self.interval_s + SMOOTHING * (sample - self.interval_s)
        self._last_done = now
        self.in_flight -= 1

    def refuse(self, now: float, server: str, retry_after: int) -> None:
        """Count a refusal; log the first of a burst, then at most one line per ``LOG_EVERY_S`` while it lasts."""
        self.refused += 1
        admission_refused.labels(server).inc()
        burst_started = now - self._last_refusal > LOG_EVERY_S
        self._last_refusal = now
        if burst_started or now - self._last_log >= LOG_EVERY_S:
            logger.warning(
                event_line(
                    "admission.shedding",
                    server=server,
                    refused=self.refused - self._refused_at_log,
                    in_flight=self.in_flight,
                    expected_wait_ms=round(self.expected_wait_s(now) * 1000),
                    budget_ms=round(self.budget_s * 1000),
                    retry_after=retry_after,
                )
            )
            self._last_log, self._refused_at_log = now, self.refused


def costly_headers(headers: Headers, tools: frozenset[str]) -> bool | None:
    """From ``Mcp-Method`` and ``Mcp-Name``: whether the request calls a gated tool; ``None`` without them."""
    method = headers.get(MCP_METHOD_HEADER)
    if method is None:
        return None
    if method != "tools/call":
        return False
    name = headers.get(MCP_NAME_HEADER)
    return name is None or decode_header_value(name) in tools


def costly_body(prefix: bytes, whole: bool, tools: frozenset[str]) -> bool:
    """From the first part of a JSON-RPC body, as bytes: whether it calls a gated tool, or cannot be told
    (a body still arriving that names no method or tool yet). Escaped spellings are not recognised: such a
    call goes through, and the lane bounds it."""
    head = prefix[:PEEK_BYTES]
    if not _TOOLS_CALL.search(head):
        return not whole and not _ANY_METHOD.search(head)
    names = {match.group(1).decode("ascii") for match in _NAME.finditer(head)}
    return bool(names & tools) if names else not whole


class AdmissionMiddleware:
    """The gate (``AdmissionGate``) in front of ``paths`` (POST only), refusing with 503 and ``Retry-After``."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        gate: AdmissionGate,
        server: str,
        paths: frozenset[str] = frozenset({"/mcp"}),
        tools: frozenset[str] = GATED_TOOLS,
    ) -> None:
        self.app = app
        self.gate = gate
        self.server = server
        self.paths = paths
        self.tools = tools

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST" or scope["path"] not in self.paths:
            await self.app(scope, receive, send)
            return
        costly = costly_headers(Headers(scope=scope), self.tools)
        if costly is None:
            costly, receive = await self._peek(receive)
        if not costly:
            await self.app(scope, receive, send)
            return
        gate = self.gate
        now = gate.clock()
        wait = gate.retry_after(now)
        if wait is not None:
            gate.refuse(now, self.server, wait)
            await refusal(wait)(scope, receive, send)
            return
        gate.admit(now)
        try:
            await self.app(scope, receive, send)
        finally:
            gate.done(gate.clock())

    async def _peek(self, receive: Receive) -> tuple[bool, Receive]:
        """Whether the body's first part, if it comes within ``PEEK_WAIT_S``, calls a gated tool; and a
        ``receive`` that hands that part on first."""
        first: Message | None = None
        with anyio.move_on_after(PEEK_WAIT_S):
            first = await receive()
        if first is None:
            return True, receive
        costly = first["type"] == "http.request" and costly_body(
            first.get("body", b""), not first.get("more_body", False), self.tools
        )
        handed = False

        async def replay() -> Message:
            nonlocal handed
            if not handed:
                handed = True
                assert first is not None
                return first
            return await receive()

        return costly, replay


def refusal(retry_after: int) -> JSONResponse:
    """503 with ``Retry-After``: a JSON-RPC error (``id`` null: the body was not read; the SDK's client answers the
    call it sent with it) whose ``data`` is the spec's error envelope, ``overloaded``."""
    message = f"The server is at capacity; retry in {retry_after} s"
    envelope = {"status": "error", "error_type": "overloaded", "message": message, "retry_after": retry_after}
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": OVERLOADED_RPC_CODE, "message": message, "data": envelope}}
    return JSONResponse(body, 503, headers={"Retry-After": str(retry_after)})
