"""The admission gate in front of ``/mcp`` (``mcp_service.admission``): past its bound a search call is refused
with 503, ``Retry-After`` and the error envelope before its body is read, while cheap requests go through.

The served test saturates the gate deterministically: ``SEARCH_ADMISSION_MAX_IN_FLIGHT=1`` and one search call
admitted and then parked in the search lane, whose one place the test holds. Every refusal is then decided by
that bound, never by timing; the bodies sent are ones that never finish arriving, or would not parse, so a
refusal proves they were not read. The gate's estimate (the wait behind the calls in flight) is tested on the
gate itself with a clock the test moves.
"""

from __future__ import annotations

import json
import logging
import threading
from typing import cast

import anyio
import httpx
import pytest
from mcp.shared.exceptions import MCPError
from starlette.applications import Starlette
from starlette.datastructures import Headers

from mcp_service.admission import OVERLOADED_RPC_CODE, AdmissionGate, costly_body, costly_headers
from mcp_service.policy_kb import create_app
from mcp_service.search_lane import search_lane
from tests.conftest import free_port
from tests.mcp_service.conftest import FULL_KEY, MCP_HEADERS, Service, bearer, mcp_session
from tests.mcp_service.test_admission import QUESTION, call, serving, tiny_lane_stores
from tests.polling import eventually_async

SEARCH_START = b'{"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "search_policy", "arguments": {'
"""The start of a search call's body: all that is ever sent of the bodies that never finish."""
MALFORMED_SEARCH = SEARCH_START + b'"query": "parking"]]]'
"""A whole body that names a search but is not JSON: parsed, it is a 400."""


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_gate_refuses_past_the_wait_budget_from_the_time_between_completions() -> None:
    clock = Clock()
    gate = AdmissionGate(wait_ms=50, floor=2, clock=clock)
    for _ in range(3):  # three calls, one at a time, 10 ms each: the interval between completions is 10 ms
        gate.admit(clock.now)
        clock.now += 0.010
        gate.done(clock.now)
    assert gate.interval_s == pytest.approx(0.010)
    for in_flight in range(5):  # 5 in flight wait 5 x 10 ms: within the 50 ms budget
        assert gate.retry_after(clock.now) is None, in_flight
        gate.admit(clock.now)
    assert gate.expected_wait_s(clock.now) == pytest.approx(0.050)
    clock.now += 0.001
    assert gate.retry_after(clock.now) == 1, "a sixth would wait past the budget; retry in whole seconds, at least 1"
    clock.now += 0.009
    gate.done(clock.now)
    assert gate.retry_after(clock.now) is None, "one completed: room for one more"


def test_below_the_floor_every_call_is_admitted_and_a_stalled_server_counts_its_stall() -> None:
    clock = Clock()
    gate = AdmissionGate(wait_ms=50, floor=2, clock=clock)
    gate.admit(clock.now)
    clock.now += 30.0  # one call in flight for 30 s, none ever completed
    assert gate.retry_after(clock.now) is None, "below the floor (the lane's threads) nothing is refused"
    gate.admit(clock.now)
    assert gate.expected_wait_s(clock.now) == pytest.approx(60.0), "no completion for 30 s: the interval is no less"
    assert gate.retry_after(clock.now) == 60


def test_a_fixed_bound_refuses_whatever_the_estimate_and_a_zero_budget_only_bounds() -> None:
    clock = Clock()
    gate = AdmissionGate(wait_ms=0, floor=1, max_in_flight=1, clock=clock)
    assert gate.retry_after(clock.now) is None
    gate.admit(clock.now)
    assert gate.retry_after(clock.now) == 1
    gate.done(clock.now)
    assert gate.retry_after(clock.now) is None


