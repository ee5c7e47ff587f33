"""The fast search path (``PolicyVectorStore.search``: exact search over the cached chunks of the allowed
revisions) against Chroma's own filtered query, on the real NPPF and on stores rewritten while another
replica holds them in its cache; and the ONNX query encoder against torch."""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from datetime import date
from pathlib import Path

import numpy as np
import pytest

from lib.composition import Stores
from lib.config import load_settings
from lib.models import Chunk
from lib.policies.chunks import PolicyVectorStore, revision_filter
from lib.policies.ingest import ingest_revision, store_chunks
from lib.policies.lifecycle import register_revision, remove_revision
from lib.policies.models import PolicyCreate, RevisionCreate, SearchHit
from lib.policies.search import search_policy, searchable_revisions
from lib.policies.stores import PolicyStores
from lib.retrieval import IndexSnapshots
from lib.stores.chroma import open_chroma
from lib.stores.embeddings import Embedder
from lib.stores.onnx_encoder import ONNX_TOLERANCE, load_onnx_encoder, onnx_file_name
from mcp_service.policy_kb import warm_up
from tests.flows.policy_pdfs import policy_pdf_bytes
from tests.mcp_service.conftest import Service
from tests.polling import eventually
from tests.replicas import assert_same_result, replica_of

QUERIES = [
    "When should development be refused on highways grounds?",
    "five year housing land supply",
    "green belt boundaries exceptional circumstances",
    "design codes and beauty",
    "flood risk sequential test",
    "biodiversity net gain",
    "main town centre uses",
    "harm to designated heritage assets",
    "cycle parking and walking routes",
    "viability assessment at plan making",
    "renewable energy in the green belt",
    "affordable housing on major developments",
]
DAYS = [None, date(2025, 6, 1), date(2099, 6, 1)]


def assert_same_ranking(fast: list[tuple[str, float]], other: list[tuple[str, float]]) -> None:
    """Same ids in the same order with the same distances, except that chunks at exactly the same distance
    (the same text in two revisions) may come in either order, and a tie cut by ``n_results`` may keep
    either of them."""
    assert len(fast) == len(other)
    assert np.allclose([d for _, d in fast], [d for _, d in other], atol=1e-5)

    def groups(ranked: list[tuple[str, float]]) -> list[set[str]]:
        out: list[tuple[float, set[str]]] = []
        for cid, distance in ranked:
            if out and abs(out[-1][0] - distance) <= 1e-6:
                out[-1][1].add(cid)
            else:
                out.append((distance, {cid}))
        return [ids for _, ids in out]

    mine, theirs = groups(fast), groups(other)
    assert mine[:-1] == theirs[:-1] and len(mine[-1]) == len(theirs[-1])


def ranked(chunks: list) -> list[tuple[str, float]]:
    return [(c.id, c.distance) for c in chunks]


@pytest.fixture(scope="module")
def query_vectors(nppf_service: Service) -> np.ndarray:
    return nppf_service.stores.policies.embedder.embed_queries(QUERIES)


@pytest.mark.parametrize("day", DAYS, ids=str)
@pytest.mark.parametrize("n_results", [1, 5, 10])
def test_fast_search_equals_chromas_filtered_query_on_the_real_nppf(
    nppf_service: Service, query_vectors: np.ndarray, day: date | None, n_results: int
) -> None:
    policies = nppf_service.stores.policies
    revisions = searchable_revisions(policies.registry, None, day)
    exact_before = policies.vectors.exact_searches
    for vector in query_vectors:
        fast = policies.vectors.search(vector, n_results, revisions)
        chroma = policies.vectors.query(vector, n_results, revision_filter(sorted(revisions)))
        assert_same_ranking(ranked(fast), ranked(chroma))
        by_id = {c.id: c for c in chroma}
        assert all(c.text == by_id[c.id].text and c.metadata == by_id[c.id].metadata for c in fast if c.id in by_id)
    assert policies.vectors.exact_searches - exact_before == len(QUERIES), "the cache did not answer"


