"""redis-server killed (SIGKILL) under a running service, then restarted on the same AOF: in the middle of an
ingestion, and under a live SSE session.

No acknowledged registry write is lost (the policy, and the revision the upload answered 202 for); while
Redis is down ``/api/v1/health`` says it is the one down and tools answer ``registry_unavailable``; the
service reconnects by itself; the interrupted ingestion is resumed by its task's retry; the SSE session
and the service outlive the restart.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import anyio
import pytest
import redis

from deployments.stack.process import StackProcess
from lib.policies.models import RevisionStatus
from mcp_service.transports.sse_relay import session_key
from tests.faults.support import (
    SOURCE,
    audit,
    big_pdf,
    create_policy,
    fault_settings,
    note,
    service,
    stack_processes,
    upload,
    wait_for_phase,
    wait_settled,
)
from tests.mcp_service.conftest import Service, mcp_session
from tests.polling import eventually

REVISION = "rev_FAULT_POLICY_2024_06"


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Service, StackProcess]]:
    base = tmp_path_factory.mktemp("faults-redis")
    with (
        stack_processes(base / "stack", "redis", "chroma") as (layout, processes),
        service(fault_settings(layout, base)) as svc,
    ):
        create_policy(svc)
        yield svc, processes["redis"]


def raw_redis(svc: Service) -> redis.Redis:
    return redis.Redis.from_url(svc.settings.redis.url or "", decode_responses=True)


def health(svc: Service) -> tuple[int, dict[str, Any]]:
    with svc.rest() as rest:
        response = rest.get("/health")
    return response.status_code, response.json()


def test_kill_9_of_redis_mid_ingestion_loses_no_acknowledged_write_and_the_ingestion_resumes(
    stack: tuple[Service, StackProcess],
) -> None:
    svc, redis_process = stack
    note("appendfsync", raw_redis(svc).config_get("appendfsync")["appendfsync"])
    accepted = upload(svc, REVISION, "2024-06-01", big_pdf("2024"))
    assert accepted.status_code == 202, accepted.text
    wait_for_phase(svc, REVISION, "embed")
    redis_process.kill()
    try:
        status, body = health(svc)
        assert status == 503
        checks = body["checks"]
        note("health_while_down", {name: check["error"] or "ok" for name, check in checks.items()})
        assert (checks["redis"]["ok"], checks["chroma"]["ok"], checks["object_store"]["ok"]) == (False, True, True)
        assert "Redis" in checks["redis"]["error"] or "Connection" in checks["redis"]["error"], checks["redis"]
        with svc.rest() as rest:
            refused = rest.get(f"/policies/{SOURCE}")
        assert refused.status_code == 503 and refused.json()["error"]["code"] == "registry_unavailable"
    finally:
        redis_process.start()
    kept = svc.stores.policies.registry.get_revision(SOURCE, REVISION)
    assert kept.version_label == REVISION, "the registration the upload acknowledged survived the kill"
    settled = wait_settled(svc, REVISION, within=120)
    note("outcome", f"{settled.status.value}, {settled.chunk_count} chunks, error={settled.error!r}")
    assert settled.status == RevisionStatus.ACTIVE, settled.error
    assert settled.chunk_count > 100
    assert health(svc)[0] == 200
    outcome = audit(svc)
    note("audit", outcome.describe())
    assert outcome.before.ok, outcome.describe()


def test_a_redis_restart_under_a_live_sse_session_leaves_the_session_and_the_service_up(
    stack: tuple[Service, StackProcess],
) -> None:
    svc, redis_process = stack

    async def scenario() -> None:
        async with mcp_session(svc.url, transport="sse") as session:
            first = await session.call_tool("list_policy_documents", {})
            assert first.structured_content and first.structured_content["status"] == "success"
            held = [k for k in raw_redis(svc).scan_iter(session_key("*"))]
            assert held, "the relay registered the session in Redis"
            redis_process.kill()
            try:
                down = await session.call_tool("list_policy_documents", {})
                assert down.is_error and down.structured_content
                assert down.structured_content["error_type"] == "registry_unavailable"
            finally:
                redis_process.start()
            again = await session.call_tool("list_policy_documents", {})
            assert again.structured_content and again.structured_content["status"] == "success"
            assert SOURCE in {p["source"] for p in again.structured_content["policies"]}
            raw_redis(svc).delete(*held)  # as if the restart had lost them: the relay registers them again
            eventually(lambda: raw_redis(svc).exists(*held) == len(held), within=30, every=0.1)

    anyio.run(scenario)
    assert health(stack[0])[0] == 200
