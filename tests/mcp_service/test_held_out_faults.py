"""Faults the held-out hostile check (``python -m benchmarks.hostile``, issue 46) found on the running servers,
each pinned against the four real servers over real stores:

* a JSON string holding an unpaired surrogate escape (``"\\ud800"``: valid JSON, not Unicode text) reached the
  search tools and crashed them (``internal``); it is now a parse error on every server's MCP and REST paths;
* a boolean where an integer is expected was read as 1 (``kb_update_note`` with ``document_id: true`` edited
  note 1); integer and boolean arguments are now strict, as their schemas say;
* the governance server answered 404 to a wrong method on any path (its REST app was mounted over every path),
  and every server's ``DELETE /mcp`` (stateless: no session to end) answered 405 without ``Allow``;
* ``prompts/get`` without a required argument answered -32603 (an internal error), not -32602.

An unknown tool or prompt name of a megabyte was already cut in the answer (``lib.errors.bounded``); its test
guards that, as the held-out check does.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import redis
from pydantic import SecretStr

from benchmarks.hostile import __main__ as hostile
from lib.composition import open_stores
from mcp_service import document_store, governance, kb, policy_kb
from tests.mcp_service.conftest import FULL_KEY, MCP_HEADERS, bearer, running, service_settings

HELD_OUT_DB = 13
SERVERS = {"policy-kb": policy_kb, "document-store": document_store, "kb": kb, "governance": governance}
SEARCHES = {
    "policy-kb": ("search_policy", "query"),
    "document-store": ("search_application_docs", "query"),
    "kb": ("kb_search", "query"),
    "governance": ("query_governance", "question"),
}


@pytest.fixture(scope="module")
def servers(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[dict[str, str]]:
    """The four servers' base URLs, over one set of empty stores of their own."""
    suffix = uuid.uuid4().hex[:12]
    config = service_settings(
        service_base / f"held-out-{suffix[:8]}",
        redis_url,
        chroma_dir,
        HELD_OUT_DB,
        kb_mcp_api_key=SecretStr(FULL_KEY),
        document_collection=f"held_out_docs_{suffix}",
        kb_collection=f"held_out_kb_{suffix}",
        governance_api_key=SecretStr(FULL_KEY),
    )
    redis.Redis.from_url(config.redis.url or "").flushdb()
    stores = open_stores(config)
    urls: dict[str, str] = {}
    with (
        running(policy_kb.create_app(config, stores=stores, warm=False)) as urls["policy-kb"],
        running(document_store.create_app(config, stores=stores, warm=False)) as urls["document-store"],
        running(kb.create_app(config, stores=stores, warm=False)) as urls["kb"],
        running(governance.create_app(config, stores=stores, warm=False)) as urls["governance"],
    ):
        yield urls
    redis.Redis.from_url(config.redis.url or "").flushdb()


def call(url: str, name: str, arguments: dict[str, Any], path: str = "/mcp") -> httpx.Response:
    """One stateless ``tools/call``, serialised with ``ensure_ascii`` so a lone surrogate goes as its escape."""
    body = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}}
    return httpx.post(url + path, content=json.dumps(body), headers=MCP_HEADERS | bearer(), timeout=60)


@pytest.mark.parametrize("server", list(SERVERS))
def test_a_lone_surrogate_in_an_argument_is_a_parse_error(servers: dict[str, str], server: str) -> None:
    name, argument = SEARCHES[server]
    response = call(servers[server], name, {argument: "\ud800 cycle parking"})
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == -32700 and "surrogate" in response.json()["error"]["message"]


@pytest.mark.parametrize("server", list(SERVERS))
def test_a_surrogate_pair_is_text_and_is_searched(servers: dict[str, str], server: str) -> None:
    """An emoji travels as a pair of escapes: one character, not refused."""
    name, argument = SEARCHES[server]
    response = call(servers[server], name, {argument: "cycle parking \U0001f6b2"})
    assert response.status_code == 200, response.text
    assert "error" not in response.json() and "surrogate" not in response.text


@pytest.mark.parametrize(("path", "body"), [("/policies", {"title": "\udfff"}), ("/search", {"query": "x\ud800"})])
def test_a_lone_surrogate_in_a_rest_body_is_malformed(servers: dict[str, str], path: str, body: Any) -> None:
    response = httpx.post(
        f"{servers['policy-kb']}/api/v1{path}",
        content=json.dumps(body),
        headers=bearer() | {"Content-Type": "application/json"},
        timeout=60,
    )
    assert response.status_code == 400, response.text
    assert response.json()["error"]["code"] == "malformed_body"


