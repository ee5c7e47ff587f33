"""Hostile input against a running server (issue 46): a body nested a thousand levels deep, a method a route does
not take, a megabyte argument echoed in an error. Each answer is a clear 4xx in the envelope of its path, small,
never a 500 or a traceback."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest

from lib.errors import MAX_MESSAGE_CHARS
from mcp_service.transports.bodies import MAX_JSON_DEPTH, MalformedBody, parse_json
from tests.mcp_service.conftest import MCP_HEADERS, Service, bearer, mcp_session

DEEP = ("[" * 1000 + "]" * 1000).encode()
DEEP_OBJECT = ('{"a":' * 1000 + "1" + "}" * 1000).encode()
JUST_TOO_DEEP = ("[" * (MAX_JSON_DEPTH + 1) + "]" * (MAX_JSON_DEPTH + 1)).encode()
SESSION = "/messages/?session_id=" + "0" * 32
HUGE_INTEGER = b'{"jsonrpc": "2.0", "id": ' + b"9" * 5000 + b', "method": "tools/list"}'


@pytest.mark.parametrize(
    "body",
    [DEEP, DEEP_OBJECT, JUST_TOO_DEEP, b"{not json", b"\xff\xfe", HUGE_INTEGER],
    ids=["deep_array", "deep_object", "depth_limit_plus_one", "syntax", "not_utf8", "huge_integer"],
)
@pytest.mark.parametrize("path", ["/mcp", SESSION])
def test_a_malformed_mcp_body_is_a_json_rpc_parse_error(fresh_service: Service, path: str, body: bytes) -> None:
    response = httpx.post(fresh_service.url + path, content=body, headers=MCP_HEADERS | bearer(), timeout=30)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert response.json()["id"] is None and error["code"] == -32700
    assert "malformed" in error["message"] and "Traceback" not in response.text


@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT, b"{not json"], ids=["deep_array", "deep_object", "syntax"])
@pytest.mark.parametrize(("method", "path"), [("POST", "/policies"), ("PATCH", "/policies/NPPF")])
def test_a_malformed_rest_body_is_a_400_in_the_rest_envelope(
    fresh_service: Service, method: str, path: str, body: bytes
) -> None:
    with fresh_service.rest() as api:
        response = api.request(method, path, content=body, headers={"Content-Type": "application/json"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "malformed_body"
    assert set(response.json()["error"]) == {"code", "message", "details"}


def test_a_body_within_the_depth_limit_reaches_the_app(fresh_service: Service) -> None:
    """Nested as deep as allowed, the body passes the guard and the app judges it (here: a schema error)."""
    nested: object = "x"
    for _ in range(MAX_JSON_DEPTH - 1):
        nested = [nested]
    with fresh_service.rest() as api:
        response = api.post("/policies", json={"source": "DEEP", "title": nested, "category": "national_policy"})
    assert response.status_code == 422 and response.json()["error"]["code"] == "validation_error"


@pytest.mark.parametrize(
    ("method", "path", "allowed"),
    [
        ("PUT", "/mcp", {"GET", "POST"}),
        ("GET", "/messages/", {"POST"}),
        ("POST", "/health", {"GET"}),
        ("DELETE", "/api/v1/policies", {"GET", "POST"}),
        ("PUT", "/api/v1/policies/NPPF", {"GET", "PATCH"}),
    ],
)
def test_a_wrong_method_is_405_with_allow_in_the_envelope(
    fresh_service: Service, method: str, path: str, allowed: set[str]
) -> None:
    response = httpx.request(method, fresh_service.url + path, headers=bearer(), timeout=30)
    assert response.status_code == 405, response.text
    assert {m.strip() for m in response.headers["allow"].split(",")} >= allowed
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_an_unknown_path_is_404_in_the_envelope(fresh_service: Service) -> None:
    response = httpx.get(fresh_service.url + "/no/such/path", headers=bearer(), timeout=30)
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_a_megabyte_argument_is_not_echoed_back(nppf_service: Service) -> None:
    huge = "RES9" + "x" * 1_000_000

    async def section() -> tuple[dict[str, object], int]:
        async with mcp_session(nppf_service.url) as session:
            result = await session.call_tool("get_policy_section", {"source": "NPPF", "section_ref": huge})
        assert result.structured_content is not None
        return result.structured_content, sum(len(getattr(b, "text", "")) for b in result.content)

    envelope, text_size = asyncio.run(section())
    assert envelope["status"] == "error" and envelope["error_type"] == "section_not_found"
    assert len(str(envelope["message"])) <= MAX_MESSAGE_CHARS
    assert text_size < 4 * MAX_MESSAGE_CHARS
    with nppf_service.rest() as api:
        response = api.get("/policies/NPPF/revisions/rev_" + "x" * 10_000)
    assert response.status_code in (400, 404), response.text[:300]
    assert len(response.content) < 4 * MAX_MESSAGE_CHARS
    assert len(json.dumps(response.json()["error"]["details"])) < 4 * MAX_MESSAGE_CHARS


def test_brackets_inside_strings_are_not_nesting() -> None:
    body = json.dumps({"query": "[" * 500 + "{" * 500, "list": [[1], [2], {"a": [3]}]}).encode()
    assert parse_json(body)["list"] == [[1], [2], {"a": [3]}]
    with pytest.raises(MalformedBody, match="deeper"):
        parse_json(JUST_TOO_DEEP)


MEGABYTE = "x" * 1_000_000


@pytest.mark.parametrize(
    "message",
    [
        {"jsonrpc": "2.0", "id": 1, "method": MEGABYTE, "params": {}},
        {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": MEGABYTE, "arguments": {}}},
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "search_policy", "arguments": {"query": "q", MEGABYTE: 1}},
        },
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "list_policy_revisions", "arguments": {"source": MEGABYTE}},
        },
        {"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": {"name": MEGABYTE}},
        {"jsonrpc": "2.0", "id": 1, "method": "resources/read", "params": {"uri": "policy://" + MEGABYTE}},
    ],
    ids=["method", "tool_name", "argument_name", "argument_value", "prompt_name", "resource_uri"],
)
def test_no_mcp_answer_echoes_a_megabyte(fresh_service: Service, message: dict[str, object]) -> None:
    response = httpx.post(f"{fresh_service.url}/mcp", json=message, headers=MCP_HEADERS | bearer(), timeout=60)
    assert response.status_code < 500, response.text[:300]
    assert len(response.content) < 8 * MAX_MESSAGE_CHARS, response.text[:300]


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/policies", {MEGABYTE: 1, "source": "X", "title": "t", "category": "local_plan"}),
        ("POST", "/policies", {"source": "X", "title": MEGABYTE, "category": MEGABYTE}),
        ("PATCH", "/policies/NOPE", {"title": MEGABYTE}),
        ("POST", "/search", {"query": MEGABYTE, MEGABYTE: MEGABYTE}),
    ],
    ids=["key", "values", "patch", "search"],
)
def test_no_rest_answer_echoes_a_megabyte(fresh_service: Service, method: str, path: str, body: object) -> None:
    with fresh_service.rest() as api:
        response = api.request(method, path, json=body)
    assert response.status_code < 500, response.text[:300]
    assert len(response.content) < 8 * MAX_MESSAGE_CHARS, response.text[:300]


@pytest.mark.parametrize(
    ("path", "headers"),
    [
        ("/mcp", {"Content-Type": "text/plain", "Accept": MCP_HEADERS["Accept"]}),
        ("/messages/", MCP_HEADERS),
        ("/messages/?session_id=not-a-session", MCP_HEADERS),
        (SESSION, MCP_HEADERS),
    ],
    ids=["content_type", "no_session", "bad_session", "unknown_session"],
)
def test_a_transport_refusal_is_a_json_rpc_error(fresh_service: Service, path: str, headers: dict[str, str]) -> None:
    """The SDK's transports refuse these in plain text; every server answers them as JSON-RPC errors."""
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list"}'
    response = httpx.post(fresh_service.url + path, content=body, headers=headers | bearer(), timeout=30)
    assert 400 <= response.status_code < 500, response.text
    answer = response.json()
    assert answer["jsonrpc"] == "2.0" and answer["error"]["code"] == -32600 and answer["error"]["message"]
