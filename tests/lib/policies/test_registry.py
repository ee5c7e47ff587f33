"""Spec 001 PolicyRegistry TS-01..TS-12 against a real redis-server, plus atomicity and concurrency."""

from __future__ import annotations

import itertools
import threading
from datetime import date

import pytest
import redis

from lib.errors import (
    CannotDeleteSoleRevisionError,
    InvalidSourceError,
    PolicyAlreadyExistsError,
    PolicyNotFoundError,
    RevisionAlreadyExistsError,
    RevisionNotFoundError,
    RevisionOverlapError,
)
from lib.policies.keys import GENERATION_KEY, revision_hash_key
from lib.policies.models import PolicyCreate, PolicyUpdate, RevisionCreate, RevisionStatus, RevisionUpdate
from lib.policies.registry import PolicyRegistry


def make_policy(registry: PolicyRegistry, source: str = "NPPF", category: str = "national_policy") -> None:
    registry.create_policy(PolicyCreate(source=source, title=f"{source} title", category=category))


def add(
    registry: PolicyRegistry,
    start: str,
    end: str | None = None,
    source: str = "NPPF",
    rid: str | None = None,
    ingest: bool = True,
) -> str:
    created = registry.create_revision(
        source, RevisionCreate(revision_id=rid, version_label=f"from {start}", effective_from=start, effective_to=end)
    )
    if ingest:
        registry.mark_ingested(
            source,
            created.revision.revision_id,
            page_count=1,
            chunk_count=1,
            file_size_bytes=1,
            extraction_method="text_layer",
        )
    return created.revision.revision_id


def snapshot(client: redis.Redis) -> dict[str, object]:
    out: dict[str, object] = {}
    for key in sorted(client.keys("*")):
        kind = client.type(key)
        out[key] = {
            "hash": lambda k: client.hgetall(k),
            "zset": lambda k: client.zrange(k, 0, -1, withscores=True),
            "set": lambda k: sorted(client.smembers(k)),
            "string": lambda k: client.get(k),
        }[kind](key)
    return out


def test_ts01_create_policy_stores_the_hash_and_adds_the_slug_to_policies_all(
    registry: PolicyRegistry, redis_client: redis.Redis
) -> None:
    registry.create_policy(
        PolicyCreate(source="LTN_1_20", title="Cycle Infrastructure Design (LTN 1/20)", category="national_guidance")
    )
    stored = redis_client.hgetall("policy:LTN_1_20")
    assert stored["title"] == "Cycle Infrastructure Design (LTN 1/20)"
    assert stored["category"] == "national_guidance"
    assert {"source", "title", "description", "category", "created_at", "updated_at"} <= stored.keys()
    assert redis_client.smembers("policies_all") == {"LTN_1_20"}


def test_ts02_creating_the_same_source_twice_raises_policy_already_exists(registry: PolicyRegistry) -> None:
    make_policy(registry, "LTN_1_20", "national_guidance")
    with pytest.raises(PolicyAlreadyExistsError) as err:
        make_policy(registry, "LTN_1_20", "national_guidance")
    assert err.value.error_type == "policy_already_exists"


def test_ts03_create_revision_writes_the_hash_and_the_sorted_set_with_an_epoch_day_score(
    registry: PolicyRegistry, redis_client: redis.Redis
) -> None:
    make_policy(registry)
    created = registry.create_revision(
        "NPPF", RevisionCreate(version_label="December 2024", effective_from="2024-12-12")
    )
    assert created.revision.revision_id == "rev_NPPF_2024_12"
    assert created.revision.status == RevisionStatus.PROCESSING
    stored = redis_client.hgetall("policy_revision:NPPF:rev_NPPF_2024_12")
    assert stored["effective_from"] == "2024-12-12" and stored["effective_to"] == ""
    assert set(stored) >= {
        "revision_id",
        "source",
        "version_label",
        "effective_from",
        "effective_to",
        "status",
        "file_path",
        "file_size_bytes",
        "page_count",
        "chunk_count",
        "notes",
        "created_at",
        "ingested_at",
        "error",
    }
    assert redis_client.zrange("policy_revisions:NPPF", 0, -1, withscores=True) == [("rev_NPPF_2024_12", 20069.0)]


def test_ts04_a_revision_overlapping_a_bounded_one_is_rejected_and_nothing_is_written(
    registry: PolicyRegistry, redis_client: redis.Redis
) -> None:
    make_policy(registry)
    add(registry, "2024-01-01", "2024-12-31")
    before = snapshot(redis_client)
    with pytest.raises(RevisionOverlapError) as err:
        add(registry, "2024-06-01", rid="rev_overlap")
    assert err.value.error_type == "revision_overlap"
    assert snapshot(redis_client) == before


