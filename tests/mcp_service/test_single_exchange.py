"""The single-exchange lane against the SDK's stateless transport: the same requests, sent to ``/mcp`` with the
lane and to ``/mcp`` served by the SDK transport alone, over the same knowledge base, get the same status,
content type and JSON body; plain requests never reach the SDK transport behind the lane, the rest always
do."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_service.app import create_mcp_app
from mcp_service.policy_kb import build_policy_server
from mcp_service.tools.policies import WRITE_TOOLS
from mcp_service.transports.single_exchange import SingleExchangeLane
from tests.mcp_service.conftest import INITIALIZE, MCP_HEADERS, Service, bearer, mcp_session, running


@dataclass
class Counting:
    """Wraps the SDK transport behind the lane and counts the requests it is handed."""

    app: ASGIApp
    calls: list[str] = field(default_factory=list)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.calls.append(scope["method"])
        await self.app(scope, receive, send)


@dataclass
class Pair:
    lane_url: str
    sdk_url: str
    fallback: Counting


@pytest.fixture(scope="module")
def pair(nppf_service: Service) -> Iterator[Pair]:
    def app(single_exchange: bool) -> Any:
        return create_mcp_app(nppf_service.settings, build_policy_server(nppf_service.kb), port=0,
                              write_tools=WRITE_TOOLS, single_exchange=single_exchange)  # fmt: skip

    with_lane = app(True)
    route = next(r for r in with_lane.routes if getattr(r, "path", "") == "/mcp")
    lane = route.app.app  # type: ignore[attr-defined]
    assert isinstance(lane, SingleExchangeLane)
    lane.fallback = counting = Counting(lane.fallback)
    with running(with_lane) as lane_url, running(app(False)) as sdk_url:
        yield Pair(f"{lane_url}/mcp", f"{sdk_url}/mcp", counting)


def call(name: str, arguments: dict[str, Any], request_id: int | str = 1) -> dict[str, Any]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


DAY = "2025-06-01"
HEADERS = MCP_HEADERS | bearer()

PLAIN: dict[str, tuple[dict[str, str], Any]] = {
    "tools/list": ({}, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
    "ping with empty params": ({}, {"jsonrpc": "2.0", "id": "p", "method": "ping", "params": {}}),
    "a dated search": ({}, call("search_policy", {"query": "refusal on highways grounds", "effective_date": DAY})),
    "a search by a string id": ({}, call("search_policy", {"query": "green belt", "n_results": 3}, "req-7")),
    "a section": ({}, call("get_policy_section", {"source": "NPPF", "section_ref": "Para 116", "effective_date": DAY})),
    "the tool's own error envelope": ({}, call("search_policy", {"query": "x", "effective_date": "2025-02-30"})),
    "an argument the input schema refuses": ({}, call("search_policy", {"query": "x", "n_results": 0})),
    "a missing argument": ({}, call("get_policy_section", {"source": "NPPF"})),
    "an unknown tool": ({}, call("no_such_tool", {})),
    "an unknown method": ({}, {"jsonrpc": "2.0", "id": 2, "method": "nothing/here", "params": {}}),
    "a method this server does not serve": ({}, {"jsonrpc": "2.0", "id": 3, "method": "resources/list"}),
    "malformed params of a known method": ({}, {"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"x": 1}}),
    "a handshake-era version header": ({"MCP-Protocol-Version": "2025-06-18"}, call("list_policy_documents", {})),
    "a wildcard Accept": ({"Accept": "*/*"}, call("list_policy_revisions", {"source": "NPPF"})),
}  # fmt: skip

PASSED_ON: dict[str, tuple[dict[str, str], Any]] = {
    "initialize": ({}, INITIALIZE),
    "a notification": ({}, {"jsonrpc": "2.0", "method": "notifications/initialized"}),
    "a batch": ({}, [call("list_policy_documents", {}, 1), call("list_policy_documents", {}, 2)]),
    "invalid JSON": ({}, "{not json"),
    "params that are not an object": ({}, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": [1]}),
    "a null id": ({}, {"jsonrpc": "2.0", "id": None, "method": "tools/list"}),
    "an unknown version header": ({"MCP-Protocol-Version": "1999-01-01"}, call("list_policy_documents", {})),
    "an Accept without JSON": ({"Accept": "text/event-stream"}, call("list_policy_documents", {})),
}  # fmt: skip

REFUSED_BY_TRANSPORT_SECURITY: dict[str, tuple[dict[str, str], Any]] = {
    "a foreign Host": ({"Host": "evil.example"}, call("list_policy_documents", {})),
    "a text/plain body": ({"Content-Type": "text/plain"}, call("list_policy_documents", {})),
}


def post(url: str, headers: dict[str, str], body: Any) -> tuple[int, str, Any]:
    content = body if isinstance(body, str) else json.dumps(body)
    response = httpx.post(url, headers={**HEADERS, **headers}, content=content, timeout=60)
    try:
        parsed: Any = response.json() if response.content else None
    except ValueError:
        parsed = response.text
    return response.status_code, response.headers.get("content-type", ""), parsed


@pytest.mark.parametrize("case", list(PLAIN), ids=str)
def test_a_plain_request_gets_the_sdk_transports_answer_without_it(pair: Pair, case: str) -> None:
    headers, body = PLAIN[case]
    before = len(pair.fallback.calls)
    lane = post(pair.lane_url, headers, body)
    assert len(pair.fallback.calls) == before, "the lane handed a plain request to the SDK transport"
    assert lane == post(pair.sdk_url, headers, body)
    assert lane[0] == 200 and lane[1] == "application/json"


@pytest.mark.parametrize("case", list(PASSED_ON), ids=str)
def test_anything_else_goes_to_the_sdk_transport_and_gets_its_answer(pair: Pair, case: str) -> None:
    headers, body = PASSED_ON[case]
    before = len(pair.fallback.calls)
    lane = post(pair.lane_url, headers, body)
    assert len(pair.fallback.calls) == before + 1
    assert lane == post(pair.sdk_url, headers, body)


@pytest.mark.parametrize("case", list(REFUSED_BY_TRANSPORT_SECURITY), ids=str)
def test_the_sdks_transport_security_applies_in_the_lane_too(pair: Pair, case: str) -> None:
    headers, body = REFUSED_BY_TRANSPORT_SECURITY[case]
    lane = post(pair.lane_url, headers, body)
    assert lane == post(pair.sdk_url, headers, body)
    assert lane[0] in (400, 421), lane


def test_a_body_over_the_sdks_limit_is_refused_the_same_way(pair: Pair) -> None:
    huge = call("search_policy", {"query": "x" * (5 * 1024 * 1024)})
    lane = post(pair.lane_url, {}, huge)
    assert lane == post(pair.sdk_url, {}, huge)
    assert lane[0] == 413


def test_get_and_delete_go_to_the_sdk_transport(pair: Pair) -> None:
    before = len(pair.fallback.calls)
    answers = []
    for url in (pair.lane_url, pair.sdk_url):
        with httpx.stream("GET", url, headers={**HEADERS, "Accept": "text/event-stream"}, timeout=10) as stream:
            answers.append((stream.status_code, stream.headers.get("content-type")))
        deleted = httpx.delete(url, headers=HEADERS, timeout=10)
        answers.append((deleted.status_code, deleted.text))
    assert pair.fallback.calls[before:] == ["GET", "DELETE"]
    assert answers[:2] == answers[2:]


@pytest.mark.anyio
async def test_the_sdk_client_works_through_the_lane(pair: Pair) -> None:
    base = pair.lane_url.removesuffix("/mcp")
    before = len(pair.fallback.calls)
    async with mcp_session(base) as session:
        tools = await session.list_tools()
        result = await session.call_tool("search_policy", {"query": "highways", "effective_date": "2025-06-01"})
    assert len(tools.tools) == 8 and not result.is_error
    assert result.structured_content and result.structured_content["results"][0]["revision_id"] == "rev_NPPF_2024_12"
    assert pair.fallback.calls[before:] == ["POST", "POST"], "initialize and its notification go to the SDK"
