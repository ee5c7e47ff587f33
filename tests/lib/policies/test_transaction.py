"""The registry's optimistic transactions on a real redis-server: a lost race is re-decided, and bounded."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import redis

from lib.errors import RegistryUnavailableError
from lib.policies.keys import GENERATION_KEY, policy_key
from lib.policies.models import PolicyCreate, Revision, RevisionCreate, RevisionStatus
from lib.policies.registry import PolicyRegistry
from lib.policies.temporal import Plan, Timeline, plan_creation
from lib.policies.transaction import MAX_TRANSACTION_ATTEMPTS, apply_plan


def processing(rid: str, start: date) -> Revision:
    return Revision(
        revision_id=rid,
        source="NPPF",
        version_label=rid,
        effective_from=start,
        status=RevisionStatus.PROCESSING,
        created_at=datetime.now(UTC),
    )


def test_a_write_that_loses_the_race_re_reads_and_re_decides(
    registry: PolicyRegistry, redis_client: redis.Redis, redis_url: str
) -> None:
    registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    rival = PolicyRegistry(redis.Redis.from_url(redis_url, decode_responses=True))
    seen: list[list[str]] = []

    def decide(timeline: Timeline) -> Plan:
        seen.append(sorted(timeline.records))
        if len(seen) == 1:  # another writer gets in between this read and this EXEC
            rival.create_revision(
                "NPPF", RevisionCreate(revision_id="rival", version_label="r", effective_from="2020-01-01")
            )
        return plan_creation(timeline, processing("ours", date(2024, 1, 1)))

    plan = apply_plan(redis_client, "NPPF", decide)
    assert seen == [[], ["rival"]], "the second attempt decided on the rival's write"
    assert [r.revision_id for r in plan.superseded] == ["rival"]
    assert registry.get_revision("NPPF", "rival").effective_to == date(2023, 12, 31)


def test_a_writer_that_always_loses_the_race_gives_up_with_registry_unavailable(
    registry: PolicyRegistry, redis_client: redis.Redis, redis_url: str
) -> None:
    registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    rival = redis.Redis.from_url(redis_url, decode_responses=True)
    token = registry.generation()
    attempts = 0

    def decide(timeline: Timeline) -> Plan:
        nonlocal attempts
        attempts += 1
        rival.hset(policy_key("NPPF"), "description", f"touched {attempts}")
        return plan_creation(timeline, processing("ours", date(2024, 1, 1)))

    with pytest.raises(RegistryUnavailableError, match="contention"):
        apply_plan(redis_client, "NPPF", decide)
    assert attempts == MAX_TRANSACTION_ATTEMPTS
    assert redis_client.get(GENERATION_KEY) == token and registry.list_revisions("NPPF") == []