def test_refusals_are_logged_once_a_burst_and_counted(caplog: pytest.LogCaptureFixture) -> None:
    clock = Clock()
    gate = AdmissionGate(wait_ms=0, floor=1, max_in_flight=1, clock=clock)
    gate.admit(clock.now)
    with caplog.at_level(logging.WARNING, logger="mcp_service.admission"):
        for _ in range(50):  # a burst: 50 refusals within 5 s
            gate.refuse(clock.now, "policy-kb", 1)
            clock.now += 0.1
        clock.now += 30.0
        gate.refuse(clock.now, "policy-kb", 1)  # a second burst
    lines = [r.getMessage() for r in caplog.records if r.name == "mcp_service.admission"]
    assert len(lines) == 2, lines
    assert lines[0].startswith("admission.shedding server=policy-kb refused=1 in_flight=1")
    assert "refused=50" in lines[1], "the next line counts the refusals since the one before"
    assert gate.refused == 51


def test_what_is_gated_is_told_from_the_headers_or_the_body_s_first_bytes() -> None:
    tools = frozenset({"search_policy"})
    call_headers = Headers({"Mcp-Method": "tools/call", "Mcp-Name": "search_policy"})
    assert costly_headers(call_headers, tools) is True
    assert costly_headers(Headers({"Mcp-Method": "tools/call", "Mcp-Name": "get_policy_section"}), tools) is False
    assert costly_headers(Headers({"Mcp-Method": "tools/list"}), tools) is False
    assert costly_headers(Headers({}), tools) is None, "an older client: its body tells"
    assert costly_body(json.dumps(call(1)).encode(), True, tools)
    assert costly_body(SEARCH_START, False, tools), "a search still arriving"
    assert not costly_body(b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}', True, tools)
    assert not costly_body(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}', True, tools)
    section = {"name": "get_policy_section", "arguments": {"source": "NPPF"}}
    assert not costly_body(json.dumps({"method": "tools/call", "params": section}).encode(), True, tools)
    assert costly_body(b'{"jsonrpc": "2.0", "id": 1, "params": {"arguments": {"query": "', False, tools), (
        "a body still arriving that names no method yet cannot be told: treated as a search"
    )


async def raw_post(port: int, headers: dict[str, str], sent: bytes, length: int) -> tuple[int, dict[str, str], bytes]:
    """POST ``/mcp`` declaring a body of ``length`` bytes but sending only ``sent`` (the connection stays open,
    the rest never comes); the status, headers and body of the answer."""
    lines = [
        "POST /mcp HTTP/1.1",
        f"Host: 127.0.0.1:{port}",
        f"Content-Length: {length}",
        *(f"{name}: {value}" for name, value in {**MCP_HEADERS, **bearer(), **headers}.items()),
    ]
    with anyio.fail_after(60):  # a hang fails the test; what is asserted is the answer, not its time
        async with await anyio.connect_tcp("127.0.0.1", port) as stream:
            await stream.send(("\r\n".join(lines) + "\r\n\r\n").encode() + sent)
            data = b""
            while b"\r\n\r\n" not in data:
                data += await stream.receive()
            head, _, body = data.partition(b"\r\n\r\n")
            status_line, *header_lines = head.decode("latin-1").split("\r\n")
            answer = {k.strip().lower(): v.strip() for k, _, v in (h.partition(":") for h in header_lines)}
            while len(body) < int(answer["content-length"]):
                body += await stream.receive()
    return int(status_line.split()[1]), answer, body


def assert_refusal(status: int, headers: dict[str, str], body: bytes) -> None:
    assert status == 503, body
    assert int(headers["retry-after"]) >= 1
    message = json.loads(body)
    assert message["jsonrpc"] == "2.0" and message["id"] is None
    error = message["error"]
    assert error["code"] == OVERLOADED_RPC_CODE
    envelope = error["data"]
    assert envelope["status"] == "error" and envelope["error_type"] == "overloaded"
    assert envelope["message"] == error["message"]
    assert f"retry in {headers['retry-after']} s" in error["message"]


