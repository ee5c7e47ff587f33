"""A slice's vectors held as int8 codes with a bound on each one's error, and the exact float32 rows behind them.

Why: float32 vectors were most of what a replica held at 1M chunks; codes take a quarter of that (decision
0037). Each row keeps ``x ≈ scale * codes`` and ``error >= |x - scale * codes|``; the query is coded the same
way. A coded score then differs from the exact squared L2 distance by at most a margin (``lower_bounds``), so
the dense leg stays exact: it ranks by the lower bounds, reads the exact rows of the few that could still be
among the best (``ExactRows``: held in memory, or read from the slice's snapshot file), and stops once no unread
row's bound beats the ``n``-th exact distance (``lib.retrieval.slice_search.exact_hits``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from lib.retrieval.int8_product import column_offsets, int8_scores, query_codes

LEVELS = 127
MARGIN_EPSILON = 1e-5
"""Added to every margin, times ``2 * (|q|^2 + |x|^2) + 1`` (which bounds each term of a distance): the float32
rounding of the coded distance and of the exact one (each ~1e-7 of that)."""


class ExactRows(Protocol):
    """The float32 vectors behind a slice's codes, read a few rows at a time."""

    @property
    def nbytes(self) -> int: ...

    def rows(self, positions: Sequence[int]) -> np.ndarray:
        """``(len(positions), dims)`` float32, in the order asked."""
        ...

    def matrix(self) -> np.ndarray:
        """Every row, ``(rows, dims)`` float32 (read whole: for saving a slice, not for searching)."""
        ...


@dataclass(frozen=True)
class HeldRows:
    """Exact rows held in memory (a slice not backed by a snapshot file)."""

    vectors: np.ndarray

    @property
    def nbytes(self) -> int:
        return int(self.vectors.nbytes)

    def rows(self, positions: Sequence[int]) -> np.ndarray:
        return self.vectors[np.asarray(positions, dtype=np.int64)]

    def matrix(self) -> np.ndarray:
        return self.vectors


@dataclass(frozen=True)
class CodedQuery:
    """A query as ``lower_bounds`` takes it: its uint8 codes for ``int8_scores``, its scale, and the norms the
    margin needs (``coded_norm = |scale * codes|``, ``error = |q - scale * codes|``, rounded up)."""

    vector: np.ndarray
    codes: np.ndarray
    scale: float
    squared_norm: float
    coded_norm: float
    error: float

    @classmethod
    def of(cls, query: np.ndarray) -> CodedQuery:
        vector = np.asarray(query, dtype=np.float32).reshape(-1)
        codes, scales, errors = _quantize(vector.reshape(1, -1))
        coded = codes[0].astype(np.float64) * float(scales[0])
        return cls(
            vector=vector,
            codes=query_codes(codes[0]),
            scale=float(scales[0]),
            squared_norm=float(vector.astype(np.float64) @ vector.astype(np.float64)),
            coded_norm=float(np.sqrt(coded @ coded)),
            error=float(errors[0]),
        )


