"""``/metrics`` scraped from the real service after real MCP calls over Streamable HTTP, parsed with
prometheus-client's own parser: counts and buckets move exactly as the calls did."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import uuid
from collections.abc import Iterable
from pathlib import Path

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types import INVALID_PARAMS
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample
from pydantic import SecretStr

from lib.config import load_settings
from mcp_service.__main__ import SERVERS
from mcp_service.observability.endpoint import exposition
from mcp_service.policy_kb import create_app
from mcp_service.tools.documents.tools import SERVER_NAME as DOCUMENT_STORE
from mcp_service.tools.governance.tools import SERVER_NAME as GOVERNANCE
from mcp_service.tools.kb.tools import SERVER_NAME as KB
from mcp_service.tools.policies.tools import SERVER_NAME
from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service, bearer, mcp_session, running
from tests.mcp_service.tools import call

pytestmark = pytest.mark.anyio

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(url: str, key: str = FULL_KEY) -> Samples:
    response = httpx.get(f"{url}/metrics", headers=bearer(key), timeout=30)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain")
    return parse(response.text)


def parse(text: str) -> Samples:
    samples: Iterable[Sample] = (s for family in text_string_to_metric_families(text) for s in family.samples)
    return {(s.name, frozenset(s.labels.items())): s.value for s in samples}


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def moved(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


TOOL = {"server": SERVER_NAME, "mcp_method_name": "tools/call", "gen_ai_tool_name": "search_policy"}


async def test_tool_calls_move_the_operation_histogram_the_outcome_counters_and_the_search_legs(
    nppf_service: Service,
) -> None:
    query = f"highways grounds {uuid.uuid4().hex[:8]}"
    before = scrape(nppf_service.url)
    for _ in range(2):  # the same query twice: its embedding and its answers are remembered the second time
        out = await call(nppf_service.url, "search_policy", {"query": query, "effective_date": "2025-06-01"})
        assert out["status"] == "success"
    bad = await call(nppf_service.url, "search_policy", {"query": query, "effective_date": "2025-13-45"})
    assert bad["status"] == "error"
    after = scrape(nppf_service.url)

    ok = {**TOOL, "error_type": ""}
    failed = {**TOOL, "error_type": bad["error_type"]}
    assert moved(before, after, "mcp_server_operation_duration_seconds_count", **ok) == 2
    assert moved(before, after, "mcp_server_operation_duration_seconds_bucket", **ok, le="+Inf") == 2
    assert moved(before, after, "mcp_server_operation_duration_seconds_sum", **ok) > 0
    buckets = sorted(
        (float(dict(labels)["le"]), after[(name, labels)] - before.get((name, labels), 0.0))
        for name, labels in after
        if name == "mcp_server_operation_duration_seconds_bucket" and {**ok, "le": dict(labels)["le"]} == dict(labels)
    )
    assert len(buckets) == 18 and all(0 <= a <= b <= 2 for (_, a), (_, b) in itertools.pairwise(buckets))
    assert moved(before, after, "mcp_server_operation_duration_seconds_count", **failed) == 1
    tool = {"server": SERVER_NAME, "tool": "search_policy"}
    assert moved(before, after, "policy_kb_tool_calls_total", **tool, outcome="success") == 2
    assert moved(before, after, "policy_kb_tool_calls_total", **tool, outcome=bad["error_type"]) == 1
    assert moved(before, after, "policy_kb_searches_total", domain="policies", mode="hybrid") == 2
    assert moved(before, after, "policy_kb_cache_lookups_total", cache="query_embeddings") == 2
    assert moved(before, after, "policy_kb_cache_misses_total", cache="query_embeddings") == 1
    assert moved(before, after, "policy_kb_search_leg_duration_seconds_count", leg="embed") == 2
    assert moved(before, after, "policy_kb_cache_lookups_total", cache="answers") == 4  # dense and lexical, twice
    assert moved(before, after, "policy_kb_cache_misses_total", cache="answers") == 2
    assert moved(before, after, "policy_kb_search_leg_duration_seconds_count", leg="dense") == 1
    assert moved(before, after, "policy_kb_search_leg_duration_seconds_count", leg="lexical") == 1
    assert moved(before, after, "policy_kb_search_leg_duration_seconds_count", leg="fuse") >= 2


async def test_an_unknown_tool_name_is_labelled_unknown_not_by_what_the_caller_sent(nppf_service: Service) -> None:
    name = f"no_such_tool_{uuid.uuid4().hex[:8]}"
    before = scrape(nppf_service.url)
    async with mcp_session(nppf_service.url) as session:
        with pytest.raises(MCPError) as refused:  # an unknown tool is a protocol error (-32602)
            await session.call_tool(name, {})
    after = scrape(nppf_service.url)
    outcome = str(refused.value.error.code)
    assert outcome == str(INVALID_PARAMS)
    assert moved(before, after, "policy_kb_tool_calls_total", server=SERVER_NAME, tool="unknown", outcome=outcome) == 1
    assert not any(name in dict(labels).values() for _, labels in after)


def test_metrics_carry_process_memory_and_the_registry_revisions(nppf_service: Service) -> None:
    samples = scrape(nppf_service.url, READ_KEY)  # a GET: the read-only key reads it too
    assert value(samples, "process_resident_memory_bytes") > 0
    assert value(samples, "policy_kb_revisions", status="active") == 1
    assert value(samples, "policy_kb_revisions", status="processing") == 0
    assert value(samples, "policy_kb_revisions_stuck") == 0


def test_metrics_are_behind_the_service_key(nppf_service: Service) -> None:
    assert httpx.get(f"{nppf_service.url}/metrics", timeout=30).status_code == 401
    assert httpx.get(f"{nppf_service.url}/metrics", headers=bearer("wrong"), timeout=30).status_code == 401


def test_a_metrics_key_opens_metrics_only(nppf_service: Service) -> None:
    metrics_key = "metrics-key-" + "m" * 24
    settings = nppf_service.settings.replace(metrics_api_key=SecretStr(metrics_key))
    with running(create_app(settings, stores=nppf_service.stores, warm=False)) as url:
        assert value(scrape(url, metrics_key), "policy_kb_revisions", status="active") == 1
        assert httpx.get(f"{url}/metrics", headers=bearer(FULL_KEY), timeout=30).status_code == 401
        assert httpx.get(f"{url}/api/v1/policies", headers=bearer(metrics_key), timeout=30).status_code == 401


COUNT_ONE_CALL = """
from lib.observability.metrics import tool_calls
tool_calls.labels("policy-kb-mcp", "search_policy", "success").inc()
"""


def test_several_worker_processes_are_summed_from_the_multiprocess_folder(tmp_path: Path) -> None:
    folder = tmp_path / "metrics"
    folder.mkdir()
    env = {**os.environ, "PROMETHEUS_MULTIPROC_DIR": str(folder)}
    for _ in range(2):  # two "workers", each its own process writing its own file
        subprocess.run([sys.executable, "-c", COUNT_ONE_CALL], env=env, check=True, cwd=Path(__file__).parents[2])
    settings = load_settings(prometheus_multiproc_dir=folder).observability
    samples = parse(exposition(settings).decode())
    labels = {"server": "policy-kb-mcp", "tool": "search_policy", "outcome": "success"}
    assert value(samples, "policy_kb_tool_calls_total", **labels) == 2


@pytest.mark.parametrize(
    ("name", "server_name"),
    [("document-store", DOCUMENT_STORE), ("kb", KB), ("governance", GOVERNANCE)],
)
async def test_every_other_server_answers_metrics_for_its_own_requests(
    nppf_service: Service, name: str, server_name: str
) -> None:
    """The same ``/metrics`` on the other three servers (built over the session's stores, not warmed), each
    counting the requests it served under its own server name."""
    app = SERVERS[name].load().create_app(nppf_service.settings, stores=nppf_service.stores, warm=False)
    with running(app) as url:
        before = scrape(url)
        async with mcp_session(url) as session:
            tools = await session.list_tools()
        after = scrape(url)
    assert tools.tools
    listed = {"server": server_name, "mcp_method_name": "tools/list", "gen_ai_tool_name": "", "error_type": ""}
    assert moved(before, after, "mcp_server_operation_duration_seconds_count", **listed) == 1
