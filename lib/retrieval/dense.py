"""Exact dense scores of one query against many stacked vectors, laid out for the fastest BLAS kernel.

Vectors are kept *as columns*: one C-contiguous ``(dimensions, n)`` float32 array, so a query's scores are
``vector @ columns``. Why: the product is memory-bound, and the column layout reads memory the way OpenBLAS's
kernel wants (about twice as fast as rows; figures in docs/decisions/0009-vectors-as-columns.md).

Columns are padded with zero columns up to a multiple of ``COLUMN_PADDING`` so every real column is computed
by the kernel's main path, never its tail: a column then scores the same bits in a whole matrix and in any
copy of some of its columns (``test_columns``), so a kept copy of a filter's columns ranks exactly as the
whole matrix would.
"""

from __future__ import annotations

import numpy as np

COLUMN_PADDING = 64


def stack_columns(rows: np.ndarray) -> np.ndarray:
    """``rows`` (``(n, dimensions)``, any float) as padded float32 columns: ``(dimensions, n + padding)``."""
    extra = (-len(rows)) % COLUMN_PADDING
    columns = np.zeros((rows.shape[1], len(rows) + extra), dtype=np.float32)
    columns[:, : len(rows)] = rows.T
    return columns


def column_scores(columns: np.ndarray, vector: np.ndarray, n: int) -> np.ndarray:
    """The dot product of ``vector`` with each of the first ``n`` columns (a fresh, writable array). On one
    BLAS thread once the process has pinned it (``lib.retrieval.blas``)."""
    return (np.asarray(vector, dtype=np.float32) @ columns)[:n]


def best_rows(scores: np.ndarray, depth: int) -> np.ndarray:
    """The positions of the ``depth`` highest finite ``scores``, highest first, ties by position: one partition
    and one sort of the ``depth`` kept, never a sort of every row."""
    count = min(depth, int(np.isfinite(scores).sum()))
    if count <= 0:
        return np.zeros(0, dtype=np.int64)
    best = np.argpartition(-scores, count - 1)[:count] if len(scores) > count else np.arange(len(scores))
    return best[np.lexsort((best, -scores[best]))]
