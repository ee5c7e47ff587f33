"""The single-exchange lane (``MCP_SINGLE_EXCHANGE``) against the SDK's stateless transport: the same requests,
sent to ``/mcp`` with the setting on and to ``/mcp`` with it off (the SDK transport alone), over the same
knowledge base, get the same status, content type and JSON body; plain requests never reach the SDK transport
behind the lane, the rest always do. With the setting off the lane is never imported, and with it on an SDK
the lane was not verified with (another release, a name gone) gets the SDK transport and one warning."""

from __future__ import annotations

import ast
import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from mcp_service.app import create_mcp_app, new_mcp_server, server_access
from mcp_service.policy_kb import register_tools
from mcp_service.tools.policies.tools import INSTRUCTIONS, SERVER_NAME
from mcp_service.transports import single_exchange
from mcp_service.transports.single_exchange import SingleExchangeLane
from mcp_service.transports.streamable_http import LANE_NEEDS
from tests.conftest import free_port
from tests.mcp_service.conftest import (
    INITIALIZE,
    MCP_HEADERS,
    Service,
    bearer,
    mcp_session,
    running,
    service_env,
    wait_healthy,
)
from tests.mcp_service.tool_names import POLICY_READS, POLICY_WRITES

ROOT = Path(__file__).resolve().parents[2]
LANE_MODULE = "mcp_service.transports.single_exchange"


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
        settings = nppf_service.settings.replace(mcp_single_exchange=single_exchange)
        server = new_mcp_server(SERVER_NAME, INSTRUCTIONS)
        register_tools(server, nppf_service.stores.policies)
        access = server_access(settings, server="policy-kb", scope="policy", port=0, api_key=settings.auth.api_key,
                               read_api_key=settings.auth.read_api_key)  # fmt: skip
        return create_mcp_app(settings, server, port=0, access=access)

    with_lane = app(True)
    route = next(r for r in with_lane.routes if getattr(r, "path", "") == "/mcp")
    lane = route.app.app
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
    "a member JSON-RPC does not define": ({}, {"jsonrpc": "2.0", "id": 6, "method": "tools/list", "extra": 1}),
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
    assert {t.name for t in tools.tools} == POLICY_READS | POLICY_WRITES and not result.is_error
    assert result.structured_content and result.structured_content["results"][0]["revision_id"] == "rev_NPPF_2024_12"
    assert pair.fallback.calls[before:] == ["POST", "POST"], "initialize and its notification go to the SDK"


def test_the_gate_checks_every_sdk_name_the_lane_imports() -> None:
    tree = ast.parse(Path(single_exchange.__file__).read_text())
    imported = {
        (node.module, alias.name)
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] in ("mcp", "mcp_types")
        for alias in node.names
    }
    assert imported == set(LANE_NEEDS)


PROBE = """
import json, logging, sys
logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="%(levelname)s %(name)s %(message)s")
from mcp.server.mcpserver import MCPServer
from mcp_service.transports.streamable_http import mcp_endpoint
server = MCPServer("probe")
server.streamable_http_app(stateless_http=True, json_response=True)
app = mcp_endpoint(server.session_manager, single_exchange=True, **json.loads(sys.argv[1]))
print(json.dumps({"app": type(app).__name__, "lane_imported": sys.argv[2] in sys.modules}))
"""
"""Builds ``/mcp`` with the setting on and the keyword arguments in argv[1]; says what serves it and whether
the module in argv[2] (the lane) was imported."""


@pytest.mark.parametrize(
    ("kwargs", "served_by", "warning"),
    [
        ({}, "RequestBodyLimitMiddleware", None),
        ({"sdk_version": "2.4.0"}, "StreamableHTTPASGIApp", "mcp 2.4.0 is installed; the lane was verified with 2.3.0"),
        ({"needs": [["mcp.server._streamable_http_modern", "_GoneInTheNextRelease"]]}, "StreamableHTTPASGIApp",
         "mcp.server._streamable_http_modern._GoneInTheNextRelease is missing from mcp 2.3.0"),
    ],
    ids=["the verified SDK: the lane", "another SDK release", "a private name gone"],
)  # fmt: skip
def test_with_the_setting_on_an_sdk_the_lane_was_not_verified_with_gets_the_sdk_transport_and_one_warning(
    kwargs: dict[str, Any], served_by: str, warning: str | None
) -> None:
    """In a fresh interpreter, so that "the lane was not imported" means something."""
    command = [sys.executable, "-c", PROBE, json.dumps(kwargs), LANE_MODULE]
    probe = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=120, check=True)
    assert json.loads(probe.stdout) == {"app": served_by, "lane_imported": warning is None}
    warnings = [line for line in probe.stderr.splitlines() if line.startswith("WARNING")]
    if warning is None:
        assert warnings == []
    else:
        assert len(warnings) == 1 and "mcp.single_exchange_off" in warnings[0] and warning in warnings[0], warnings


@pytest.mark.parametrize("setting", [False, True], ids=["setting off (default)", "setting on"])
def test_the_service_serves_and_imports_the_lane_only_when_the_setting_is_on(
    nppf_service: Service, tmp_path: Path, setting: bool
) -> None:
    """``python -X importtime`` lists every module the service imported, on its stderr."""
    settings = nppf_service.settings
    port = free_port()
    env = service_env(settings, port, MCP_SINGLE_EXCHANGE=str(setting).lower())
    url = f"http://127.0.0.1:{port}"
    stderr = tmp_path / "stderr.log"
    with stderr.open("wb") as sink:
        proc = subprocess.Popen([sys.executable, "-X", "importtime", "-m", "mcp_service"], cwd=ROOT, env=env,
                                stdout=subprocess.DEVNULL, stderr=sink)  # fmt: skip
        try:
            wait_healthy(url, proc)
            response = httpx.post(f"{url}/mcp", json=call("list_policy_documents", {}), headers=HEADERS, timeout=30)
        finally:
            proc.send_signal(signal.SIGINT)
            proc.wait(timeout=120)
    assert response.status_code == 200, response.text
    assert response.json()["result"]["structuredContent"]["policy_count"] == 1
    lines = stderr.read_text().splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time:")}
    assert "mcp_service.transports.streamable_http" in imported
    assert (LANE_MODULE in imported) is setting
    assert not [line for line in lines if "single_exchange_off" in line]
