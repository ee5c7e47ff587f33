"""The policy-kb service over a Sentinel deployment (``REDIS_SENTINELS``): it answers tool calls and REST writes
before and after ``kill -9`` of the Redis primary, with nothing restarted but the dead Redis node, which
comes back as the new primary's replica (``tests/lib/stores/sentinel_cluster.py``: real processes)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from pydantic import SecretStr

from lib.composition import open_stores
from mcp_service.policy_kb import create_app
from tests.lib.stores.sentinel_cluster import SentinelCluster, sentinel_cluster
from tests.mcp_service.conftest import FULL_KEY, READ_KEY, Service, mcp_session, running
from tests.polling import eventually


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SentinelCluster]:
    with sentinel_cluster(tmp_path / "redis") as running_cluster:
        yield running_cluster


@pytest.fixture
def service(cluster: SentinelCluster, tmp_path: Path, chroma_dir: Path) -> Iterator[Service]:
    settings = cluster.settings(
        tmp_path,
        chroma_persist_dir=chroma_dir,
        policy_collection=f"failover_{uuid.uuid4().hex[:12]}",
        object_store_url=(tmp_path / "objects").as_uri(),
        allowed_file_roots=[tmp_path / "inbox"],
        mcp_api_key=SecretStr(FULL_KEY),
        mcp_read_api_key=SecretStr(READ_KEY),
        enable_ocr=False,
    )
    stores = open_stores(settings)
    with running(create_app(settings, stores=stores, warm=False)) as url:
        yield Service(url, stores, settings)


def create_policy(svc: Service, source: str) -> int:
    with svc.rest() as rest:
        body = {"source": source, "title": f"{source} title", "category": "national_policy"}
        return rest.post("/policies", json=body).status_code


def listed_sources(svc: Service) -> set[str]:
    async def call() -> set[str]:
        async with mcp_session(svc.url) as session:
            result = await session.call_tool("list_policy_documents", {})
        assert not result.is_error, result.content
        return {policy["source"] for policy in result.structured_content["policies"]}

    return anyio.run(call)


def test_the_service_answers_across_a_failover_of_its_redis(cluster: SentinelCluster, service: Service) -> None:
    assert create_policy(service, "BEFORE_FAILOVER") == 201
    assert listed_sources(service) == {"BEFORE_FAILOVER"}
    old, promoted = cluster.nodes

    old.kill()
    eventually(lambda: cluster.reported_primary() == promoted.port, within=30, what="the replica promoted")
    assert listed_sources(service) == {"BEFORE_FAILOVER"}, "read from the promoted replica"
    old.start()

    # Each attempt a new policy: one refused (503) may still have reached the primary, so trying it again could
    # answer 409 for a write that was never acknowledged.
    attempts = iter(f"AFTER_FAILOVER_{n}" for n in range(10_000))
    created: list[str] = []

    def write_once() -> bool:
        source = next(attempts)
        status = create_policy(service, source)
        assert status in (201, 503), status
        if status == 201:
            created.append(source)
        return status == 201

    eventually(write_once, within=60, every=0.2, what="a write acknowledged after the failover")
    assert {"BEFORE_FAILOVER", *created} <= listed_sources(service)