@pytest.mark.parametrize(
    ("start", "end"),
    [("2023-01-01", "2024-01-01"), ("2024-12-31", None), ("2024-03-01", "2024-03-31"), ("2023-06-01", None)],
)
def test_every_kind_of_intersection_with_a_bounded_revision_is_an_overlap(
    registry: PolicyRegistry, start: str, end: str | None
) -> None:
    make_policy(registry)
    add(registry, "2024-01-01", "2024-12-31")
    with pytest.raises(RevisionOverlapError):
        add(registry, start, end, rid="rev_new")


def test_a_revision_starting_the_same_day_as_an_open_ended_one_is_an_overlap(registry: PolicyRegistry) -> None:
    make_policy(registry)
    add(registry, "2024-12-12")
    with pytest.raises(RevisionOverlapError):
        add(registry, "2024-12-12", rid="rev_same_day")


def test_ts05_get_policy_revisions_come_back_newest_first(registry: PolicyRegistry) -> None:
    make_policy(registry)
    add(registry, "2023-09-05")
    add(registry, "2021-07-20", "2023-09-04")
    add(registry, "2024-12-12")
    assert [r.effective_from.isoformat() for r in registry.list_revisions("NPPF")] == [
        "2024-12-12",
        "2023-09-05",
        "2021-07-20",
    ]
    assert registry.get_policy("NPPF").title == "NPPF title"


def test_ts06_list_policies_returns_every_registered_policy(registry: PolicyRegistry) -> None:
    sources = ["BICESTER_LCWIP", "CHERWELL_LOCAL_PLAN", "LTN_1_20", "NPPF", "OCC_LTCP"]
    for source in sources:
        make_policy(registry, source)
    assert [p.source for p in registry.list_policies()] == sources


def test_ts07_update_revision_changes_effective_to_and_label(registry: PolicyRegistry) -> None:
    make_policy(registry)
    rid = add(registry, "2023-09-05")
    updated = registry.update_revision(
        "NPPF", rid, RevisionUpdate(effective_to="2024-12-11", version_label="September 2023")
    )
    assert updated.effective_to == date(2024, 12, 11)
    assert registry.get_revision("NPPF", rid).version_label == "September 2023"


def test_update_revision_rechecks_overlap_and_leaves_the_revision_unchanged(registry: PolicyRegistry) -> None:
    make_policy(registry)
    first = add(registry, "2023-09-05")
    add(registry, "2024-12-12")
    with pytest.raises(RevisionOverlapError):
        registry.update_revision("NPPF", first, RevisionUpdate(effective_to=None))
    with pytest.raises(RevisionOverlapError):
        registry.update_revision("NPPF", first, RevisionUpdate(effective_to="2025-01-01"))
    assert registry.get_revision("NPPF", first).effective_to == date(2024, 12, 11)


def test_moving_effective_from_moves_the_sorted_set_score(registry: PolicyRegistry, redis_client: redis.Redis) -> None:
    make_policy(registry)
    rid = add(registry, "2024-12-12")
    registry.update_revision("NPPF", rid, RevisionUpdate(effective_from="2024-12-01"))
    assert redis_client.zscore("policy_revisions:NPPF", rid) == 20058.0


def test_ts08_delete_revision_removes_hash_and_sorted_set_entry(
    registry: PolicyRegistry, redis_client: redis.Redis
) -> None:
    make_policy(registry)
    old = add(registry, "2021-07-20")
    add(registry, "2023-09-05")
    registry.delete_revision("NPPF", old)
    assert not redis_client.exists(f"policy_revision:NPPF:{old}")
    assert old not in redis_client.zrange("policy_revisions:NPPF", 0, -1)


def test_ts09_the_sole_active_revision_cannot_be_deleted(registry: PolicyRegistry, redis_client: redis.Redis) -> None:
    make_policy(registry)
    rid = add(registry, "2020-07-27")
    before = snapshot(redis_client)
    with pytest.raises(CannotDeleteSoleRevisionError) as err:
        registry.delete_revision("NPPF", rid)
    assert err.value.error_type == "cannot_delete_sole_revision"
    assert snapshot(redis_client) == before


