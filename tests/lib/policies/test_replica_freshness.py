"""Issue 23: after a write to policy chunks or dates through replica A answers, no search through A or B answers
from what was there before. Each write is made through A's stores; then A and B, both of which held every
revision in their corpus index, search at once (two threads), and each answers exactly as a replica started
after the write does (the oracle: nothing held, everything read from the stores now).
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import date

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from lib.composition import Stores
from lib.errors import KBError
from lib.models import Chunk
from lib.policies.ingest import store_chunks
from lib.policies.lifecycle import remove_revision, remove_revision_chunks, update_revision
from lib.policies.models import PolicyCreate, RevisionCreate, RevisionUpdate
from lib.policies.search import SearchResult, search_policy
from lib.policies.stores import PolicyStores
from tests.replicas import assert_same_result, replica_of

QUESTION = "cycle lanes on busy roads"
DAYS = [None, date(2021, 6, 1), date(2025, 6, 1)]
MODES = ["dense", "lexical", "hybrid"]
TEXTS = [
    ["Cycle lanes on busy roads must be segregated from motor traffic.", "Heritage assets are irreplaceable."],
    ["Busy roads need protected cycle lanes and safe junctions.", "Green belt boundaries change only exceptionally."],
    ["Design codes set out what good design means locally.", "Flood risk is assessed sequentially."],
]
_sources = itertools.count(1)


def write_chunks(policies: PolicyStores, source: str, revision_id: str, texts: list[str]) -> None:
    """Write a revision's chunks through the pipeline's last step (as an ingestion or a reindex ends)."""
    chunks = [
        Chunk(text=t, section_ref=f"Para {i + 1}", chapter="9", page_number=1, page_numbers=[1], chunk_index=i)
        for i, t in enumerate(texts)
    ]
    store_chunks(
        policies.registry,
        policies.vectors,
        source,
        revision_id,
        chunks,
        policies.embedder.embed_batch(texts),
        page_count=1,
        file_size_bytes=1,
        extraction_method="text_layer",
    )


def new_policy(policies: PolicyStores) -> str:
    """A policy of its own with two ingested revisions (2020 and 2024)."""
    source = f"FRESH_{next(_sources)}"
    policies.registry.create_policy(PolicyCreate(source=source, title=source, category="local_plan"))
    for rid, start, texts in [("rev_a", "2020-01-01", TEXTS[0]), ("rev_b", "2024-01-01", TEXTS[1])]:
        data = RevisionCreate(revision_id=rid, version_label=rid, effective_from=start)
        policies.registry.create_revision(source, data)
        write_chunks(policies, source, rid, texts)
    return source


def searches(source: str) -> list[Callable[[PolicyStores], SearchResult]]:
    return [
        lambda replica, day=day, mode=mode: search_policy(
            replica, QUESTION, effective_date=day, sources=[source], n_results=10, mode=mode
        )
        for day in DAYS
        for mode in MODES
    ]


def assert_as_fresh(source: str, a: PolicyStores, b: PolicyStores) -> None:
    """A and B, searching at once, answer every question as a replica started now does."""
    oracle = replica_of(a)
    with ThreadPoolExecutor(2) as pool:
        for ask in searches(source):
            answers = list(pool.map(ask, (a, b)))
            truth = ask(oracle)
            for answer in answers:
                assert_same_result(answer, truth)


@pytest.fixture
def replicas(stores: Stores) -> tuple[PolicyStores, PolicyStores]:
    return stores.policies, replica_of(stores.policies)


WRITES: dict[str, Callable[[PolicyStores, str], object]] = {
    "remove_policy_revision": lambda p, s: remove_revision_chunks(p.vectors, s, "rev_b"),
    "reindex": lambda p, s: write_chunks(p, s, "rev_b", TEXTS[2]),
    "delete_revision": lambda p, s: remove_revision(p, s, "rev_a"),
    "edit_dates": lambda p, s: update_revision(
        p.registry, p.vectors, s, "rev_b", RevisionUpdate(effective_from=date(2025, 7, 1))
    ),
    "edit_label": lambda p, s: update_revision(p.registry, p.vectors, s, "rev_a", RevisionUpdate(version_label="v2")),
}


@pytest.mark.parametrize("write", WRITES)
def test_no_replica_answers_from_before_a_write(replicas: tuple[PolicyStores, PolicyStores], write: str) -> None:
    a, b = replicas
    source = new_policy(a)
    assert_as_fresh(source, a, b)  # both now hold every revision of the policy
    assert any(index.key.startswith(f"{source}:") for index in b.vectors.cache.indexes())
    WRITES[write](a, source)
    assert_as_fresh(source, a, b)


def test_removed_chunks_are_gone_from_the_other_replica_at_once(replicas: tuple[PolicyStores, PolicyStores]) -> None:
    """The reported case: ``remove_policy_revision`` answered, the next dated search on a replica returned the
    removed chunks from its index (their stamp, count and ingestion time, had not moved)."""
    a, b = replicas
    source = new_policy(a)
    ask = searches(source)[-1]  # hybrid, as of 2025: rev_b in force
    assert {h.revision_id for h in ask(b).results} == {"rev_b"}
    assert remove_revision_chunks(a.vectors, source, "rev_b") == 2
    assert ask(b).results == [] and ask(a).results == []


Op = tuple[str, str, int]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["write", "remove_chunks", "edit_from", "delete"]),
            st.sampled_from(["rev_a", "rev_b"]),
            st.integers(0, len(TEXTS) - 1),
        ),
        min_size=1,
        max_size=5,
    )
)
def test_after_any_sequence_of_writes_both_replicas_answer_as_the_oracle(
    replicas: tuple[PolicyStores, PolicyStores], ops: list[Op]
) -> None:
    a, b = replicas
    source = new_policy(a)
    assert_as_fresh(source, a, b)
    for op, rid, n in ops:
        try:
            if op == "write":
                write_chunks(a, source, rid, TEXTS[n])
            elif op == "remove_chunks":
                remove_revision_chunks(a.vectors, source, rid)
            elif op == "edit_from":
                moved = RevisionUpdate(effective_from=date(2019 + 2 * n, 3, 1))
                update_revision(a.registry, a.vectors, source, rid, moved)
            else:
                remove_revision(a, source, rid)
        except KBError:
            continue  # refused (a revision gone, dates that overlap, the sole active one): nothing was written
        assert_as_fresh(source, a, b)