def test_deep_results_are_the_exact_neighbours_where_hnsw_is_approximate(
    nppf_service: Service, query_vectors: np.ndarray
) -> None:
    """Beyond the top ten Chroma's HNSW may miss a neighbour; the fast path never does."""
    policies = nppf_service.stores.policies
    stored = policies.vectors.collection.get(include=["embeddings", "metadatas"])
    matrix = np.asarray(stored["embeddings"], dtype=np.float32)
    keys = np.array([m["revision_ref"] for m in stored["metadatas"] or []])
    for day in DAYS:
        revisions = searchable_revisions(policies.registry, None, day)
        allowed = np.isin(keys, list(revisions))
        for vector in query_vectors:
            distances = ((matrix - vector) ** 2).sum(axis=1)
            distances[~allowed] = np.inf
            truth = [(stored["ids"][i], float(distances[i])) for i in np.argsort(distances, kind="stable")[:50]]
            fast = policies.vectors.search(vector, 50, revisions)
            assert_same_ranking(ranked(fast), truth)
            hnsw = policies.vectors.query(vector, 50, revision_filter(sorted(revisions)))
            assert all((f.distance or 0.0) <= (h.distance or 0.0) + 1e-6 for f, h in zip(fast, hnsw, strict=True))


@pytest.fixture
def two_revisions(stores: Stores) -> PolicyStores:
    policies = stores.policies
    policies.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    for rid, start, edition in [("rev_a", "2020-01-01", "first"), ("rev_b", "2024-01-01", "second")]:
        data = RevisionCreate(revision_id=rid, version_label=rid, effective_from=start)
        register_revision(policies, "NPPF", data, policy_pdf_bytes(edition=edition))
        ingest_revision(policies, "NPPF", rid)
    return policies


def test_a_revision_rewritten_by_another_replica_is_reloaded_on_the_next_search(two_revisions: PolicyStores) -> None:
    """Replica A holds both revisions in its cache; replica B rewrites rev_b's chunks through the pipeline
    (as a reindex does). A's next search answers from the new chunks, exactly as Chroma's query does."""
    policies = two_revisions
    replica = replica_of(policies)
    question = "cycle lanes on busy roads"
    first = search_policy(replica, question, n_results=20)
    assert_same_result(first, search_policy(policies, question, n_results=20))
    assert len(replica.vectors.cache) == 2
    assert search_policy(replica, question, n_results=20) == first and len(replica.vectors.answers) == 2  # both legs
    texts = ["Cycle lanes on busy roads must be segregated from motor traffic.", "Heritage assets are irreplaceable."]
    chunks = [
        Chunk(text=t, section_ref=f"Para {i + 1}", chapter="9", page_number=1, page_numbers=[1], chunk_index=i)
        for i, t in enumerate(texts)
    ]
    store_chunks(
        policies.registry,
        policies.vectors,
        "NPPF",
        "rev_b",
        chunks,
        policies.embedder.embed_batch(texts),
        page_count=1,
        file_size_bytes=1,
        extraction_method="text_layer",
    )
    again = search_policy(replica, question, n_results=20)  # the very question asked before the rewrite
    assert again != first and {h.text for h in again.results if h.revision_id == "rev_b"} <= set(texts)
    assert_same_result(again, search_policy(policies, question, n_results=20))
    after = search_policy(replica, question, effective_date="2025-01-01", n_results=5)
    assert [h.text for h in after.results] == texts
    assert_same_result(after, search_policy(policies, question, effective_date="2025-01-01", n_results=5))
    revisions = searchable_revisions(replica.registry, None, None)
    vector = replica.embedder.embed_queries([question])[0]
    chroma = replica.vectors.query(vector, 20, revision_filter(sorted(revisions)))
    assert_same_ranking(ranked(replica.vectors.search(vector, 20, revisions)), ranked(chroma))