def test_ts12_a_new_revision_closes_the_open_ended_one_the_day_before_it_starts(registry: PolicyRegistry) -> None:
    make_policy(registry)
    a = add(registry, "2020-07-27", rid="rev_A")
    created = registry.create_revision("NPPF", RevisionCreate(version_label="B", effective_from="2025-01-01"))
    closed = registry.get_revision("NPPF", a)
    assert closed.effective_to == date(2024, 12, 31)
    assert closed.status == RevisionStatus.SUPERSEDED
    assert [r.revision_id for r in created.superseded] == [a]


def test_historical_insertion_before_an_open_ended_revision_is_accepted(registry: PolicyRegistry) -> None:
    make_policy(registry)
    current = add(registry, "2024-12-12")
    old = add(registry, "2023-09-05", "2024-12-11")
    assert registry.get_revision("NPPF", current).effective_to is None
    assert registry.get_revision("NPPF", old).status == RevisionStatus.SUPERSEDED
    assert registry.get_revision("NPPF", current).status == RevisionStatus.ACTIVE


def test_historical_insertion_ending_on_or_after_the_next_start_is_an_overlap(registry: PolicyRegistry) -> None:
    make_policy(registry)
    add(registry, "2024-12-12")
    with pytest.raises(RevisionOverlapError):
        add(registry, "2023-09-05", "2024-12-12", rid="rev_old")
    with pytest.raises(RevisionOverlapError):
        add(registry, "2023-09-05", None, rid="rev_old")


def test_a_failed_revision_gives_its_dates_back_to_the_revision_it_superseded(registry: PolicyRegistry) -> None:
    make_policy(registry)
    old = add(registry, "2024-12-12")
    new = registry.create_revision("NPPF", RevisionCreate(version_label="bad", effective_from="2026-01-01"))
    assert registry.get_revision("NPPF", old).effective_to == date(2025, 12, 31)
    registry.mark_failed("NPPF", new.revision.revision_id, "extraction_failed: not a PDF")
    restored = registry.get_revision("NPPF", old)
    assert restored.effective_to is None and restored.status == RevisionStatus.ACTIVE
    failed = registry.get_revision("NPPF", new.revision.revision_id)
    assert failed.status == RevisionStatus.FAILED and "not a PDF" in failed.error


def test_a_failed_revision_blocks_no_dates_and_can_be_deleted(registry: PolicyRegistry) -> None:
    make_policy(registry)
    add(registry, "2024-12-12")
    bad = registry.create_revision("NPPF", RevisionCreate(version_label="bad", effective_from="2026-01-01"))
    registry.mark_failed("NPPF", bad.revision.revision_id, "boom")
    add(registry, "2026-01-01", rid="rev_retry")
    registry.delete_revision("NPPF", bad.revision.revision_id)
    assert [r.revision_id for r in registry.list_revisions("NPPF")] == ["rev_retry", "rev_NPPF_2024_12"]


def test_deleting_the_latest_revision_reopens_the_one_it_superseded(registry: PolicyRegistry) -> None:
    make_policy(registry)
    old = add(registry, "2024-12-12")
    draft = add(registry, "2030-01-01", rid="rev_draft")
    registry.delete_revision("NPPF", draft)
    reopened = registry.get_revision("NPPF", old)
    assert reopened.effective_to is None and reopened.status == RevisionStatus.ACTIVE


def test_mark_ingested_records_counts_and_settles_status(registry: PolicyRegistry) -> None:
    make_policy(registry)
    rid = add(registry, "2024-12-12", ingest=False)
    done = registry.mark_ingested(
        "NPPF", rid, page_count=82, chunk_count=300, file_size_bytes=746000, extraction_method="text_layer"
    )
    assert (done.status, done.page_count, done.chunk_count) == (RevisionStatus.ACTIVE, 82, 300)
    assert done.ingested_at is not None


def test_unknown_policy_and_revision_raise_typed_errors(registry: PolicyRegistry) -> None:
    with pytest.raises(PolicyNotFoundError):
        registry.get_policy("INVALID")
    with pytest.raises(PolicyNotFoundError):
        registry.create_revision("INVALID", RevisionCreate(version_label="x", effective_from="2024-01-01"))
    make_policy(registry)
    with pytest.raises(RevisionNotFoundError):
        registry.get_revision("NPPF", "rev_missing")
    with pytest.raises(InvalidSourceError):
        registry.get_policy("not-a-slug")


def test_a_revision_id_is_unique_within_a_policy(registry: PolicyRegistry) -> None:
    make_policy(registry)
    add(registry, "2020-01-01", "2020-12-31", rid="rev_x")
    with pytest.raises(RevisionAlreadyExistsError):
        add(registry, "2022-01-01", rid="rev_x")


