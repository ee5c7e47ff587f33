"""The dense leg over small searches: the exact float32 rows of the slices searched, held in memory, and bounds
computed from one float32 product over them instead of from the int8 codes.

Why: the int8 codes, pages and rows read back from the snapshot file (``lib.retrieval.quantized``) are what a
million chunks need; over a few hundred rows their fixed costs (coding the query, an onnxruntime call, a
``pread`` per exact row read) outweigh the product itself, which over so few rows is one small BLAS call. A
search whose slices hold at most ``SMALL_ROWS`` rows therefore ranks by float32 bounds
(``float_bounds``) and reads its exact rows from memory; the exact distances, the rows read and the ranking
are the same as the int8 path's (``lib.retrieval.slice_search.exact_hits``), only the bound that chooses which
rows to read differs. The threshold and its measurement: docs/decisions/0049-cost-of-one-call.md.

A slice whose exact rows are already in memory (``HeldRows``) is used as it is; one whose rows stay in its
snapshot file is read whole once and kept in ``FloatRows``, a memo bounded in bytes (least recently used first
out), so the small path never holds more than its budget whatever the corpus.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

import numpy as np
from cachetools import LRUCache

from lib.retrieval.quantized import HeldRows, QuantizedVectors

SMALL_ROWS = 4096
"""The most rows (all slices of one search together) the dense leg searches by the float32 product; above it,
by the int8 codes (measured: docs/decisions/0049-cost-of-one-call.md)."""
FLOAT_ROWS_BYTES = 32 * 1024 * 1024
"""The most bytes ``FloatRows`` keeps of slices whose exact rows live in their snapshot file."""
_UNIT_ROUNDING = 2.0**-24


class FloatRows:
    """The exact float32 rows of small slices, by slice serial: held rows as they are, file rows read once and
    kept within ``budget`` bytes, for searches over at most ``most_rows`` rows. Thread-safe; two threads may
    both read a slice first, with equal results."""

    def __init__(self, budget: int = FLOAT_ROWS_BYTES, most_rows: int = SMALL_ROWS) -> None:
        self.budget = budget
        self.most_rows = most_rows
        """The most rows a search may cover to take the small path (``SMALL_ROWS``; 0: never)."""
        self._kept: LRUCache[int, np.ndarray] = LRUCache(max(budget, 1), getsizeof=lambda rows: max(rows.nbytes, 1))
        self._lock = threading.Lock()

    def matrix(self, serial: int, vectors: QuantizedVectors) -> np.ndarray | None:
        """``(rows, dims)`` float32 exact rows of the slice ``serial`` (``vectors``: its vectors); ``None`` when
        they would not fit the budget."""
        if isinstance(vectors.exact, HeldRows):
            return vectors.exact.vectors
        with self._lock:
            found = self._kept.get(serial)
        if found is not None:
            return found
        if vectors.rows * vectors.dims * 4 > self.budget:
            return None
        found = np.ascontiguousarray(vectors.exact.matrix(), dtype=np.float32)
        with self._lock:
            self._kept[serial] = found
        return found

    def matrices(self, slices: Sequence[tuple[int, QuantizedVectors]]) -> list[np.ndarray] | None:
        """``matrix`` of each ``(serial, vectors)``, or ``None`` unless every one is at hand."""
        found = []
        for serial, vectors in slices:
            matrix = self.matrix(serial, vectors)
            if matrix is None:
                return None
            found.append(matrix)
        return found

    @property
    def nbytes(self) -> int:
        """Bytes kept of file-backed slices."""
        with self._lock:
            return int(self._kept.currsize)


def float_bounds(matrix: np.ndarray, norms: np.ndarray, query: np.ndarray, squared_norm: float) -> np.ndarray:
    """Per row of ``matrix``, a float32 number no greater than its exact squared L2 distance from ``query`` as
    ``squared_distances`` computes it: ``|x|^2 - 2 q.x + |q|^2`` (``norms``: each row's float32 ``|x|^2``;
    ``squared_norm``: ``|q|^2``) less a margin. Each float32 dot product of ``d`` terms is off by at most
    ``d * u * (|q|^2 + |x|^2) / 2`` (``u = 2**-24``), a stored norm by ``d * u * |x|^2``, the exact distance as
    computed by ``(d + 2) * u * 2 * (|q|^2 + |x|^2)``; the margin, ``(4 d + 16) * u * (|q|^2 + |x|^2 + 1)``,
    covers their sum and this function's own roundings. A fresh array."""
    dims = matrix.shape[1]
    products = matrix @ np.asarray(query, dtype=np.float32)
    sizes = norms + np.float32(squared_norm)
    bounds = sizes - np.float32(2.0) * products
    bounds -= np.float32((4 * dims + 16) * _UNIT_ROUNDING) * (sizes + np.float32(1.0))
    return bounds
