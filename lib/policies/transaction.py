"""The policy registry's writes as optimistic Redis transactions (redis-py's ``Redis.transaction``).

A write WATCHes the policy, its sorted set and every revision hash, reads the policy's ``Timeline``,
lets the pure date rules (``lib.policies.temporal``) decide a ``Plan``, then stores the plan and a new
generation token in one MULTI/EXEC. A concurrent writer to the same policy makes EXEC fail and the
loser re-reads and re-decides, so two overlapping creations can never both succeed and a supersession
is never half applied.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable
from typing import Any, TypeVar, cast

import redis
from redis.client import Pipeline

from lib.dates import epoch_days
from lib.errors import PolicyNotFoundError, RegistryUnavailableError
from lib.policies.codec import record_from_hash, record_to_hash
from lib.policies.keys import GENERATION_KEY, policy_key, revision_hash_key, revisions_key
from lib.policies.temporal import Plan, Timeline

logger = logging.getLogger(__name__)

MAX_TRANSACTION_ATTEMPTS = 64

T = TypeVar("T")


def redis_call(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """``fn(*args, **kwargs)``, with Redis being down reported as ``registry_unavailable``."""
    try:
        return fn(*args, **kwargs)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise RegistryUnavailableError(f"Redis is not reachable: {exc}") from exc


def policy_not_found(source: str) -> PolicyNotFoundError:
    return PolicyNotFoundError(f"No policy document found with source '{source}'", source=source)


def transact(client: redis.Redis, source: str, write: Callable[[Pipeline], T], *watches: str) -> T:
    """Run ``write`` as an optimistic transaction over ``watches``, with a new generation token.

    ``write`` reads through the pipeline (immediate mode), may WATCH further keys it discovers, calls
    ``pipe.multi()`` and queues its writes; anything it raises leaves Redis untouched. The token is queued
    after its writes, in the same MULTI/EXEC, so readers' snapshots see the change with the data.
    ``Redis.transaction`` retries a lost race without end; the attempt count here bounds it
    (``MAX_TRANSACTION_ATTEMPTS``) so a writer starved by contention gets ``registry_unavailable``.
    """
    attempts = 0

    def attempt(pipe: Pipeline) -> T:
        nonlocal attempts
        attempts += 1
        if attempts > MAX_TRANSACTION_ATTEMPTS:
            raise RegistryUnavailableError(f"Too much contention writing policy '{source}'; try again")
        result = write(pipe)
        pipe.set(GENERATION_KEY, uuid.uuid4().hex)
        return result

    return cast(T, redis_call(client.transaction, attempt, *watches, value_from_callable=True))


def apply_plan(client: redis.Redis, source: str, decide: Callable[[Timeline], Plan]) -> Plan:
    """Read ``source``'s timeline under WATCH, let ``decide`` plan the write, store the plan; return it.

    Records are stored whole; a revision's score in the sorted set is written when it is new or its
    ``effective_from`` moved. ``policy_not_found`` when the policy is not registered.
    """
    pkey, zkey = policy_key(source), revisions_key(source)

    def write(pipe: Pipeline) -> Plan:
        # The client decodes responses (``decode_responses=True``), which redis-py's types cannot know.
        ids = cast(list[str], pipe.zrange(zkey, 0, -1))
        if ids:
            pipe.watch(*(revision_hash_key(source, rid) for rid in ids))
        rows = [cast(dict[str, str], pipe.hgetall(revision_hash_key(source, rid))) for rid in ids]
        if not pipe.exists(pkey):
            raise policy_not_found(source)
        timeline = Timeline.of(source, (record_from_hash(row) for row in rows if row))
        plan = decide(timeline)
        pipe.multi()
        for record in plan.store:
            rev = record.revision
            pipe.hset(revision_hash_key(source, rev.revision_id), mapping=record_to_hash(record))
            before = timeline.records.get(rev.revision_id)
            if before is None or before.revision.effective_from != rev.effective_from:
                pipe.zadd(zkey, {rev.revision_id: epoch_days(rev.effective_from)})
        for rid in plan.remove:
            pipe.delete(revision_hash_key(source, rid))
            pipe.zrem(zkey, rid)
        return plan

    plan = transact(client, source, write, pkey, zkey)
    for reopened in plan.released:
        logger.info(
            "registry.supersession_released source=%s revision_id=%s effective_to=%s",
            source,
            reopened.revision_id,
            reopened.effective_to,
        )
    return plan
