"""The few lowest or highest of a million numbers without partitioning all of them: a threshold taken from every
``SAMPLE``-th value, then one comparison over all. Both legs of a search pick their candidates this way (the
dense leg its lowest bounds, the lexical leg its best scores). At 1M chunks a partition of every value was a
tenth of the dense leg (decisions 0037, 0038)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lib.retrieval.scratch import Take, fresh

SAMPLE = 16
_SPARE = 8
"""Sampled values past the ``count // SAMPLE``-th taken as the threshold, so it rarely admits fewer than ``count``."""


def lowest(values: np.ndarray, count: int, take: Take = fresh) -> np.ndarray:
    """The positions of about the ``count`` lowest finite ``values`` (at least ``count`` when there are that
    many, in no order): for a caller that reads on past them until nothing unread can rank, so any such set
    would do. Masks over all ``values`` are arrays ``take`` gives (``lib.retrieval.scratch``)."""
    finite = np.isfinite(values, out=take(len(values), np.bool_))
    if int(finite.sum()) <= count:
        return np.flatnonzero(finite)
    sample = values[::SAMPLE]
    rank = count // SAMPLE + _SPARE
    if len(sample) > rank:
        threshold = _kth(sample, rank, take)
        if np.isfinite(threshold):
            below = np.flatnonzero(np.less_equal(values, threshold, out=take(len(values), np.bool_)))
            if count <= len(below) <= 2 * count + 32 * SAMPLE:
                return below
            if len(below) > count:  # many values at the threshold (rows repeated): the lowest of those
                return below[np.argpartition(values[below], count)[:count]]
    return np.argpartition(values, count)[:count]


def highest(values: np.ndarray, count: int, take: Take = fresh) -> np.ndarray:
    """The positions of every positive value no lower than the ``count``-th highest positive one (every positive
    value when there are fewer), in no order: the ``count`` best with all their ties, and never a zero. Masks
    over all ``values`` are arrays ``take`` gives."""
    sample = values[::SAMPLE]
    rank = count // SAMPLE + _SPARE
    if count > 0 and len(sample) > rank:
        threshold = _kth(sample, len(sample) - 1 - rank, take)
        if threshold > 0:
            above = np.flatnonzero(np.greater_equal(values, threshold, out=take(len(values), np.bool_)))
            if len(above) >= count:  # every value left out is below the threshold, so below the count-th
                return _with_ties(values, above, count)
    return _with_ties(values, np.flatnonzero(np.greater(values, 0, out=take(len(values), np.bool_))), count)


def _with_ties(values: np.ndarray, positions: np.ndarray, count: int) -> np.ndarray:
    """Those of ``positions`` whose value is no lower than the ``count``-th highest among them."""
    if len(positions) <= count:
        return positions
    chosen = values[positions]
    nth = np.partition(chosen, len(chosen) - count)[len(chosen) - count]
    return positions[chosen >= nth]


def _kth(values: np.ndarray, k: int, take: Take) -> Any:
    """The ``k``-th lowest of ``values`` (from 0), partitioning a copy in an array ``take`` gives."""
    copy = take(len(values), values.dtype)
    np.copyto(copy, values)
    copy.partition(k)
    return copy[k]
