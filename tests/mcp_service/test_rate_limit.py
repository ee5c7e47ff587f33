"""Rate limits per caller, shared by two replicas through one Redis: a burst over budget gets 429 with
``Retry-After`` (over MCP, a JSON-RPC error with the same meaning), ``/health`` is never limited, another
caller keeps its own budget, the budget refills once the window is over, and each 429 is counted once in
``policy_kb_rate_limited_total``."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import cycle, islice
from pathlib import Path

import httpx
import pytest
import redis
from pydantic import SecretStr

from lib.composition import open_stores
from mcp_service.auth import RATE_LIMITED_RPC_CODE
from mcp_service.policy_kb import create_app
from tests.mcp_service.conftest import FULL_KEY, INITIALIZE, MCP_HEADERS, READ_KEY, bearer, running, service_settings
from tests.mcp_service.test_metrics import moved, scrape
from tests.polling import eventually

LIMIT_DB = 15
BUDGET = 3
WINDOW_S = 2
MAX_BURST = 60
"""Requests sent before giving up on a 429: 20 windows' worth of budget would have to pass in the burst."""
METRICS_KEY = "metrics-key-" + "m" * 24
"""``/metrics`` under a key of its own is outside the auth middleware, so scraping spends no caller's budget."""


@pytest.fixture(scope="module")
def replicas(service_base: Path, redis_url: str, chroma_dir: Path) -> Iterator[tuple[str, str]]:
    """Two policy-kb apps (each its own Redis client and limiter) over one Redis, a budget of 3 per 2 s."""
    settings = service_settings(
        service_base,
        redis_url,
        chroma_dir,
        LIMIT_DB,
        rate_limit_per_minute=BUDGET,
        rate_limit_window_seconds=WINDOW_S,
        metrics_api_key=SecretStr(METRICS_KEY),
    )
    redis.Redis.from_url(settings.redis.url or "").flushdb()
    stores = open_stores(settings)
    with (
        running(create_app(settings, stores=stores, warm=False)) as first,
        running(create_app(settings, stores=stores, warm=False)) as second,
    ):
        yield first, second


def burst_until_refused(urls: tuple[str, str], send: str, key: str) -> tuple[int, httpx.Response]:
    """Requests alternating between the replicas until one is refused: (how many passed, the refusal)."""
    for passed, url in enumerate(islice(cycle(urls), MAX_BURST)):
        if send == "rest":
            response = httpx.get(f"{url}/api/v1/policies", headers=bearer(key), timeout=30)
        else:
            response = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | bearer(key), timeout=30)
        if response.status_code == 429:
            return passed, response
        assert response.status_code == 200, response.text
    pytest.fail(f"no 429 in {MAX_BURST} requests over a budget of {BUDGET} per {WINDOW_S} s")


def test_a_burst_through_two_replicas_is_limited_and_the_budget_refills(replicas: tuple[str, str]) -> None:
    passed, refused = burst_until_refused(replicas, "rest", FULL_KEY)
    assert passed >= BUDGET  # the first window's budget, at least, was served, by both replicas together
    assert refused.json()["error"]["code"] == "rate_limited"
    assert 1 <= int(refused.headers["retry-after"]) <= WINDOW_S
    for url in replicas:
        assert httpx.get(f"{url}/health").status_code == 200  # never limited
    assert httpx.get(f"{replicas[0]}/api/v1/policies", headers=bearer(READ_KEY)).status_code == 200  # its own budget

    def served_again() -> bool:
        return httpx.get(f"{replicas[1]}/api/v1/policies", headers=bearer(FULL_KEY)).status_code == 200

    eventually(served_again, within=WINDOW_S * 10, every=0.1, what="the budget refilled")


def test_over_budget_over_mcp_is_a_json_rpc_error_with_retry_after(replicas: tuple[str, str]) -> None:
    _, refused = burst_until_refused(replicas, "mcp", READ_KEY)
    error = refused.json()["error"]
    assert error["code"] == RATE_LIMITED_RPC_CODE and 1 <= error["data"]["retry_after"] <= WINDOW_S
    assert refused.json()["jsonrpc"] == "2.0" and refused.headers["retry-after"] == str(error["data"]["retry_after"])


def test_each_429_moves_the_rate_limited_counter_once(replicas: tuple[str, str]) -> None:
    """Both replicas run in this process, so either one's ``/metrics`` shows the count of both."""
    before = scrape(replicas[0], METRICS_KEY)
    _, first = burst_until_refused(replicas, "rest", FULL_KEY)
    statuses = [first.status_code] + [
        httpx.get(f"{url}/api/v1/policies", headers=bearer(FULL_KEY), timeout=30).status_code
        for url in islice(cycle(replicas), BUDGET)
    ]
    assert set(statuses) <= {200, 429}
    after = scrape(replicas[1], METRICS_KEY)
    assert moved(before, after, "policy_kb_rate_limited_total", server="policy-kb") == statuses.count(429) >= 1
