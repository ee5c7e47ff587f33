"""The auth matrix (spec 000 FR-010 plus the read-only key): no header, a wrong token, another scheme, the
full key and the read-only key, on every route. Writes with the full key target a policy that does not
exist, so they pass auth and then fail harmlessly (404) without touching the NPPF data."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from mcp_service.auth import BAD_FORMAT, INVALID, MISSING
from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service, bearer
from tests.mcp_service.conftest import MCP_HEADERS as MCP


def rpc(method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}


def tool(name: str, **arguments: Any) -> dict[str, Any]:
    return rpc("tools/call", {"name": name, "arguments": arguments})


CLIENT = {"name": "auth-test", "version": "0"}
INIT = rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": CLIENT})
REV = "/api/v1/policies/AUTHTEST/revisions/rev_x"
NO_SESSION = "/messages/?session_id=" + "0" * 32
PDF_FILE = {"file": ("a.pdf", b"%PDF-1.4", "application/pdf")}


@dataclass(frozen=True)
class Route:
    method: str
    path: str
    write: bool
    json: Any = None
    headers: dict[str, str] | None = None
    stream: bool = False
    files: dict[str, Any] | None = None

    def __str__(self) -> str:
        messages = self.json if isinstance(self.json, list) else [self.json]
        calls = [m["params"].get("name", m["method"]) for m in messages if isinstance(m, dict) and "jsonrpc" in m]
        return " ".join([self.method, self.path.split("?")[0], *calls])


ROUTES = [
    Route("POST", "/mcp", False, INIT, MCP),
    Route("POST", "/mcp", False, tool("search_policy", query="parking"), MCP),
    Route("POST", "/mcp", False, [tool("list_policy_documents")], MCP),
    Route("POST", "/mcp", True, tool("ingest_policy_revision", source="AUTHTEST", revision_id="r", file_path="x"), MCP),
    Route("POST", "/mcp", True, [INIT, tool("remove_policy_revision", source="AUTHTEST", revision_id="r")], MCP),
    Route("GET", "/mcp", False, headers={"Accept": "text/event-stream"}, stream=True),
    Route("DELETE", "/mcp", False, headers=MCP),
    Route("GET", "/sse", False, stream=True),
    Route("POST", NO_SESSION, False, INIT, MCP),
    Route("POST", NO_SESSION, True, tool("remove_policy_revision", source="A", revision_id="r"), MCP),
    Route("GET", "/api/v1/health", False),
    Route("GET", "/api/v1/openapi.json", False),
    Route("GET", "/api/v1/policies", False),
    Route("GET", "/api/v1/policies/effective?date=2025-06-01", False),
    Route("GET", "/api/v1/policies/AUTHTEST", False),
    Route("GET", REV, False),
    Route("GET", f"{REV}/status", False),
    Route("POST", "/api/v1/policies", True, {"source": "NPPF", "title": "dup", "category": "national_policy"}),
    Route("PATCH", "/api/v1/policies/AUTHTEST", True, {"title": "t"}),
    Route("POST", "/api/v1/policies/AUTHTEST/revisions", True, files=PDF_FILE),
    Route("PATCH", REV, True, {"notes": "n"}),
    Route("DELETE", REV, True),
    Route("POST", f"{REV}/reindex", True),
    Route("POST", "/api/v1/quotes/verify", False, {"quote": "Development should only be refused"}),
    Route("POST", "/api/v1/search", False, {"query": "parking", "top": 3}),  # the kb engine's search
    Route("POST", "/api/v1/jobs", True, {"text": "a note"}),
]

CREDENTIALS = {
    "none": {},
    "wrong_token": bearer("not-the-key"),
    "basic": {"Authorization": "Basic dXNlcjpwYXNz"},
    "bearer_without_token": {"Authorization": "Bearer"},
    "full_key": bearer(FULL_KEY),
    "read_key": bearer(READ_KEY),
}


def send(service: Service, route: Route, credential: dict[str, str]) -> httpx.Response:
    headers = {**(route.headers or {}), **credential}
    # Generous: the first job route a process serves imports Prefect (seconds of CPU on a loaded machine, where
    # 10 s once timed out); this test is about status codes, never speed.
    with httpx.Client(base_url=service.url, timeout=60, follow_redirects=False) as client:
        if route.stream:
            with client.stream(route.method, route.path, headers=headers) as response:
                if response.status_code != 200:
                    response.read()  # an event stream that opened is left unread: it never ends
                return response
        if route.files is not None:
            return client.request(
                route.method,
                route.path,
                headers=headers,
                files=route.files,
                data={"version_label": "v", "effective_from": "2020-01-01"},
            )
        return client.request(route.method, route.path, headers=headers, json=route.json)


@pytest.mark.parametrize("route", ROUTES, ids=str)
@pytest.mark.parametrize("credential", list(CREDENTIALS))
def test_every_route_applies_the_bearer_rules(nppf_service: Service, route: Route, credential: str) -> None:
    response = send(nppf_service, route, CREDENTIALS[credential])
    expected = {"none": MISSING, "wrong_token": INVALID, "basic": BAD_FORMAT, "bearer_without_token": BAD_FORMAT}
    if credential in expected:
        assert response.status_code == 401
        assert response.json() == {"error": {"code": "unauthorized", "message": expected[credential]}}
        assert response.headers["www-authenticate"].startswith("Bearer")
    elif credential == "read_key" and route.write and route.path.startswith(("/mcp", "/messages/")):
        # The MCP server refuses it itself, as a tool error naming the key needed; the session goes on.
        assert response.status_code not in (401, 403), response.text
        if route.path == "/mcp" and isinstance(route.json, dict):
            result = response.json()["result"]
            assert result["isError"] and result["structuredContent"]["error_type"] == "forbidden"
            assert "MCP_API_KEY" in result["structuredContent"]["message"]
    elif credential == "read_key" and route.write:
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "forbidden"
    else:
        assert response.status_code not in (401, 403), response.text


def test_health_is_exempt_for_every_credential(nppf_service: Service) -> None:
    for credential in CREDENTIALS.values():
        response = httpx.get(f"{nppf_service.url}/health", headers=credential)
        assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_refusals_are_logged_with_client_method_and_path_but_never_the_token(
    nppf_service: Service, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="mcp_service.auth"):
        httpx.get(f"{nppf_service.url}/api/v1/policies", headers=bearer("secret-guess-123"))
        httpx.post(f"{nppf_service.url}/api/v1/policies", headers=bearer(READ_KEY), json={})
    messages = [r.getMessage() for r in caplog.records if r.name == "mcp_service.auth"]
    assert len(messages) == 2 and all(r.levelno == logging.WARNING for r in caplog.records)
    assert "client_ip=127.0.0.1" in messages[0] and "method=GET path=/api/v1/policies" in messages[0]
    assert "status=403" in messages[1]
    assert not any("secret-guess-123" in m or READ_KEY in m or FULL_KEY in m for m in messages)


def test_read_key_may_search_over_mcp_but_not_ingest(nppf_service: Service) -> None:
    with httpx.Client(base_url=nppf_service.url, headers=MCP | bearer(READ_KEY), timeout=30) as client:
        found = client.post("/mcp", json=tool("search_policy", query="green belt", n_results=1))
        assert found.status_code == 200 and found.json()["result"]["structuredContent"]["results_count"] == 1
        ingest = tool("ingest_policy_revision", source="NPPF", revision_id="r", file_path="f")
        refused = client.post("/mcp", json=ingest).json()["result"]
        assert refused["isError"] and refused["structuredContent"]["error_type"] == "forbidden"
        assert "ingest_policy_revision" in refused["structuredContent"]["message"]


def test_without_a_configured_key_every_route_is_open(fresh_service: Service) -> None:
    from mcp_service.policy_kb import create_app
    from tests.mcp_service.conftest import running

    open_settings = fresh_service.settings.replace(mcp_api_key=None, mcp_read_api_key=None)
    with running(create_app(open_settings, stores=fresh_service.stores, warm=False)) as url:
        assert httpx.get(f"{url}/api/v1/policies").json() == {"policies": [], "total": 0}
        response = httpx.post(f"{url}/mcp", json=INIT, headers=MCP)
        assert response.status_code == 200
