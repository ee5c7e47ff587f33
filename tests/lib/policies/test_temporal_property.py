"""Property: on every day, the resolver, the search filter over chunks really stored in Chroma, and a
brute-force oracle agree on which revision was in force; and every hit of ``search_policy`` in every mode
(dense, lexical, hybrid) belongs to that revision.

Timelines are built through the real registry and lifecycle functions with random operations:
open-ended and bounded revisions, auto-supersession, historical insertions, overlaps (rejected),
revisions left ``processing`` with half their chunks written, failed ingestions, date edits after
ingestion, and deletions. Chunks are written exactly as the pipeline writes them (``store_chunks``).
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import pytest
import redis
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from lib.composition import Stores
from lib.errors import CannotDeleteSoleRevisionError, RevisionAlreadyExistsError, RevisionOverlapError
from lib.models import Chunk
from lib.policies.chunks import chunk_metadata, revision_filter
from lib.policies.ingest import store_chunks
from lib.policies.lifecycle import create_revision, fail_revision, remove_revision, update_revision
from lib.policies.models import PolicyCreate, Revision, RevisionCreate, RevisionStatus, RevisionUpdate
from lib.policies.search import search_policy, searchable_revisions
from lib.retrieval import SearchMode
from lib.stores.embeddings import Embedder
from tests.conftest import isolated_stores

BASE = date(2024, 1, 1)
SOURCES = ["NPPF", "LTN_1_20"]
EXPECTED = (RevisionOverlapError, CannotDeleteSoleRevisionError, RevisionAlreadyExistsError)
QUERY = "highways text"
"""Every stored chunk holds "text", so the lexical leg matches all chunks it is allowed to see."""


def oracle(revisions: list[Revision], day: date) -> set[str]:
    """Ten lines, no cleverness: which resolvable revisions cover the day."""
    hits = set()
    for rev in revisions:
        if rev.status not in (RevisionStatus.ACTIVE, RevisionStatus.SUPERSEDED):
            continue
        if rev.effective_from <= day and (rev.effective_to is None or day <= rev.effective_to):
            hits.add(rev.revision_id)
    assert len(hits) <= 1, f"two revisions in force on {day}: {hits}"
    return hits


day_offsets = st.integers(min_value=0, max_value=90)
operations = st.lists(
    st.one_of(
        st.tuples(st.just("create"), st.sampled_from(SOURCES), day_offsets, st.one_of(st.none(), st.integers(0, 30))),
        st.tuples(st.just("ingest"), st.integers(0, 5)),
        st.tuples(st.just("half_ingest"), st.integers(0, 5)),
        st.tuples(st.just("fail"), st.integers(0, 5)),
        st.tuples(st.just("edit_to"), st.integers(0, 5), st.one_of(st.none(), day_offsets)),
        st.tuples(st.just("edit_from"), st.integers(0, 5), day_offsets),
        st.tuples(st.just("delete"), st.integers(0, 5)),
    ),
    min_size=1,
    max_size=14,
)


@pytest.fixture(scope="module")
def world(redis_url: str, chroma_dir: Path, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder):
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    stores = isolated_stores(redis_url, tmp_path_factory.mktemp("prop"), chroma_dir, embedder)
    vector = embedder.embed("Development should only be refused on highways grounds if the impact is severe.")
    return client, stores, vector


def chunks_for(rev: Revision, count: int = 2) -> list[Chunk]:
    return [
        Chunk(
            text=f"{rev.revision_id} text {i}",
            section_ref=f"Para {i}",
            chapter="1. Intro",
            page_number=1,
            page_numbers=[1],
            chunk_index=i,
        )
        for i in range(count)
    ]


def apply(stores: Stores, vector: list[float], ops: list[tuple]) -> None:
    created: list[tuple[str, str]] = []
    for op in ops:
        kind = op[0]
        try:
            if kind == "create":
                _, source, start, length = op
                frm = BASE + timedelta(days=start)
                to = None if length is None else frm + timedelta(days=length)
                rid = f"r{len(created)}"
                create_revision(
                    stores.policies.registry,
                    stores.policies.vectors,
                    source,
                    RevisionCreate(revision_id=rid, version_label=rid, effective_from=frm, effective_to=to),
                )
                created.append((source, rid))
                continue
            if not created:
                continue
            source, rid = created[op[1] % len(created)]
            try:
                rev = stores.policies.registry.get_revision(source, rid)
            except Exception:
                continue  # deleted earlier
            if kind == "ingest" and rev.status == RevisionStatus.PROCESSING:
                chunks = chunks_for(rev)
                policies = stores.policies
                store_chunks(
                    policies.registry,
                    policies.vectors,
                    source,
                    rid,
                    chunks,
                    [vector] * len(chunks),
                    page_count=1,
                    file_size_bytes=1,
                    extraction_method="text_layer",
                )
            elif kind == "half_ingest" and rev.status == RevisionStatus.PROCESSING:
                chunk = chunks_for(rev, 1)[0]
                policy = stores.policies.registry.get_policy(source)
                stores.policies.vectors.upsert(
                    [f"{source}__{rid}__half"], [chunk.text], [vector], [chunk_metadata(chunk, policy, rev)]
                )
            elif kind == "fail" and rev.status == RevisionStatus.PROCESSING:
                fail_revision(stores.policies.registry, stores.policies.vectors, source, rid, "extraction_failed")
            elif kind == "edit_to":
                to = None if op[2] is None else BASE + timedelta(days=op[2])
                if to is None or to >= rev.effective_from:
                    update_revision(
                        stores.policies.registry, stores.policies.vectors, source, rid, RevisionUpdate(effective_to=to)
                    )
            elif kind == "edit_from":
                frm = BASE + timedelta(days=op[2])
                if rev.effective_to is None or frm <= rev.effective_to:
                    update_revision(
                        stores.policies.registry,
                        stores.policies.vectors,
                        source,
                        rid,
                        RevisionUpdate(effective_from=frm),
                    )
            elif kind == "delete":
                remove_revision(stores.policies, source, rid)
        except EXPECTED:
            pass


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=operations)
@example(ops=[("create", "NPPF", 0, None), ("ingest", 0), ("create", "NPPF", 10, None), ("fail", 1)])
@example(ops=[("create", "NPPF", 0, None), ("ingest", 0), ("create", "NPPF", 10, None), ("ingest", 1), ("delete", 1)])
@example(ops=[("create", "NPPF", 5, None), ("ingest", 0), ("edit_from", 0, 1), ("edit_to", 0, 9), ("edit_to", 0, None)])
def test_resolver_search_filter_and_oracle_agree_on_every_day(world, ops: list[tuple]) -> None:
    client, stores, vector = world
    client.flushdb()
    stores.policies.vectors.collection.delete(where={"source": {"$in": SOURCES}})
    for source in SOURCES:
        stores.policies.registry.create_policy(PolicyCreate(source=source, title=source, category="national_policy"))
    apply(stores, vector, ops)

    revisions = {s: stores.policies.registry.list_revisions(s) for s in SOURCES}
    days = {BASE - timedelta(days=1), BASE + timedelta(days=200)}
    for revs in revisions.values():
        for rev in revs:
            for edge in (rev.effective_from, rev.effective_to):
                if edge is not None:
                    days.update({edge - timedelta(days=1), edge, edge + timedelta(days=1)})

    for day in sorted(days):
        for source in SOURCES:
            expected = oracle(revisions[source], day)
            resolved = stores.policies.resolver.resolve_for_policy(source, day).revision
            assert ({resolved.revision_id} if resolved else set()) == expected, (source, day)

            allowed = searchable_revisions(stores.policies.registry, [source], day)
            found: set[str] = set()
            if allowed:
                stored = stores.policies.vectors.collection.get(
                    where=revision_filter(sorted(allowed)), include=["metadatas"]
                )
                found = {m["revision_id"] for m in stored["metadatas"]}
            assert found == expected, ("search filter", source, day)

            # The spec's own date-range filter over chunk metadata agrees too once restricted to
            # resolvable revisions: proof that date edits and supersessions reached the chunks.
            di = day.year * 10000 + day.month * 100 + day.day
            dated = stores.policies.vectors.collection.get(
                where={"$and": [{"source": source}, {"effective_from": {"$lte": di}}, {"effective_to": {"$gte": di}}]},
                include=["metadatas"],
            )
            resolvable = {r.revision_id for r in revisions[source] if r.resolvable}
            assert {m["revision_id"] for m in dated["metadatas"]} & resolvable == expected, ("chunk dates", source, day)

            for mode in SearchMode:
                hits = search_policy(
                    stores.policies, QUERY, sources=[source], effective_date=day, n_results=50, mode=mode
                ).results
                assert {h.revision_id for h in hits} == expected, (mode, source, day)

    resolvable = {(s, r.revision_id) for s in SOURCES for r in revisions[s] if r.resolvable}
    for mode in SearchMode:
        undated = search_policy(stores.policies, QUERY, n_results=50, mode=mode).results
        assert {(h.source, h.revision_id) for h in undated} == resolvable, mode