@pytest.mark.parametrize(
    ("server", "name", "arguments"),
    [
        ("policy-kb", "search_policy", {"query": "parking", "n_results": True}),
        ("policy-kb", "get_page_image", {"source": "NPPF", "page_number": True}),
        ("document-store", "search_application_docs", {"query": "parking", "max_results": True}),
        ("kb", "kb_update_note", {"document_id": True, "text": "overwritten"}),
        ("kb", "kb_search", {"query": "parking", "top": True}),
        ("kb", "kb_search", {"query": "parking", "fts_only": 1}),
        ("governance", "query_governance", {"question": "why", "top_k": True}),
        ("governance", "query_governance", {"question": "why", "include_inactive": 1}),
    ],
    ids=lambda value: value if isinstance(value, str) else None,
)
def test_a_boolean_is_not_an_integer(
    servers: dict[str, str], server: str, name: str, arguments: dict[str, Any]
) -> None:
    """Refused as the argument's own error before anything is looked up, never read as 1 (or 1 as true)."""
    result = call(servers[server], name, arguments).json()["result"]
    assert result["isError"], result
    payload = result["structuredContent"]
    assert payload["error_type"] == "invalid_argument", payload
    assert next(iter(set(arguments) - {"query", "question", "source", "text"})) in payload["message"]


@pytest.mark.parametrize(
    ("method", "path"),
    [("POST", "/health"), ("PUT", "/mcp"), ("GET", "/messages/"), ("PUT", "/sse"), ("POST", "/query")],
)
def test_the_governance_server_answers_a_wrong_method_405_with_allow(
    servers: dict[str, str], method: str, path: str
) -> None:
    response = httpx.request(method, servers["governance"] + path, headers=bearer(), timeout=30)
    assert response.status_code == 405, response.text
    assert response.headers["allow"] and method not in response.headers["allow"]
    assert response.json()["error"]["code"] == "method_not_allowed"


def test_the_governance_server_still_serves_its_rest_paths(servers: dict[str, str]) -> None:
    url = servers["governance"]
    assert httpx.get(url + "/openapi.json", headers=bearer(), timeout=30).json()["paths"].keys() == {"/query"}
    query = httpx.get(url + "/query", params={"q": "inline script metadata"}, headers=bearer(), timeout=30)
    assert query.status_code == 503 and query.json()["error"]["code"] == "index_not_built"  # served, empty index
    missing = httpx.get(url + "/no/such/path", headers=bearer(), timeout=30)
    assert missing.status_code == 404 and missing.json()["error"]["code"] == "not_found"


@pytest.mark.parametrize("server", list(SERVERS))
def test_delete_mcp_is_405_naming_what_mcp_takes(servers: dict[str, str], server: str) -> None:
    """Stateless: no session to end, so ``/mcp`` does not take DELETE and says what it does take."""
    response = httpx.delete(servers[server] + "/mcp", headers=MCP_HEADERS | bearer(), timeout=30)
    assert response.status_code == 405, response.text
    allowed = {m.strip() for m in response.headers["allow"].split(",")}
    assert {"GET", "POST"} <= allowed and "DELETE" not in allowed


PROMPTS = {
    "policy-kb": "check_policy_basis",
    "document-store": "review_application_documents",
    "kb": "answer_from_notes",
    "governance": "answer_from_governance",
}


def rpc_call(url: str, method: str, params: dict[str, Any]) -> httpx.Response:
    """A stateless 2025-11-25 request (no per-request envelope, so no header has to repeat a long name)."""
    body = {"jsonrpc": "2.0", "id": 3, "method": method, "params": params}
    return httpx.post(url + "/mcp", content=json.dumps(body), headers=MCP_HEADERS | bearer(), timeout=60)


@pytest.mark.parametrize("server", list(SERVERS))
def test_a_prompt_without_its_required_arguments_is_invalid_params(servers: dict[str, str], server: str) -> None:
    response = rpc_call(servers[server], "prompts/get", {"name": PROMPTS[server], "arguments": {}})
    error = response.json()["error"]
    assert error["code"] == -32602 and error["data"]["missing"], error


@pytest.mark.parametrize(("method", "key"), [("tools/call", "name"), ("prompts/get", "name")])
def test_an_unknown_megabyte_name_is_not_echoed_back(servers: dict[str, str], method: str, key: str) -> None:
    response = rpc_call(servers["policy-kb"], method, {key: "n" * 1_000_000, "arguments": {}})
    assert response.json()["error"]["code"] == -32602
    assert len(response.content) < 4_000, len(response.content)


def test_the_held_out_check_passes_on_these_servers(
    servers: dict[str, str], capsys: pytest.CaptureFixture[str]
) -> None:
    """The script a reviewer runs (``python -m benchmarks.hostile``), its read-only groups against the four servers:
    it keeps working as the servers change, and every check it makes holds."""
    urls = [f"--url={name}={url}" for name, url in servers.items()]
    code = hostile.main([*urls, "--key", FULL_KEY, "--kb-key", FULL_KEY, "--only", "body,protocol,auth,missing"])
    table = capsys.readouterr().out
    assert code == 0, "\n".join(line for line in table.splitlines() if "FAIL" in line)
    assert " 0 failed" in table and "PASS" in table