@pytest.mark.anyio
async def test_past_its_bound_a_search_is_refused_before_its_body_is_read_and_cheap_requests_pass(
    nppf_service: Service,
) -> None:
    stores = tiny_lane_stores(nppf_service, queue_max=1, admission_max_in_flight=1)
    app = create_app(stores.settings, stores=stores, warm=False)
    gate: AdmissionGate = cast(Starlette, app).state.admission_gate
    port = free_port()
    async with serving(app, port) as url:
        lane = search_lane(stores.settings.search)
        release = threading.Event()
        admitted: list[httpx.Response] = []
        headers = {**bearer(), **MCP_HEADERS}
        async with httpx.AsyncClient(headers=headers, timeout=60) as http, anyio.create_task_group() as group:
            try:
                group.start_soon(lane.run, release.wait)  # the lane's one place, held
                await eventually_async(lambda: lane.places.borrowed_tokens == 1, what="the place held")

                async def admitted_search() -> None:
                    admitted.append(await http.post(f"{url}/mcp", json=call(1)))

                group.start_soon(admitted_search)  # through the gate, then waiting in the lane's line
                await eventually_async(lambda: gate.in_flight == 1 and lane.waiting == 1, what="one call in flight")

                # Named by its headers (the 2026-07-28 protocol), no byte of its body sent: refused all the same.
                named = {"Mcp-Method": "tools/call", "Mcp-Name": "search_policy"}
                assert_refusal(*await raw_post(port, named, b"", 4096))
                # The headers decide: a body that reads as a cheap request is not looked at.
                listing = json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}).encode()
                assert_refusal(*await raw_post(port, named, listing, len(listing)))
                # An older client's search, still arriving: told by its first bytes, refused.
                assert_refusal(*await raw_post(port, {}, SEARCH_START, 4096))
                # Whole but not JSON: refused, not a 400, so it was not parsed.
                malformed = await http.post(f"{url}/mcp", content=MALFORMED_SEARCH)
                assert_refusal(malformed.status_code, dict(malformed.headers), malformed.content)
                assert gate.refused == 4

                # Cheap requests pass: an SDK client initialises, lists and pings; a notification is accepted.
                async with mcp_session(url) as session:
                    tools = await session.list_tools()
                    assert "search_policy" in {tool.name for tool in tools.tools}
                    await session.send_ping()
                    with pytest.raises(MCPError) as refused:  # and its search is answered with the refusal
                        await session.call_tool("search_policy", QUESTION)
                assert refused.value.error.code == OVERLOADED_RPC_CODE
                assert "retry in" in refused.value.error.message
                notification = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                assert (await http.post(f"{url}/mcp", json=notification)).status_code == 202

                # Legacy SSE is behind the lane only (its client drops the session on an HTTP error): the lane's
                # line is full, so its search is the tool error ``overloaded``, and the session goes on.
                async with mcp_session(url, transport="sse") as sse:
                    result = await sse.call_tool("search_policy", QUESTION)
                    assert result.is_error and result.structured_content is not None
                    assert result.structured_content["error_type"] == "overloaded"
                    assert "search_policy" in {tool.name for tool in (await sse.list_tools()).tools}
                assert gate.in_flight == 1 and len(admitted) == 0, "the admitted call still waits for the lane"
            finally:
                release.set()

        assert gate.refused == 5 and gate.in_flight == 0
        [answer] = admitted
        body = answer.json()["result"]["structuredContent"]
        assert body["status"] == "success" and body["results"], "the admitted call answers in full"
        # Once the gate has room the malformed body reaches the parser: the 400 the gate's refusal stood in for.
        async with httpx.AsyncClient(headers=headers, timeout=60) as http:
            again = await http.post(f"{url}/mcp", content=MALFORMED_SEARCH)
        assert again.status_code == 400 and again.json()["error"]["code"] == -32700
        async with mcp_session(url, key=FULL_KEY) as session:
            after = await session.call_tool("search_policy", QUESTION)
        assert not after.is_error and after.structured_content and after.structured_content["results"]
