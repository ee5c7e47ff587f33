"""The column layout of ``lib.retrieval.document_index``: the scores of rows stacked as rows, and the same bits in a
whole matrix and in any copy of some of its columns (what lets a filter's kept copy rank as the whole)."""

from __future__ import annotations

import numpy as np

from lib.retrieval.document_index import COLUMN_PADDING, column_scores, stack_columns


def test_columns_score_what_rows_score() -> None:
    rng = np.random.default_rng(3)
    rows = rng.standard_normal((300, 384)).astype(np.float32)
    vector = rng.standard_normal(384).astype(np.float32)
    columns = stack_columns(rows)
    assert columns.shape == (384, 320) and columns.flags.c_contiguous and not columns[:, 300:].any()
    scores = column_scores(columns, vector, 300)
    assert scores.shape == (300,)
    np.testing.assert_allclose(scores, rows.astype(np.float64) @ vector.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_padded_columns_score_as_in_the_whole_matrix_whichever_columns_are_copied() -> None:
    rng = np.random.default_rng(7)
    rows = rng.standard_normal((1000, 384)).astype(np.float32)
    whole = stack_columns(rows)
    assert whole.shape[1] % COLUMN_PADDING == 0
    for _ in range(20):
        vector = rng.standard_normal(384).astype(np.float32)
        chosen = np.sort(rng.choice(1000, size=int(rng.integers(1, 1000)), replace=False))
        scores = column_scores(whole, vector, 1000)
        copied = column_scores(stack_columns(rows[chosen]), vector, len(chosen))
        assert np.array_equal(scores[chosen], copied)


def test_scores_are_a_fresh_array_the_caller_may_mask() -> None:
    columns = stack_columns(np.eye(4, 384, dtype=np.float32))
    scores = column_scores(columns, np.ones(384, np.float32), 4)
    scores[0] = -np.inf
    assert np.array_equal(column_scores(columns, np.ones(384, np.float32), 4), np.ones(4, np.float32))
