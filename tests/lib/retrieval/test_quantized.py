"""Vectors held as int8 codes (``lib.retrieval.quantized``): the integer product is exact (also written into a
given array), every row's bound is below its exact distance, and the dense leg built on them still ranks
exactly, also where the codes cannot tell rows apart."""

from __future__ import annotations

import numpy as np
import pytest

from lib.retrieval import int8_product
from lib.retrieval.corpus_index import CorpusIndex
from lib.retrieval.int8_product import column_offsets, int8_scores, query_codes
from lib.retrieval.quantized import CodedQuery, QuantizedVectors
from lib.retrieval.slice_search import exact_hits, exact_search


@pytest.fixture(params=["chosen", "uint8_by_int8_split", "int8_by_int8"])
def kernel(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The kernel this CPU is given, and each fallback forced (a CPU without AVX2 gets the split one, since
    onnxruntime's shifted unsigned-by-signed product saturates there), so each is shown exact on whatever CPU
    runs this."""
    if request.param != "chosen":
        unsigned = request.param == "uint8_by_int8_split"
        forced = int8_product._Kernel(request.param, int8_product._session(unsigned_query=unsigned), split=unsigned)
        monkeypatch.setattr(int8_product, "_kernel", lambda: forced)
    return str(request.param)


@pytest.mark.usefixtures("kernel")
def test_the_int8_product_equals_the_integer_product_over_the_whole_code_range() -> None:
    rng = np.random.default_rng(1)
    columns = rng.integers(-127, 128, (384, 777), dtype=np.int8)
    columns[:, 0], columns[:, 1] = 127, -127
    for codes in (rng.integers(-127, 128, 384, dtype=np.int8), np.full(384, 127, np.int8), np.full(384, -127, np.int8)):
        expected = codes.astype(np.int64) @ columns.astype(np.int64)
        assert np.array_equal(int8_scores(query_codes(codes), columns, column_offsets(columns)), expected)
    empty = np.zeros((384, 0), np.int8)
    assert int8_scores(query_codes(codes), empty, column_offsets(empty)).shape == (0,)


@pytest.mark.usefixtures("kernel")
def test_the_int8_product_written_into_a_given_array_is_the_same_and_a_wrong_one_is_refused() -> None:
    rng = np.random.default_rng(2)
    columns = rng.integers(-127, 128, (384, 300), dtype=np.int8)
    query, offsets = query_codes(rng.integers(-127, 128, 384, dtype=np.int8)), column_offsets(columns)
    out = np.full(300, -1, np.int32)
    written = int8_scores(query, columns, offsets, out=out)
    assert written is out and np.array_equal(out, int8_scores(query, columns, offsets))
    for wrong in (np.zeros(299, np.int32), np.zeros(300, np.int64), np.zeros(600, np.int32)[::2]):
        with pytest.raises(ValueError, match="contiguous int32"):
            int8_scores(query, columns, offsets, out=wrong)


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


@pytest.mark.parametrize(
    "vectors",
    [
        unit(np.random.default_rng(2).normal(size=(500, 384))),
        np.random.default_rng(3).normal(scale=40.0, size=(300, 384)).astype(np.float32),  # not normalised
        np.vstack([np.zeros((3, 384)), np.eye(3, 384) * 1e-30, np.eye(3, 384)]).astype(np.float32),  # degenerate
    ],
    ids=["unit", "large", "degenerate"],
)
def test_every_rows_bound_is_at_most_its_exact_distance(vectors: np.ndarray) -> None:
    coded = QuantizedVectors.of(vectors)
    rng = np.random.default_rng(4)
    queries = [*vectors[:20], *rng.normal(size=(20, 384)).astype(np.float32), np.zeros(384, np.float32)]
    for query in queries:
        bounds = coded.lower_bounds(CodedQuery.of(query))
        exact = ((vectors.astype(np.float64) - query.astype(np.float64)) ** 2).sum(axis=1)
        assert (bounds <= exact).all()
        assert np.allclose(coded.distances(range(len(vectors)), query), exact, rtol=1e-5, atol=1e-5)


def test_a_bound_is_close_on_real_looking_vectors_so_few_rows_are_read() -> None:
    """How tight the margin is, not only that it is safe: on unit vectors the bound is within 0.05 of the
    exact distance (codes of 127 levels), so ranking by it reads few exact rows."""
    vectors = unit(np.random.default_rng(5).normal(size=(1000, 384)))
    query = vectors[7]
    bounds = QuantizedVectors.of(vectors).lower_bounds(CodedQuery.of(query))
    exact = ((vectors - query) ** 2).sum(axis=1)
    assert (exact - bounds).max() < 0.05


def slice_of(key: str, vectors: np.ndarray) -> CorpusIndex:
    ids = [f"{key}__{i:04d}" for i in range(len(vectors))]
    return CorpusIndex.from_embeddings(key, 0, ids, vectors, [f"t{i}" for i in range(len(ids))], [{}] * len(ids))


def test_the_dense_leg_is_exact_where_the_codes_cannot_tell_rows_apart() -> None:
    """Rows a thousandth apart around one point: their codes are nearly all equal, so the leg must read most
    exact rows, and still returns the true order (ties by id)."""
    rng = np.random.default_rng(6)
    centre = unit(rng.normal(size=(1, 384)))[0]
    slices = [slice_of(f"s{n}", unit(centre + rng.normal(scale=1e-3, size=(400, 384)))) for n in range(3)]
    everything = np.vstack([s.vectors.exact.matrix() for s in slices])
    ids = [i for s in slices for i in s.ids]
    for query in (centre, unit(centre[None] + rng.normal(scale=1e-3, size=(1, 384)))[0]):
        diff = everything - query
        distances = np.einsum("ij,ij->i", diff, diff)  # as the leg computes an exact distance
        truth = sorted(range(len(ids)), key=lambda i: (float(distances[i]), ids[i]))[:25]
        found = exact_search(query, 25, slices)
        assert [c.id for c in found] == [ids[i] for i in truth]
        assert [c.distance for c in found] == [float(distances[i]) for i in truth]


def test_the_dense_leg_honours_masks_and_asks_of_zero_or_more_rows_than_allowed() -> None:
    rng = np.random.default_rng(7)
    a, b = slice_of("a", unit(rng.normal(size=(50, 384)))), slice_of("b", unit(rng.normal(size=(50, 384))))
    only_even = np.arange(50) % 2 == 0
    hits = exact_hits(a.embedding(3), 100, [a, b], rows=[only_even, np.zeros(50, bool)])
    assert len(hits) == 25 and set(hits["slice"].tolist()) == {0} and all(r % 2 == 0 for r in hits["row"].tolist())
    assert len(exact_hits(a.embedding(3), 0, [a, b])) == 0
    assert exact_search(a.embedding(4), 1, [a, b])[0].id == "a__0004"
