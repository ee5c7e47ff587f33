"""Many slices' codes in shared pages (``lib.retrieval.code_pages``): the bounds equal each slice's own to the
last bit, through placement, collection, reuse and retirement of columns, and from many threads at once."""

from __future__ import annotations

import gc
import threading

import numpy as np

from lib.retrieval.code_pages import CodePages
from lib.retrieval.corpus_index import CorpusIndex
from lib.retrieval.quantized import CodedQuery, QuantizedVectors
from lib.retrieval.scratch import Scratch
from lib.retrieval.slice_search import exact_hits

Rng = np.random.Generator


def coded(rng: np.random.Generator, rows: int, dims: int = 48) -> tuple[QuantizedVectors, np.ndarray]:
    vectors = rng.normal(size=(rows, dims)).astype(np.float32)
    return QuantizedVectors.of(vectors), vectors


def own_bounds(vectors: np.ndarray, query: CodedQuery) -> np.ndarray:
    """The bounds of a slice coded afresh from the same vectors, never placed in a page."""
    return QuantizedVectors.of(vectors).lower_bounds(query)


def assert_exact(
    pages: CodePages, slices: list[tuple[QuantizedVectors, np.ndarray]], seed: int, scratch: Scratch | None = None
) -> None:
    """The pages' bounds, laid end to end, equal each slice's own: in fresh arrays, and in borrowed ones that the
    lease before left dirty."""
    rng = np.random.default_rng(seed)
    scratch = scratch or Scratch(smallest=1)
    for _ in range(3):
        query = CodedQuery.of(rng.normal(size=slices[0][1].shape[1]).astype(np.float32))
        own = np.concatenate([own_bounds(vectors, query) for _, vectors in slices])
        bounds = pages.lower_bounds(query, [q for q, _ in slices])
        assert bounds.dtype == np.float32 and np.array_equal(bounds, own)
        with scratch.lease() as take:
            lent = pages.lower_bounds(query, [q for q, _ in slices], take)
            assert lent.dtype == np.float32 and np.array_equal(lent, own)
            lent[:] = np.nan
        assert scratch.kept() > 0


def test_bounds_from_pages_equal_each_slices_own_to_the_last_bit() -> None:
    rng = np.random.default_rng(1)
    pages = CodePages(max_columns=512, min_columns=64)
    slices = [coded(rng, rows) for rows in (1, 37, 200, 511, 512, 900, 3, 64)]  # 900: wider than any page
    assert_exact(pages, slices, seed=2)
    count, live, allocated = pages.columns()
    assert live == sum(v.rows for v, _ in slices) and count > 1 and allocated >= live
    assert all(np.array_equal(v.codes, QuantizedVectors.of(x).codes) for v, x in slices)  # read from the page now
    placed = pages.place([v for v, _ in slices])
    assert all(np.shares_memory(v.codes, p.page.codes) for (v, _), p in zip(slices, placed, strict=True))
    query = CodedQuery.of(rng.normal(size=48).astype(np.float32))
    assert all(np.array_equal(v.lower_bounds(query), own_bounds(x, query)) for v, x in slices)  # one slice alone


def filled(seed: int, width: int, count: int) -> tuple[CodePages, list[tuple[QuantizedVectors, np.ndarray]], Rng]:
    """Pages ``width`` columns wide, the first holding ``count`` slices of 100 rows; the slices; more to come."""
    rng = np.random.default_rng(seed)
    pages = CodePages(max_columns=width, min_columns=width)
    slices = [coded(rng, 100) for _ in range(count)]
    pages.place([v for v, _ in slices])
    return pages, slices, rng


def test_a_collected_slices_columns_are_taken_again_and_no_live_slice_changes() -> None:
    pages, slices, rng = filled(3, 1024, 10)
    assert pages.columns() == (1, 1000, 1024)
    del slices[2:5]  # three slices gone: 300 columns free in the middle of the page
    gc.collect()
    assert pages.columns() == (1, 700, 1024)
    slices += [coded(rng, 150), coded(rng, 120)]  # fit in the hole
    assert_exact(pages, slices, seed=4)
    assert pages.columns() == (1, 970, 1024)


def test_a_page_whose_slices_are_all_gone_is_dropped() -> None:
    pages, slices, _ = filled(9, 1000, 4)
    assert pages.columns() == (1, 400, 1000)
    del slices
    gc.collect()
    assert pages.columns() == (0, 0, 0)


def test_a_page_left_under_half_used_moves_its_slices_and_is_never_written_again() -> None:
    pages, first, rng = filled(5, 1000, 10)  # fills the first page
    kept = first[-3:]  # the first 700 columns are freed, not a free range at the end that new slices would fill
    (old,) = {id(p.page): p.page for p in pages.place([v for v, _ in kept])}.values()
    frozen = old.codes.copy()
    del first
    gc.collect()  # 7 of 10 slices gone: the page is retired, the 3 left move
    _, live, _ = pages.columns()
    assert live == 300 and all(p.page is not old for p in pages.place([v for v, _ in kept]))
    newcomers = [coded(rng, 100) for _ in range(12)]
    assert_exact(pages, kept + newcomers, seed=6)
    assert np.array_equal(old.codes, frozen), "a retired page was written after its slices moved"


def test_placing_and_searching_from_many_threads_at_once_stays_exact() -> None:
    rng = np.random.default_rng(7)
    pages = CodePages(max_columns=2048, min_columns=256)
    shared = [coded(rng, int(rows)) for rows in rng.integers(1, 300, 40)]
    failures: list[BaseException] = []
    scratch = Scratch(smallest=1)  # one lender for every thread: no two leases share an array

    def work(seed: int) -> None:
        try:
            local = np.random.default_rng(seed)
            for _ in range(5):
                mine = [coded(local, int(rows)) for rows in local.integers(1, 300, 4)]  # collected each round
                picked = [shared[i] for i in local.choice(len(shared), 8, replace=False)]
                assert_exact(pages, picked + mine, seed=seed, scratch=scratch)
        except BaseException as error:  # handed to the main thread's assertion
            failures.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[0]
    gc.collect()
    assert_exact(pages, shared, seed=99)
    assert pages.columns()[1] == sum(v.rows for v, _ in shared)


def test_the_dense_leg_over_pages_ranks_as_over_the_slices_alone() -> None:
    rng = np.random.default_rng(8)
    matrices = [rng.normal(size=(rows, 32)).astype(np.float32) for rows in (300, 5, 120, 800)]
    matrices[2][:10] = matrices[0][:10]  # equal rows in two slices: ties broken by id

    def slices() -> list[CorpusIndex]:
        ids = [[f"s{k}-{i:04d}" for i in range(len(m))] for k, m in enumerate(matrices)]
        return [
            CorpusIndex.from_embeddings(f"s{k}", 0, i, m, [""] * len(m), [{}] * len(m))
            for k, (i, m) in enumerate(zip(ids, matrices, strict=True))
        ]

    paged, alone, pages = slices(), slices(), CodePages(max_columns=700, min_columns=64)
    scratch = Scratch(smallest=1)
    masks = [None, np.array([True, False, True, True, False]), None, rng.random(800) < 0.5]
    for query in [*matrices[0][:5], *rng.normal(size=(5, 32)).astype(np.float32)]:
        for rows in (None, masks):
            for n in (1, 10, 60):
                got = exact_hits(query, n, paged, rows, pages=pages)
                assert got.tolist() == exact_hits(query, n, alone, rows).tolist()
                lent = exact_hits(query, n, paged, rows, pages=pages, scratch=scratch)  # arrays left dirty before
                assert lent.tolist() == got.tolist()
