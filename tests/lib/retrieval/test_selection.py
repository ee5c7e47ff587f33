"""The sampled selection both legs take their candidates with: the lowest bounds, the best scores with all ties."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from lib.retrieval.selection import SAMPLE, highest, lowest

Make = Callable[[np.random.Generator, int], np.ndarray]
SHAPES: list[tuple[str, Make]] = [
    ("distinct", lambda rng, n: rng.random(n)),
    ("few values, many ties", lambda rng, n: rng.integers(0, 5, n).astype(np.float64)),
    ("mostly zero", lambda rng, n: np.where(rng.random(n) < 0.97, 0.0, rng.random(n))),
    ("all equal", lambda rng, n: np.ones(n)),
    ("all zero", lambda rng, n: np.zeros(n)),
    ("extremes where the sample looks", lambda rng, n: np.where(np.arange(n) % SAMPLE == 0, 2.0 + rng.random(n), 1.0)),
]
"""The last puts the highest values exactly at the sampled positions, so the threshold admits too few of them."""


@pytest.mark.parametrize(("name", "make"), SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("count", [1, 10, 60, 700])
@pytest.mark.parametrize("size", [5, 300, 40_000])
def test_highest_is_every_positive_value_at_least_the_count_th(name: str, make: Make, count: int, size: int) -> None:
    """Exactly the set a full sort gives: the ``count`` best positive values and every tie of the last."""
    values = make(np.random.default_rng(size + count), size)
    positive = np.flatnonzero(values > 0)
    if len(positive) > count:
        nth = np.sort(values[positive])[::-1][count - 1]
        expected = positive[values[positive] >= nth]
    else:
        expected = positive
    assert sorted(highest(values, count).tolist()) == expected.tolist()


@pytest.mark.parametrize(("name", "make"), SHAPES, ids=[s[0] for s in SHAPES])
@pytest.mark.parametrize("count", [1, 42, 700])
@pytest.mark.parametrize("size", [5, 300, 40_000])
def test_lowest_holds_at_least_count_finite_values_and_none_it_leaves_out_is_lower(
    name: str, make: Make, count: int, size: int
) -> None:
    rng = np.random.default_rng(size * count)
    values = make(rng, size).astype(np.float32)
    values[rng.random(size) < 0.1] = np.inf  # masked-out rows
    finite = np.flatnonzero(np.isfinite(values))
    chosen = lowest(values, count)
    assert len(set(chosen.tolist())) == len(chosen) and np.isfinite(values[chosen]).all()
    assert len(chosen) >= min(count, len(finite))
    left = np.setdiff1d(finite, chosen)
    if len(left) and len(chosen):
        assert values[left].min() >= values[chosen].max()


def test_the_sampled_threshold_is_what_answers_on_a_large_array() -> None:
    """On a large array of distinct values the threshold path answers (not the fallback over every value): it
    returns a little more than asked, still every one of the lowest."""
    values = np.random.default_rng(3).random(100_000).astype(np.float32)
    chosen = lowest(values, 50)
    assert 50 < len(chosen) <= 2 * 50 + 32 * SAMPLE
    assert set(np.argsort(values)[:50].tolist()) <= set(chosen.tolist())