def test_a_revision_rewritten_by_another_replica_is_seen_by_the_lexical_leg_on_the_next_query(
    two_revisions: PolicyStores,
) -> None:
    """Replica A has indexed both revisions' words; B rewrites rev_b through the pipeline. A's very next
    lexical search finds the new words (and only rev_b's new chunks), and ranks as B does."""
    policies = two_revisions
    replica = replica_of(policies)
    question = "segregated cycle track TR6"
    before = search_policy(replica, question, n_results=20, mode="lexical")
    assert not any("TR6" in h.text for h in before.results)
    texts = ["Policy TR6: a segregated cycle track is required on busy roads.", "Heritage assets are irreplaceable."]
    chunks = [
        Chunk(text=t, section_ref=f"Para {i + 1}", chapter="9", page_number=1, page_numbers=[1], chunk_index=i)
        for i, t in enumerate(texts)
    ]
    store_chunks(
        policies.registry,
        policies.vectors,
        "NPPF",
        "rev_b",
        chunks,
        policies.embedder.embed_batch(texts),
        page_count=1,
        file_size_bytes=1,
        extraction_method="text_layer",
    )
    after = search_policy(replica, question, n_results=20, mode="lexical")
    assert (after.results[0].text, after.results[0].revision_id) == (texts[0], "rev_b")
    assert {h.text for h in after.results if h.revision_id == "rev_b"} == {texts[0]}
    assert_same_result(after, search_policy(policies, question, n_results=20, mode="lexical"))
    hybrid = search_policy(replica, question, effective_date="2025-01-01", n_results=5)
    assert hybrid.results[0].text == texts[0] and hybrid.results[0].lexical_score is not None


def test_a_removed_revision_is_never_returned_by_another_replica(two_revisions: PolicyStores) -> None:
    policies = two_revisions
    replica = replica_of(policies)
    question = "design vision"
    assert {h.revision_id for h in search_policy(replica, question, n_results=20).results} == {"rev_a", "rev_b"}
    remove_revision(policies, "NPPF", "rev_a")
    assert {h.revision_id for h in search_policy(replica, question, n_results=20).results} == {"rev_b"}
    assert search_policy(replica, question, effective_date="2021-01-01").results == []


def test_a_replica_started_again_answers_from_its_snapshots_then_sees_a_hand_edit_once_checked(
    two_revisions: PolicyStores, tmp_path: Path
) -> None:
    """Real Chroma and Redis. A replica loads both revisions from Chroma and writes their snapshots. A chunk is
    edited in Chroma by hand (the stamp unchanged) while no replica runs. The next replica over the same
    snapshots answers at once from them, without reading Chroma, checks them in the background, and then answers
    from what Chroma holds."""
    policies = two_revisions
    snapshots = tmp_path / "snapshots"
    question = "design vision"
    before = search_policy(replica_of(policies, snapshots), question, n_results=1).results[0]
    assert len(list(snapshots.glob("*.npz"))) == 2
    policies.vectors.collection.update(ids=[before.chunk_id], metadatas=[{"section_ref": "Para 999"}])

    again = replica_of(policies, snapshots)
    loader = again.vectors.loader
    loaded: list[str] = []
    read_from_chroma, check, checks_may_run = loader._load, loader._verify, threading.Event()
    loader._load = lambda key, stamp: loaded.append(key) or read_from_chroma(key, stamp)  # type: ignore[method-assign]
    loader._verify = lambda index: checks_may_run.wait(30) and check is not None and check(index)
    assert search_policy(again, question, n_results=1).results[0] == before and loaded == [], "from the snapshots"
    assert len(loader._due) == 2, "both queued for a check at once"
    checks_may_run.set()
    edited = before.model_copy(update={"section_ref": "Para 999"})
    eventually(lambda: search_policy(again, question, n_results=1).results[0] == edited)
    assert loaded == [f"NPPF:{before.revision_id}"], "the check found the edit: that revision alone read again"
    assert search_policy(again, question, n_results=1) == search_policy(replica_of(policies), question, n_results=1)