@dataclass(frozen=True)
class QuantizedVectors:
    """One slice's vectors: ``codes`` ``(dims, rows)`` int8, C-ordered (a column per row); per row its ``scales``
    and exact squared ``norms``; over the slice the largest coding ``error`` and the largest ``length`` (norm);
    and its ``exact`` rows. One error and one length per slice, not per row: the margin is then one number per
    slice and the bounds take four array operations (decision 0037)."""

    codes: np.ndarray
    scales: np.ndarray
    norms: np.ndarray
    error: float
    length: float
    exact: ExactRows
    offsets: np.ndarray = field(init=False, repr=False)
    """``column_offsets(codes)``, made on construction (not stored: a sum over the codes)."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "offsets", column_offsets(self.codes))

    @classmethod
    def of(cls, matrix: np.ndarray) -> QuantizedVectors:
        """``(rows, dims)`` vectors coded, the exact rows held in memory."""
        vectors = np.ascontiguousarray(matrix, dtype=np.float32)
        codes, scales, errors = _quantize(vectors)
        norms = np.einsum("ij,ij->i", vectors, vectors).astype(np.float32)
        length = float(np.sqrt(norms.max(initial=0.0, where=np.isfinite(norms))))
        return cls(
            np.ascontiguousarray(codes.T), scales, norms, float(errors.max(initial=0.0)), length, HeldRows(vectors)
        )

    @classmethod
    def empty(cls, rows: int) -> QuantizedVectors:
        """No vectors for ``rows`` rows (a slice for the lexical leg only)."""
        zeros = np.zeros(rows, dtype=np.float32)
        return cls(np.zeros((0, rows), np.int8), zeros, zeros, 0.0, 0.0, HeldRows(np.zeros((rows, 0), np.float32)))

    @property
    def dims(self) -> int:
        return int(self.codes.shape[0])

    @property
    def rows(self) -> int:
        return int(self.codes.shape[1])

    @property
    def nbytes(self) -> int:
        held = (self.codes, self.scales, self.norms, self.offsets)
        return sum(int(array.nbytes) for array in held) + self.exact.nbytes

    def lower_bounds(self, query: CodedQuery) -> np.ndarray:
        """Per row, a float32 number no greater than its exact squared L2 distance from ``query``: the coded
        distance less the most the codes can be off, ``2 * (|q'| * error + q_error * length)``, and less float32
        rounding (``MARGIN_EPSILON``). A fresh array. (Many slices at once: ``lib.retrieval.code_pages``.)"""
        products = int8_scores(query.codes, self.codes, self.offsets)
        bounds = coded_distances(products, self.scales, self.norms, query)
        bounds += self.margin_term(query)
        return bounds

    def margin_term(self, query: CodedQuery) -> np.float32:
        """What ``lower_bounds`` adds to every row's ``coded_distances``: the query's squared norm less this
        slice's margin and the rounding allowance."""
        margin = 2.0 * (query.coded_norm * self.error + query.error * self.length)
        return np.float32(query.squared_norm * (1.0 - 2.0 * MARGIN_EPSILON) - margin - MARGIN_EPSILON)

    def moved_to(self, codes: np.ndarray, offsets: np.ndarray, scales: np.ndarray, norms: np.ndarray) -> None:
        """Read the codes, offsets, scales and norms from now on from these equal arrays (columns of a page,
        ``lib.retrieval.code_pages``), so the slice's own copies can go."""
        for name, value in (("codes", codes), ("offsets", offsets), ("scales", scales), ("norms", norms)):
            object.__setattr__(self, name, value)

    def distances(self, positions: Sequence[int], query: np.ndarray) -> list[float]:
        """The exact squared L2 distance from ``query`` of each row at ``positions`` (``squared_distances``)."""
        return squared_distances(self.exact.rows(positions), query)

    def vector(self, row: int) -> np.ndarray:
        return self.exact.rows([row])[0]


def squared_distances(rows: np.ndarray, query: np.ndarray) -> list[float]:
    """The exact squared L2 distance from ``query`` of each of ``rows`` (``(n, dims)`` float32), direct, in
    float32: every path of the dense leg computes a row's distance this one way, so they rank alike."""
    diff = rows - query
    return list(np.einsum("ij,ij->i", diff, diff).tolist())


def coded_distances(
    products: np.ndarray,
    scales: np.ndarray,
    norms: np.ndarray,
    query: CodedQuery,
    out: np.ndarray | None = None,
    spare: np.ndarray | None = None,
) -> np.ndarray:
    """Per column, ``|x|^2 - 2 q'.x'`` from the int8 ``products`` (exact in float32: ``|codes . codes| < 2**24``)
    and the columns' ``scales`` and ``norms``; the rows' ``lower_bounds`` less their slice's ``margin_term``.
    Written into ``out`` (float32) when given, with ``spare`` (float32, as long) for the scaled norms."""
    bounds = np.multiply(products, scales, dtype=np.float32, out=out)
    bounds *= np.float32(-2.0 * query.scale)
    bounds += np.multiply(norms, np.float32(1.0 - 2.0 * MARGIN_EPSILON), out=spare)
    return bounds


def _quantize(vectors: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(codes, scales, errors)`` of ``(rows, dims)`` float32 ``vectors``: symmetric int8 per row, and each
    row's error ``|x - scale * codes|`` computed in float64 and rounded up to float32."""
    peaks = np.abs(vectors).max(axis=1) if vectors.shape[1] else np.zeros(len(vectors), np.float32)
    scales = np.where(peaks > 0, peaks / LEVELS, 1.0).astype(np.float32)
    codes = np.clip(np.rint(vectors / scales[:, None]), -LEVELS, LEVELS).astype(np.int8)
    residual = vectors.astype(np.float64) - codes.astype(np.float64) * scales[:, None].astype(np.float64)
    errors = np.sqrt(np.einsum("ij,ij->i", residual, residual))
    return codes, scales, np.nextafter(errors.astype(np.float32), np.float32(np.inf))
