"""The dense leg's small path (``lib.retrieval.float_rows``): its float32 bound is never above a row's exact
distance, and a search ranked through it returns the very hits of the int8 path (same rows, same distances to
the bit, same order) on a real corpus (real text, the real model), over held and snapshot-backed slices, with
masks, ties and any depth; over its budget it hands the search back to the int8 path."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from lib.retrieval.code_pages import CodePages
from lib.retrieval.corpus_index import CorpusIndex
from lib.retrieval.file_columns import FileRows
from lib.retrieval.float_rows import SMALL_ROWS, FloatRows, float_bounds
from lib.retrieval.index_snapshot import IndexSnapshots
from lib.retrieval.quantized import squared_distances
from lib.retrieval.slice_search import exact_hits
from lib.stores.embeddings import Embedder

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "governance"
QUESTIONS = [
    "how are packaging metadata versions chosen",
    "inline script dependencies declared in a comment block",
    "which platforms may a wheel tag name",
    "the process for approving a standards change",
    "error envelope returned when a policy is not found",
    "effective date of a revision in force",
    "yaml front matter for decision records",
    "manylinux compatibility with glibc",
]


@pytest.fixture(scope="module")
def corpus(embedder: Embedder) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Paragraphs of the governance fixtures (PEPs, MADRs, the spec), their embeddings, and the questions'."""
    paragraphs: list[str] = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.is_file():
            paragraphs += [p.strip() for p in re.split(r"\n\s*\n", path.read_text()) if len(p.strip()) > 40]
    paragraphs = paragraphs[:600]
    vectors = np.asarray(embedder.embed_batch(paragraphs), dtype=np.float32)
    questions = np.asarray(embedder.embed_queries(QUESTIONS), dtype=np.float32)
    return paragraphs, vectors, questions


def slices(texts: list[str], vectors: np.ndarray, parts: int) -> list[CorpusIndex]:
    """The corpus cut into ``parts`` slices, the last paragraph of each repeated (ties to be broken by id)."""
    out = []
    for n, rows in enumerate(np.array_split(np.arange(len(texts)), parts)):
        chosen = [*rows.tolist(), int(rows[-1])]
        ids = [f"s{n}__{i:04d}" for i in range(len(chosen))]
        kept = [texts[i] for i in chosen]
        out.append(CorpusIndex.from_embeddings(f"s{n}", 0, ids, vectors[chosen], kept, [{}] * len(ids)))
    return out


def test_the_float_bound_is_never_above_the_exact_distance(corpus: tuple[list[str], np.ndarray, np.ndarray]) -> None:
    _, vectors, questions = corpus
    rng = np.random.default_rng(11)
    for matrix in (vectors, rng.normal(scale=30.0, size=(200, 384)).astype(np.float32), np.zeros((4, 384), np.float32)):
        norms = np.einsum("ij,ij->i", matrix, matrix).astype(np.float32)
        for query in [*questions, *matrix[:5], rng.normal(scale=30.0, size=384).astype(np.float32)]:
            query = np.asarray(query, dtype=np.float32)
            squared = float(query.astype(np.float64) @ query.astype(np.float64))
            bounds = float_bounds(matrix, norms, query, squared)
            assert (bounds <= np.asarray(squared_distances(matrix, query), dtype=np.float32)).all()


@pytest.mark.parametrize("parts", [1, 3])
def test_the_small_path_returns_the_int8_paths_hits_on_a_real_corpus(
    corpus: tuple[list[str], np.ndarray, np.ndarray], tmp_path: Path, parts: int
) -> None:
    texts, vectors, questions = corpus
    held = slices(texts, vectors, parts)
    snapshots = IndexSnapshots(tmp_path)
    for index in held:
        snapshots.save(index)
    from_files = [loaded for index in held if (loaded := snapshots.load(index.key, index.stamp)) is not None]
    assert len(from_files) == parts and all(isinstance(i.vectors.exact, FileRows) for i in from_files)
    rows = sum(len(i.ids) for i in held)
    assert rows <= SMALL_ROWS
    rng = np.random.default_rng(12)
    masks = [rng.random(len(i.ids)) < 0.5 for i in held]
    queries = [*questions, vectors[3], vectors[-1]]  # a row itself, and a repeated row: exact ties
    for indexes in (held, from_files):
        small = FloatRows()
        for query in queries:
            for n in (1, 10, 100, rows + 5):
                for mask in (None, masks):
                    large = exact_hits(query, n, indexes, mask, pages=CodePages())
                    found = exact_hits(query, n, indexes, mask, float_rows=small)
                    assert found.tobytes() == large.tobytes(), (n, mask is not None)
                    assert len(found) == min(n, rows if mask is None else sum(int(m.sum()) for m in masks))
        expected = sum(len(i.ids) * 384 * 4 for i in indexes if isinstance(i.vectors.exact, FileRows))
        assert small.nbytes == expected, "file-backed slices read whole once; held ones used in place"


def test_over_its_budget_or_its_rows_the_search_takes_the_int8_path(
    corpus: tuple[list[str], np.ndarray, np.ndarray], tmp_path: Path
) -> None:
    texts, vectors, questions = corpus
    snapshots = IndexSnapshots(tmp_path)
    index = slices(texts, vectors, 1)[0]
    snapshots.save(index)
    loaded = snapshots.load(index.key, index.stamp)
    assert loaded is not None
    tight = FloatRows(budget=len(loaded.ids) * 384 * 4 - 1)
    assert tight.matrix(loaded.serial, loaded.vectors) is None
    found = exact_hits(questions[0], 10, [loaded], float_rows=tight)
    assert np.array_equal(found, exact_hits(questions[0], 10, [loaded]))
    assert tight.nbytes == 0
    off = FloatRows(most_rows=len(loaded.ids) - 1)  # a search over more rows than it takes
    assert np.array_equal(exact_hits(questions[0], 10, [loaded], float_rows=off), found)
    assert off.nbytes == 0, "the slice's rows were never read whole"
