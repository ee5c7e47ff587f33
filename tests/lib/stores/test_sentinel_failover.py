"""Redis failover under Sentinel, with real processes: a primary, a replica and three sentinels on loopback.

The registry finds the primary through the sentinels (``REDIS_SENTINELS``), every write it answers success for
is held by the replica too (WAIT), so ``kill -9`` of the primary in the middle of writes loses none of them; the
replica is promoted, the client follows it, and writes go on once a replica is back to acknowledge them. A write
no replica acknowledges answers ``registry_unavailable``. What each run measured is printed
(``failover-evidence``, ``pytest -rA``); docs/decisions/0026-redis-sentinel-failover.md quotes it.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from lib.errors import PolicyAlreadyExistsError, RegistryUnavailableError
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.policies.registry import PolicyRegistry
from lib.stores.redis_server import redis_client
from tests.lib.stores.sentinel_cluster import MASTER, SentinelCluster, sentinel_cluster
from tests.polling import eventually


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[SentinelCluster]:
    with sentinel_cluster(tmp_path / "redis") as running:
        yield running


def policy(source: str) -> PolicyCreate:
    return PolicyCreate(source=source, title=f"{source} title", category="national_policy")


def write_until_acknowledged(registry: PolicyRegistry, prefix: str) -> str:
    """Create policies ``{prefix}_0``, ``{prefix}_1``, ... until one is acknowledged; its source. A new name each
    try: a write whose WAIT fell short (a replica slow to answer on a loaded machine) may be on the primary."""
    tried: list[str] = []

    def one() -> bool:
        tried.append(f"{prefix}_{len(tried)}")
        try:
            registry.create_policy(policy(tried[-1]))
        except RegistryUnavailableError:
            return False
        return True

    eventually(one, within=30, what=f"a write acknowledged ({prefix})")
    return tried[-1]


def note(name: str, value: object) -> None:
    """What a run measured, printed for the record (``pytest -rA`` shows it)."""
    print(f"failover-evidence {name}: {value}")


@dataclass
class Writer:
    """Creates policies ``FAILOVER_00000``, ``FAILOVER_00001``, ... one after the other on a thread, keeping
    apart the ones acknowledged (the call returned) from the ones refused (``registry_unavailable``) and the
    ones whose fate it cannot know (a retry found the policy already there: the first attempt's reply was lost)."""

    registry: PolicyRegistry
    acknowledged: list[tuple[str, float]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    stop: threading.Event = field(default_factory=threading.Event)
    slowest_call_s: float = 0.0

    def run(self) -> None:
        n = 0
        while not self.stop.is_set():
            source = f"FAILOVER_{n:05d}"
            n += 1
            started = time.monotonic()
            try:
                self.registry.create_policy(policy(source))
            except RegistryUnavailableError:
                self.refused.append(source)
            except PolicyAlreadyExistsError:
                self.unknown.append(source)
            else:
                self.acknowledged.append((source, time.monotonic()))
            self.slowest_call_s = max(self.slowest_call_s, time.monotonic() - started)

    def acknowledged_after(self, moment: float) -> bool:
        return any(at > moment for _, at in self.acknowledged)

    def longest_silence(self) -> float:
        """The longest time between two acknowledged writes: how long writes were refused across the failover."""
        times = [at for _, at in self.acknowledged]
        return max(later - earlier for earlier, later in itertools.pairwise(times))


def test_the_registry_finds_the_primary_through_sentinel_and_its_writes_are_on_the_replica(
    cluster: SentinelCluster, tmp_path: Path
) -> None:
    client = redis_client(cluster.settings(tmp_path))
    registry = PolicyRegistry(client)
    primary, replica = cluster.nodes
    assert client.connection_pool.get_master_address() == ("127.0.0.1", primary.port)  # type: ignore[attr-defined]

    registry.create_policy(policy("NPPF"))
    created = registry.create_revision("NPPF", RevisionCreate(version_label="2024", effective_from="2024-12-12"))

    assert registry.get_policy("NPPF").title == "NPPF title"
    assert [r.revision_id for r in registry.list_revisions("NPPF")] == [created.revision.revision_id]
    on_replica = PolicyRegistry(replica.client())
    assert on_replica.get_policy("NPPF").title == "NPPF title", "an acknowledged write is on the replica already"
    assert [r.revision_id for r in on_replica.list_revisions("NPPF")] == [created.revision.revision_id]


def test_kill_9_of_the_primary_during_writes_loses_no_acknowledged_write(
    cluster: SentinelCluster, tmp_path: Path
) -> None:
    writer = Writer(PolicyRegistry(redis_client(cluster.settings(tmp_path))))
    thread = threading.Thread(target=writer.run, name="writer", daemon=True)
    thread.start()
    try:
        eventually(lambda: len(writer.acknowledged) >= 50, within=30, what="50 writes before the kill")
        old, promoted = cluster.nodes
        killed_at = time.monotonic()
        old.kill()
        eventually(
            lambda: cluster.reported_primary() == promoted.port, within=30, every=0.01, what="the replica promoted"
        )
        promoted_at = time.monotonic()
        old.start()  # as its supervisor would: the sentinels make it a replica of the new primary
        eventually(lambda: writer.acknowledged_after(promoted_at), within=30, what="a write acknowledged again")
    finally:
        writer.stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()

    on_new_primary = set(PolicyRegistry(promoted.client()).list_sources())
    acknowledged = [source for source, _ in writer.acknowledged]
    assert not set(acknowledged) - on_new_primary, "every acknowledged write is on the promoted replica"
    # No assertion on who is primary now: on a loaded machine the sentinels may fail over again afterwards.
    note("failover_s (kill -9 to the sentinels naming the replica)", f"{promoted_at - killed_at:.2f}")
    note(
        "writes_refused_s (longest time between two acknowledged writes; the old primary restarted as soon as "
        "the replica was promoted)",
        f"{writer.longest_silence():.2f}",
    )
    note("writes", f"acknowledged={len(acknowledged)} refused={len(writer.refused)} unknown={len(writer.unknown)}")
    note("slowest_call_s (one create_policy, refused or not)", f"{writer.slowest_call_s:.2f}")


def test_without_a_replica_to_acknowledge_a_write_answers_registry_unavailable(
    cluster: SentinelCluster, tmp_path: Path
) -> None:
    registry = PolicyRegistry(redis_client(cluster.settings(tmp_path)))
    registry.create_policy(policy("BEFORE"))
    replica = cluster.nodes[1]
    replica.kill()

    with pytest.raises(RegistryUnavailableError, match="acknowledged"):
        registry.create_policy(policy("UNCONFIRMED"))
    assert registry.get_policy("BEFORE").title == "BEFORE title", "reads need no replica"

    replica.start()
    eventually(lambda: cluster.replica_synchronised(replica), within=30, what="the replica back in sync")
    after = write_until_acknowledged(registry, "AFTER")
    assert PolicyRegistry(replica.client()).policy_exists(after)


def test_without_acknowledgement_writes_go_on_as_soon_as_the_replica_is_promoted(
    cluster: SentinelCluster, tmp_path: Path
) -> None:
    """``REDIS_MIN_REPLICAS_ACKED=0``: the client follows the promotion by itself, nothing restarted; what the
    writes lose is the guarantee (measured here: how long writes are refused across a failover)."""
    writer = Writer(PolicyRegistry(redis_client(cluster.settings(tmp_path, redis_min_replicas_acked=0))))
    thread = threading.Thread(target=writer.run, name="writer", daemon=True)
    thread.start()
    try:
        eventually(lambda: len(writer.acknowledged) >= 50, within=30, what="50 writes before the kill")
        old, promoted = cluster.nodes
        old.kill()
        eventually(lambda: cluster.reported_primary() == promoted.port, within=30, what="the replica promoted")
        promoted_at = time.monotonic()
        eventually(lambda: writer.acknowledged_after(promoted_at), within=30, what="writes going on")
    finally:
        writer.stop.set()
        thread.join(timeout=30)
    assert not thread.is_alive()
    info = promoted.client().info("replication")
    assert info["role"] == "master"
    note(
        "writes_refused_s without WAIT (longest time between two acknowledged writes)",
        f"{writer.longest_silence():.2f}",
    )
    note("slowest_call_s without WAIT", f"{writer.slowest_call_s:.2f}")


def test_a_write_to_a_demoted_primary_goes_to_the_new_one(cluster: SentinelCluster, tmp_path: Path) -> None:
    """A manual failover (``SENTINEL FAILOVER``): the old primary lives on as a replica and answers READONLY to
    the connections still open to it; the client drops them and writes to the new primary."""
    registry = PolicyRegistry(redis_client(cluster.settings(tmp_path)))
    registry.create_policy(policy("BEFORE"))
    old, promoted = cluster.nodes
    cluster.sentinel().sentinel_failover(MASTER)
    eventually(lambda: cluster.reported_primary() == promoted.port, within=30, what="the replica promoted")
    eventually(lambda: cluster.replica_synchronised(old), within=30, what="the old primary a replica")

    after = write_until_acknowledged(registry, "AFTER")
    assert PolicyRegistry(promoted.client()).policy_exists(after)
    assert PolicyRegistry(old.client()).policy_exists(after), "acknowledged: on the replica too"