def test_a_replicas_warm_pass_deletes_the_snapshot_of_a_revision_removed_elsewhere(
    two_revisions: PolicyStores, tmp_path: Path
) -> None:
    """The service's warm-up pass (run again by the keeper) keeps the snapshots of the revisions the registry
    holds and deletes the others: a revision removed by another process leaves no file behind."""
    policies = two_revisions
    snapshots = tmp_path / "snapshots"
    replica = replica_of(policies, snapshots)
    assert {h.revision_id for h in search_policy(replica, "design vision", n_results=20).results} == {"rev_a", "rev_b"}
    assert len(list(snapshots.glob("*.npz"))) == 2
    remove_revision(policies, "NPPF", "rev_a")
    try:
        warm_up(replica)
    finally:
        replica.vectors.loader.stop()
    assert [p.name for p in snapshots.glob("*.npz")] == [IndexSnapshots(snapshots).path("NPPF:rev_b").name]
    assert {h.revision_id for h in search_policy(replica, "design vision", n_results=20).results} == {"rev_b"}


class Clock:
    """A monotonic clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def aged_search(policies: PolicyStores) -> tuple[Clock, PolicyVectorStore, Callable[[], SearchHit]]:
    """A block cache on a clock the test moves, and the top hit of one dated search through it."""
    clock = Clock()
    store = PolicyVectorStore(open_chroma(policies.settings.chroma), policies.vectors.collection.name, clock=clock)
    aged = dataclasses.replace(policies, vectors=store)

    def top() -> SearchHit:
        return search_policy(aged, "design vision", effective_date="2025-01-01", n_results=1).results[0]

    return clock, store, top


def test_a_chunk_changed_behind_the_pipeline_is_served_once_its_aged_block_is_checked(
    two_revisions: PolicyStores,
) -> None:
    """A chunk's metadata edited directly in Chroma (not through ingest, so the registry stamp stays): the cached
    block serves what it loaded until it is old enough to be checked; the check, in the background, finds the
    change, and the reloaded block serves what Chroma holds. No search ever waits for the check."""
    policies = two_revisions
    clock, store, top = aged_search(policies)

    check, checks_may_run = store.loader._verify, threading.Event()
    store.loader._verify = lambda index: checks_may_run.wait(30) and check is not None and check(index)
    before = top()
    policies.vectors.collection.update(ids=[before.chunk_id], metadatas=[{"section_ref": "Para 999"}])
    clock.now += 20.0
    assert top() == before and store.loader.refreshes == 0, "young: served as loaded, not checked"
    clock.now += 10.0
    assert top() == before, "old: served as loaded while the check runs"
    checks_may_run.set()
    after = before.model_copy(update={"section_ref": "Para 999"})
    eventually(lambda: top() == after)
    assert store.loader.loads == 1 and store.fallback_searches == 0, "never reloaded on a search's path"


def test_a_refresh_keeps_a_block_chroma_still_holds_and_reloads_one_changed_behind_the_pipeline(
    two_revisions: PolicyStores,
) -> None:
    """Refreshing ahead of expiry asks Chroma for the block's ids, texts and metadata (not its vectors): the
    same rows keep the block (its lexical index, its remembered answers); a text rewritten in Chroma gets a
    new block with the new text, indexed before it is served."""
    policies = two_revisions
    clock, store, top = aged_search(policies)

    def refreshed(count: int) -> bool:
        return store.loader.refreshes == count and not any(lock.locked() for lock in store.loader._key_locks.values())

    before = top()
    (held,) = store.cache.indexes()
    clock.now += 25.0  # past three quarters of the 30 s age
    assert top() == before
    eventually(lambda: refreshed(1))
    assert store.cache.indexes() == [held] and store.loader.loads == 1, "checked, kept, not loaded again"

    vector = policies.vectors.collection.get(ids=[before.chunk_id], include=["embeddings"])["embeddings"]
    policies.vectors.collection.update(
        ids=[before.chunk_id], documents=["design vision rewritten behind the pipeline"], embeddings=vector
    )
    check, checks_may_run = store.loader._verify, threading.Event()
    store.loader._verify = lambda index: checks_may_run.wait(30) and check is not None and check(index)
    clock.now += 25.0  # the kept block's age started again at the check
    assert top() == before, "served from the kept block while it is checked again"
    checks_may_run.set()
    eventually(lambda: refreshed(2))
    (reloaded,) = store.cache.indexes()
    assert reloaded.serial != held.serial and "lexical" in vars(reloaded)
    assert "rewritten behind the pipeline" in top().text


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_with_no_cache_budget_every_search_goes_to_chroma_with_the_same_results(
    two_revisions: PolicyStores, mode: str
) -> None:
    """The fallback ranks like the blocks in every mode: the lexical leg indexes the texts Chroma returns
    for the allowed revisions, per revision, with IDF over exactly those."""
    policies = two_revisions
    store = PolicyVectorStore(open_chroma(policies.settings.chroma), policies.vectors.collection.name, cache_bytes=0)
    uncached = dataclasses.replace(policies, vectors=store)
    for day in (None, "2021-01-01", "2025-01-01", "2019-01-01"):
        fallback = search_policy(uncached, "design vision 2", effective_date=day, mode=mode)
        assert_same_result(fallback, search_policy(policies, "design vision 2", effective_date=day, mode=mode))
        assert day != "2025-01-01" or fallback.results
    assert uncached.vectors.exact_searches == 0 and len(uncached.vectors.cache) == 0


def test_a_search_over_more_than_the_budget_asks_chroma_and_keeps_what_fits(two_revisions: PolicyStores) -> None:
    policies = two_revisions
    revisions = policies.registry.list_revisions("NPPF")
    search_policy(policies, "design vision")  # holds every revision's slice, to size the budget by
    held = max(i.nbytes for i in policies.vectors.cache.indexes())
    row_bytes = policies.vectors.cache.row_bytes  # what the budget reckons a chunk costs
    budget = max(held, max(r.chunk_count for r in revisions) * row_bytes)  # the largest slice fits, alone
    assert sum(r.chunk_count for r in revisions) * row_bytes > budget, "both do not"
    chroma = open_chroma(policies.settings.chroma)
    store = PolicyVectorStore(chroma, policies.vectors.collection.name, cache_bytes=budget)
    small = dataclasses.replace(policies, vectors=store)
    dated = search_policy(small, "design vision", effective_date="2025-01-01")
    undated = search_policy(small, "design vision")
    assert (store.exact_searches, store.fallback_searches, len(store.cache)) == (2, 2, 1)  # two legs each
    assert_same_result(dated, search_policy(policies, "design vision", effective_date="2025-01-01"))
    assert_same_result(undated, search_policy(policies, "design vision"))


def test_query_vectors_are_remembered_by_text_and_equal_freshly_computed_ones(embedder: Embedder) -> None:
    remembering = Embedder(query_cache_size=2, encoder=embedder.encoder, int8_dir=embedder.int8_dir)
    first = remembering.embed_queries(["green belt", "flood risk", "green belt"])
    assert np.array_equal(first[0], first[2])
    assert np.array_equal(first, np.asarray(embedder.embed_batch(["green belt", "flood risk", "green belt"])))
    again = remembering.embed_queries(["heritage", "green belt"])  # "flood risk" is the one forgotten
    assert np.array_equal(again[1], first[0]) and again.flags.writeable


def test_onnx_query_vectors_match_torch_within_tolerance() -> None:
    models = load_settings().embeddings.model_cache_dir
    assert models is not None
    encoder = load_onnx_encoder(models, export=True)  # made once per machine (MODEL_CACHE_DIR)
    assert encoder is not None and (models / onnx_file_name()).is_file()
    texts = [*QUERIES, "a", "Planning policies and decisions should promote an effective use of land " * 40]
    reference = np.asarray(Embedder().embed_batch(texts), dtype=np.float32)
    batch = encoder.encode(texts)
    singles = np.vstack([encoder.encode([t]) for t in texts])
    assert float(np.abs(batch - reference).max()) <= ONNX_TOLERANCE
    assert float(np.abs(singles - reference).max()) <= ONNX_TOLERANCE
    assert np.allclose(np.linalg.norm(batch, axis=1), 1.0, atol=1e-6)
    assert load_onnx_encoder(models) is encoder  # exported once, loaded once per process
