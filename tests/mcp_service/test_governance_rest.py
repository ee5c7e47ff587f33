"""REST on the governance port (spec 004 F3/F4/F7, NF2, NF3): ``GET /query`` and ``GET /health``, the
index_not_built answer, and the bearer keys applying as on the other servers when they are set."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from mcp_service.governance import create_app
from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service, bearer, mcp_session, running
from tests.mcp_service.governance_fixtures import GOVERNANCE_FIXTURES

QUESTION = "How do I declare the dependencies of a single-file Python script inline?"


def test_query_answers_the_question_with_results_and_timing(governance_service: Service) -> None:
    response = httpx.get(f"{governance_service.url}/query", params={"q": QUESTION, "top_k": 2}, timeout=30)
    assert response.status_code == 200
    body = response.json()
    assert (body["query"], body["top_k"], body["mode"]) == (QUESTION, 2, "hybrid")
    assert len(body["results"]) == 2 and body["took_ms"] > 0
    top = body["results"][0]
    assert top["metadata"]["id"] == "PEP-0723"
    assert set(top["metadata"]) >= {"id", "title", "type", "status", "file_path", "heading", "superseded_by"}


def test_query_takes_the_tool_filters(governance_service: Service) -> None:
    params = {"q": "manylinux platform tag", "as_of": "2017-06-01", "top_k": 20}
    body = httpx.get(f"{governance_service.url}/query", params=params, timeout=30).json()
    assert body["as_of"] == "2017-06-01" and "PEP-0600" not in {r["metadata"]["id"] for r in body["results"]}
    only_rejected = {"q": "dependencies in a script", "include_inactive": "true", "type": "standards track"}
    body = httpx.get(f"{governance_service.url}/query", params=only_rejected, timeout=30).json()
    assert "PEP-0722" in {r["metadata"]["id"] for r in body["results"]}


@pytest.mark.parametrize(
    "params", [{}, {"q": ""}, {"q": QUESTION, "top_k": 0}, {"q": QUESTION, "top_k": 21}, {"q": QUESTION, "top_k": "x"}]
)
def test_query_without_a_question_or_with_top_k_out_of_bounds_is_422(
    governance_service: Service, params: dict[str, object]
) -> None:
    response = httpx.get(f"{governance_service.url}/query", params=params, timeout=30)
    assert response.status_code == 422
    assert response.json()["error"]["code"] == "validation_error"


def test_health_reports_the_index(governance_service: Service) -> None:
    response = httpx.get(f"{governance_service.url}/health", timeout=30)
    assert response.status_code == 200
    body = response.json()
    assert (body["status"], body["index_loaded"], body["hint"]) == ("healthy", True, "")  # spec 004 F7
    index = body["index"]
    assert index["built"] is True and index["documents"] == len(list(GOVERNANCE_FIXTURES.rglob("*.*")))
    assert index["chunks"] > index["documents"]
    assert index["last_updated"]


def test_an_empty_index_is_healthy_but_says_so_and_queries_get_index_not_built(
    empty_governance_service: Service,
) -> None:
    health = httpx.get(f"{empty_governance_service.url}/health", timeout=30).json()
    assert (health["status"], health["index_loaded"]) == ("healthy", False)
    assert health["index"]["built"] is False and health["index"]["documents"] == 0
    assert "policy-kb governance ingest PATH" in health["hint"]
    response = httpx.get(f"{empty_governance_service.url}/query", params={"q": QUESTION}, timeout=30)
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "index_not_built" and "policy-kb governance ingest PATH" in error["message"]


@pytest.mark.anyio
async def test_with_keys_set_every_route_but_health_needs_one_and_the_read_key_may_query(
    governance_service: Service,
) -> None:
    keyed = governance_service.settings.replace(mcp_api_key=SecretStr(FULL_KEY), mcp_read_api_key=SecretStr(READ_KEY))
    with running(create_app(keyed, stores=governance_service.stores, warm=False)) as url:
        assert httpx.get(f"{url}/health", timeout=30).status_code == 200
        assert httpx.get(f"{url}/query", params={"q": QUESTION}, timeout=30).status_code == 401
        wrong = httpx.get(f"{url}/query", params={"q": QUESTION}, headers=bearer("wrong"), timeout=30)
        assert wrong.status_code == 401
        read = httpx.get(f"{url}/query", params={"q": QUESTION}, headers=bearer(READ_KEY), timeout=30)
        assert read.status_code == 200
        async with mcp_session(url, key=READ_KEY) as session:
            result = await session.call_tool("query_governance", {"question": QUESTION, "top_k": 1})
        assert not result.is_error


def test_governance_api_key_replaces_the_policy_kb_keys_and_empty_opens_it(governance_service: Service) -> None:
    keyed = governance_service.settings.replace(mcp_api_key=SecretStr(FULL_KEY), mcp_read_api_key=SecretStr(READ_KEY))
    own = keyed.replace(governance_api_key=SecretStr("governance-" + "g" * 24))
    with running(create_app(own, stores=governance_service.stores, warm=False)) as url:
        for key, status in ((FULL_KEY, 401), (READ_KEY, 401), ("governance-" + "g" * 24, 200)):
            response = httpx.get(f"{url}/query", params={"q": QUESTION}, headers=bearer(key), timeout=30)
            assert response.status_code == status, key
    public = keyed.replace(governance_api_key=SecretStr(""))
    with running(create_app(public, stores=governance_service.stores, warm=False)) as url:
        assert httpx.get(f"{url}/query", params={"q": QUESTION}, timeout=30).status_code == 200
