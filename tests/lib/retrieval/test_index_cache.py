"""The corpus index cache (byte budget, no expiry by age, stamps), the exact search over several slices, and the
audit's check of held slices against the store."""

from __future__ import annotations

import numpy as np

from lib.policies.chunks import policy_lexical_text
from lib.retrieval.corpus_index import CorpusIndex, index_digest
from lib.retrieval.index_cache import IndexCache
from lib.retrieval.slice_search import answer_key, exact_search, lexical_search


def block(key: str, rows: int, stamp: tuple[int, str] = (0, ""), seed: int = 0) -> CorpusIndex:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(rows, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ids = [f"{key}__{i:03d}" for i in range(rows)]
    return CorpusIndex.from_embeddings(
        key, stamp, ids, vectors, [f"text {i}" for i in range(rows)], [{"chunk_index": i} for i in range(rows)]
    )


def test_the_least_recently_used_block_makes_room_within_the_byte_budget() -> None:
    a, b, c = block("a", 10), block("b", 10), block("c", 10)
    cache = IndexCache(a.nbytes + b.nbytes + c.nbytes // 2)
    assert cache.put(a) and cache.put(b)
    assert cache.get("a", a.stamp) is a  # now "b" is the least recently used
    assert cache.put(c)
    assert cache.get("b", b.stamp) is None and cache.get("a", a.stamp) is a and cache.get("c", c.stamp) is c
    assert len(cache) == 2 and cache.nbytes == a.nbytes + c.nbytes


def test_a_block_larger_than_the_whole_budget_is_refused_and_evicts_nothing() -> None:
    small, big = block("small", 2), block("big", 50)
    cache = IndexCache(big.nbytes - 1)
    assert cache.put(small) and not cache.put(big)
    assert cache.get("small", small.stamp) is small and len(cache) == 1


def test_a_block_is_served_only_under_the_stamp_it_was_loaded_with() -> None:
    cache = IndexCache()
    loaded = block("NPPF:rev", 3, stamp=(3, "2026-01-01T00:00:00+00:00"))
    cache.put(loaded)
    assert cache.get("NPPF:rev", (3, "2026-01-01T00:00:00+00:00")) is loaded
    assert cache.get("NPPF:rev", (3, "2026-02-01T00:00:00+00:00")) is None
    assert cache.get("NPPF:rev", (4, "2026-01-01T00:00:00+00:00")) is None
    replaced = block("NPPF:rev", 4, stamp=(4, "2026-02-01T00:00:00+00:00"))
    cache.put(replaced)
    assert cache.get("NPPF:rev", replaced.stamp) is replaced and len(cache) == 1


def test_a_block_is_kept_at_any_age_under_its_stamp_and_only_the_byte_budget_drops_it() -> None:
    """Ageing is the loader's: it checks old blocks in the background (``test_index_loader``). The cache itself
    never drops a block for its age, so no search finds one gone because it grew old."""
    cache = IndexCache(max_age_s=30.0)
    loaded = block("a", 3)
    cache.put(loaded)
    assert cache.get("a", loaded.stamp) is loaded and len(cache) == 1


def test_exact_search_returns_the_true_nearest_rows_in_order_over_every_block() -> None:
    blocks = [block(f"rev{i}", rows, seed=i) for i, rows in enumerate([40, 0, 7, 300])]
    rows = np.vstack([b.embedding(r) for b in blocks for r in range(len(b.ids))])
    ids = [i for b in blocks for i in b.ids]
    rng = np.random.default_rng(99)
    for _ in range(20):
        query = rng.normal(size=384).astype(np.float32)
        query /= np.linalg.norm(query)
        distances = ((rows - query) ** 2).sum(axis=1)
        truth = [ids[i] for i in np.argsort(distances, kind="stable")[:10]]
        found = exact_search(query, 10, blocks)
        assert [c.id for c in found] == truth
        assert np.allclose([c.distance or 0.0 for c in found], np.sort(distances)[:10], atol=1e-6)
    assert len(exact_search(query, 500, blocks)) == len(ids)


def test_exact_search_orders_chunks_at_the_same_distance_by_id() -> None:
    twin = block("b", 5, seed=3)
    original = block("a", 5, seed=3)  # the same vectors: every row has a twin at the same distance
    found = exact_search(original.embedding(2), 4, [twin, original])
    assert [c.id for c in found] == ["a__002", "b__002", *sorted(c.id for c in found[2:])]
    assert found[0].distance == found[1].distance == 0.0
    assert exact_search(original.embedding(0), 3, []) == []


def test_answers_are_filed_under_the_very_blocks_searched_so_a_reloaded_block_gets_new_ones() -> None:
    query = block("q", 1).embedding(0)
    first, again = block("a", 3, stamp=(3, "t")), block("a", 3, stamp=(3, "t"))  # the same revision loaded twice
    assert answer_key(query, 10, [first]) == answer_key(query.copy(), 10, [first])
    assert answer_key(query, 10, [first]) != answer_key(query, 10, [again])
    assert answer_key(query, 10, [first]) != answer_key(query, 5, [first])


def test_stale_indexes_are_the_served_ones_whose_ids_or_texts_differ_from_the_store() -> None:
    same, rewritten, shrunk, old = block("same", 3), block("rewritten", 3), block("shrunk", 3), block("old", 3)
    cache = IndexCache(10**8)
    for b in (same, rewritten, shrunk, old):
        cache.put(b)
    stored = {b.key: (list(b.ids)[::-1], list(b.texts)[::-1]) for b in (same, rewritten, shrunk, old)}  # any order
    stored["rewritten"][1][0] = "rewritten behind the pipeline's back"
    stored["shrunk"] = (shrunk.ids[:2], shrunk.texts[:2])
    stored["old"] = ([], [])
    served = {b.key: b.stamp for b in (same, rewritten, shrunk)} | {"old": (9, "a newer ingestion")}
    stale = cache.stale(served, lambda key: stored[key])
    assert [(s.block.key, s.stored_rows) for s in stale] == [("rewritten", 3), ("shrunk", 2)]
    assert "other texts" in stale[0].detail and "1 gone, 0 new" in stale[1].detail
    assert cache.evict_stale(stale) == 2
    assert {b.key for b in cache.indexes()} == {"same", "old"}
    assert index_digest(same.ids, same.texts) == same.digest == index_digest(*stored["same"])


def test_evicting_a_stale_block_keeps_a_newer_load_of_the_same_key() -> None:
    stale_load, fresh_load = block("a", 2), block("a", 2, seed=1)
    cache = IndexCache(10**8)
    cache.put(stale_load)
    found = cache.stale({"a": stale_load.stamp}, lambda key: (["x"], ["y"]))
    cache.put(fresh_load)  # another thread reloaded it meanwhile
    assert cache.evict_stale(found) == 0 and cache.get("a", fresh_load.stamp) is fresh_load


def test_a_heading_rewritten_in_the_store_makes_a_block_stale_as_a_text_does() -> None:
    """The lexical twin indexes each chunk under its citation and chapter, so the digest covers them."""
    meta = {"section_ref": "Para 116", "chapter": "9. Promoting sustainable transport"}
    text = "116. Development should..."
    held = CorpusIndex.from_texts("a", (1, "t"), ["a__000"], [text], [meta], policy_lexical_text)
    cache = IndexCache(10**8)
    cache.put(held)
    moved = policy_lexical_text(meta | {"chapter": "8. Promoting healthy and safe communities"}, held.texts[0])
    assert held.digest == index_digest(held.ids, [policy_lexical_text(meta, held.texts[0])])
    assert cache.stale({"a": held.stamp}, lambda key: (held.ids, held.indexed_texts())) == []
    stale = cache.stale({"a": held.stamp}, lambda key: (held.ids, [moved]))
    assert [s.block for s in stale] == [held] and "headings" in stale[0].detail


def test_both_legs_over_masked_rows_answer_as_slices_of_just_those_rows() -> None:
    """A row mask (a filter on a slice's metadata) takes rows out of the dense candidates and out of BM25's
    statistics, exactly as if the slices held the allowed rows alone."""
    texts = ["flood risk sequential test", "flood zones and drainage", "green belt boundaries", "flood defences"]
    whole, subsets = [], []
    for n, key in enumerate(("a", "b")):
        rng = np.random.default_rng(n)
        vectors = rng.normal(size=(4, 384)).astype(np.float32)
        ids = [f"{key}{i}" for i in range(4)]
        metas = [{"kind": "plan" if i % 2 else "report"} for i in range(4)]
        whole.append(CorpusIndex.from_embeddings(key, 0, ids, vectors, texts, metas))
        keep = [i for i in range(4) if metas[i]["kind"] == "plan"]
        picked = ([ids[i] for i in keep], vectors[keep], [texts[i] for i in keep], [metas[i] for i in keep])
        subsets.append(CorpusIndex.from_embeddings(key, 0, *picked))
    rows = [index.rows_where("kind", frozenset({"plan"})) for index in whole]
    query = np.random.default_rng(7).normal(size=384).astype(np.float32)
    found = exact_search(query, 10, whole, rows)
    assert [(c.id, c.distance) for c in found] == [(c.id, c.distance) for c in exact_search(query, 10, subsets)]
    masked, alone = lexical_search("flood drainage", 10, whole, rows), lexical_search("flood drainage", 10, subsets)
    assert [(c.id, s) for c, s in masked.hits] == [(c.id, s) for c, s in alone.hits] and masked.ceiling == alone.ceiling
    assert {c.metadata["kind"] for c in found} == {"plan"} and whole[0].rows_where("kind", None) is None