def test_update_policy_changes_metadata_only(registry: PolicyRegistry) -> None:
    make_policy(registry)
    updated = registry.update_policy("NPPF", PolicyUpdate(title="National Planning Policy Framework"))
    assert updated.title == "National Planning Policy Framework"
    assert registry.get_policy("NPPF").category == "national_policy"


def test_concurrent_overlapping_creations_never_both_succeed(redis_url: str, redis_client: redis.Redis) -> None:
    make_policy(PolicyRegistry(redis_client))
    for round_ in range(15):
        barrier = threading.Barrier(4)
        outcomes: list[str] = []

        def create(i: int, round_: int = round_, barrier=barrier, outcomes=outcomes) -> None:
            reg = PolicyRegistry(redis.Redis.from_url(redis_url, decode_responses=True))
            barrier.wait()
            try:
                reg.create_revision(
                    "NPPF",
                    RevisionCreate(
                        revision_id=f"r{round_}_{i}",
                        version_label="x",
                        effective_from=f"{2000 + round_}-03-0{i + 1}",
                        effective_to=f"{2000 + round_}-06-30",
                    ),
                )
                outcomes.append("ok")
            except RevisionOverlapError:
                outcomes.append("overlap")

        threads = [threading.Thread(target=create, args=(i,)) for i in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(outcomes) == ["ok", "overlap", "overlap", "overlap"], round_


def test_concurrent_successive_revisions_leave_a_consistent_chain(redis_url: str, redis_client: redis.Redis) -> None:
    """Open-ended revisions created at once, in whatever order they land: an earlier open-ended one
    arriving after a later one is an overlap; every accepted one is chained whole, none overlap."""
    make_policy(PolicyRegistry(redis_client))
    barrier = threading.Barrier(6)
    accepted: list[int] = []

    def create(year: int) -> None:
        reg = PolicyRegistry(redis.Redis.from_url(redis_url, decode_responses=True))
        barrier.wait()
        try:
            reg.create_revision("NPPF", RevisionCreate(version_label=str(year), effective_from=f"{year}-01-01"))
            accepted.append(year)
        except RevisionOverlapError:
            pass

    threads = [threading.Thread(target=create, args=(2020 + i,)) for i in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    revisions = sorted(PolicyRegistry(redis_client).list_revisions("NPPF"), key=lambda r: r.effective_from)
    assert sorted(r.effective_from.year for r in revisions) == sorted(accepted)
    assert max(accepted) == 2025, "the latest start can never overlap an earlier open-ended revision"
    for earlier, later in itertools.pairwise(revisions):
        assert earlier.effective_to is not None
        assert (later.effective_from - earlier.effective_to).days == 1
    assert revisions[-1].effective_to is None


def test_progress_is_recorded_but_never_resurrects_a_deleted_revision(
    registry: PolicyRegistry, redis_client: redis.Redis
) -> None:
    make_policy(registry)
    rid = add(registry, "2020-01-01", "2020-12-31", ingest=False)
    assert registry.set_progress("NPPF", rid, "embed", 42.5)
    stored = registry.get_revision("NPPF", rid)
    assert (stored.progress_phase, stored.progress_percent) == ("embed", 42.5)
    add(registry, "2021-01-01")
    registry.delete_revision("NPPF", rid)
    assert not registry.set_progress("NPPF", rid, "store", 90.0)
    assert not redis_client.exists(f"policy_revision:NPPF:{rid}")


def test_every_write_replaces_the_generation_and_a_failed_one_does_not(registry: PolicyRegistry) -> None:
    def first_revision(source: str) -> str:
        return registry.list_revisions(source)[-1].revision_id

    writes = [
        lambda: make_policy(registry),
        lambda: registry.update_policy("NPPF", PolicyUpdate(title="renamed")),
        lambda: add(registry, "2020-01-01", ingest=False),
        lambda: registry.mark_ingested(
            "NPPF", first_revision("NPPF"), page_count=1, chunk_count=1, file_size_bytes=1, extraction_method="ocr"
        ),
        lambda: add(registry, "2024-01-01", rid="later", ingest=False),
        lambda: registry.mark_failed("NPPF", "later", "a corrupt PDF"),
        lambda: registry.update_revision("NPPF", first_revision("NPPF"), RevisionUpdate(version_label="renamed")),
        lambda: registry.delete_revision("NPPF", "later"),
    ]
    tokens = [registry.generation()]
    for write in writes:
        write()
        tokens.append(registry.generation())
        assert registry.generation() == tokens[-1], "reading must not change the token"
    assert len(set(tokens)) == len(writes) + 1
    with pytest.raises(RevisionOverlapError):
        add(registry, "2019-06-01", "2020-06-01")
    with pytest.raises(PolicyAlreadyExistsError):
        make_policy(registry)
    assert registry.generation() == tokens[-1], "a refused write leaves the token alone"


def test_the_snapshot_is_reused_until_a_write_and_sees_it_at_once(registry: PolicyRegistry, redis_url: str) -> None:
    """Two registries over one Redis stand for two replicas: a write by one is in the other's next snapshot."""
    other = PolicyRegistry(redis.Redis.from_url(redis_url, decode_responses=True))
    make_policy(registry)
    first = add(registry, "2020-01-01")
    cached = other.snapshot()
    assert other.snapshot() is cached
    assert [r.revision_id for r in cached.revisions["NPPF"]] == [first]
    second = add(registry, "2024-01-01")
    fresh = other.snapshot()
    assert fresh is not cached and fresh.generation == registry.generation()
    assert [(r.revision_id, r.status) for r in fresh.revisions["NPPF"]] == [
        (second, RevisionStatus.ACTIVE),
        (first, RevisionStatus.SUPERSEDED),
    ]
    make_policy(registry, "LTN_1_20")
    assert other.snapshot().sources == ["LTN_1_20", "NPPF"] and other.snapshot().revisions["LTN_1_20"] == ()


def test_a_flushed_or_hand_edited_registry_is_not_served_from_an_old_snapshot(redis_client: redis.Redis) -> None:
    now = [0.0]
    registry = PolicyRegistry(redis_client, snapshot_max_age_s=30.0, clock=lambda: now[0])
    make_policy(registry)
    add(registry, "2020-01-01")
    assert registry.snapshot().sources == ["NPPF"]
    redis_client.flushdb()
    assert registry.snapshot().sources == [], "a flushed database gets a new token"
    make_policy(registry)
    rid = add(registry, "2020-01-01")
    before = registry.snapshot()
    redis_client.hset(revision_hash_key("NPPF", rid), "version_label", "edited by hand")
    assert registry.snapshot() is before
    redis_client.delete(GENERATION_KEY)  # what an operator does after editing by hand
    assert registry.snapshot().revisions["NPPF"][0].version_label == "edited by hand"
    redis_client.hset(revision_hash_key("NPPF", rid), "version_label", "edited again")
    now[0] = 29.0
    assert registry.snapshot().revisions["NPPF"][0].version_label == "edited by hand", "still young enough"
    now[0] = 30.0
    assert registry.snapshot().revisions["NPPF"][0].version_label == "edited again", "30 s old: reloaded"


def test_moving_the_newer_revision_later_or_deleting_it_leaves_no_day_without_a_revision(
    registry: PolicyRegistry, redis_client: redis.Redis
) -> None:
    """Issue 46: the older revision kept the end auto-supersession gave it, so the days in between resolved
    to nothing. Its end is recomputed in the edit's own transaction (one generation token for both)."""
    make_policy(registry)
    old = add(registry, "2023-09-05")
    new = add(registry, "2024-12-12")
    token = registry.generation()
    registry.update_revision("NPPF", new, RevisionUpdate(effective_from="2025-03-01"))
    assert registry.get_revision("NPPF", old).effective_to == date(2025, 2, 28)
    assert registry.get_effective_revision("NPPF", "2025-01-15").revision_id == old  # type: ignore[union-attr]
    assert registry.generation() != token
    assert redis_client.hget(revision_hash_key("NPPF", old), "effective_to_set") == "0"
    registry.delete_revision("NPPF", new)
    reopened = registry.get_revision("NPPF", old)
    assert (reopened.effective_to, reopened.status) == (None, RevisionStatus.ACTIVE)
    assert registry.get_effective_revision("NPPF", "2026-06-01").revision_id == old  # type: ignore[union-attr]


def test_a_hash_written_before_effective_to_set_reads_its_end_as_derived_when_a_revision_closed_it(
    registry: PolicyRegistry, redis_client: redis.Redis
) -> None:
    make_policy(registry)
    old = add(registry, "2023-09-05")
    new = add(registry, "2024-12-12")
    for rid, closer in ((old, new), (new, "")):
        redis_client.hdel(revision_hash_key("NPPF", rid), "effective_to_set")
        redis_client.hset(revision_hash_key("NPPF", rid), "superseded_by", closer)
    registry.update_revision("NPPF", new, RevisionUpdate(effective_from="2025-01-01"))
    assert registry.get_revision("NPPF", old).effective_to == date(2024, 12, 31)
