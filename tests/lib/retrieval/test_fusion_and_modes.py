"""Rank fusion and the mode argument."""

from __future__ import annotations

import pytest

from lib.errors import InvalidArgumentError
from lib.retrieval import FUSION, FusionParams, SearchMode, candidates, check_mode, fuse


def test_fusion_puts_what_both_legs_find_first_and_keeps_each_legs_score() -> None:
    dense = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    lexical = [("c", 12.0), ("d", 9.0)]
    fused = fuse(dense, lexical, 10)
    assert [f.key for f in fused] == ["c", "a", "b", "d"]
    assert (fused[0].dense_score, fused[0].lexical_score) == (0.7, 12.0)
    assert (fused[1].dense_score, fused[1].lexical_score) == (0.9, None)
    assert (fused[3].dense_score, fused[3].lexical_score) == (None, 9.0)


def test_relevance_is_in_0_1_monotone_and_1_only_for_first_in_both() -> None:
    fused = fuse([("a", 0.9), ("b", 0.5)], [("a", 3.0), ("c", 1.0)], 10)
    assert fused[0].key == "a" and fused[0].relevance == 1.0
    relevances = [f.relevance for f in fused]
    assert relevances == sorted(relevances, reverse=True) and all(0 < r < 1 for r in relevances[1:])


def test_ties_keep_the_order_first_met_dense_then_lexical_and_n_cuts() -> None:
    fused = fuse([("a", 0.9)], [("b", 5.0)], 10)
    assert [f.key for f in fused] == ["a", "b"] and fused[0].relevance == fused[1].relevance
    assert [f.key for f in fuse([("a", 0.9)], [("b", 5.0)], 1)] == ["a"]
    assert fuse([], [], 5) == []


def test_weights_shift_the_balance_between_legs() -> None:
    lexical_first = fuse([("a", 0.9)], [("b", 5.0)], 2, FusionParams(dense_weight=0.5))
    assert [f.key for f in lexical_first] == ["b", "a"]


def test_each_leg_contributes_at_least_the_depth() -> None:
    assert candidates(10) == FUSION.depth and candidates(FUSION.depth + 5) == FUSION.depth + 5


def test_modes_are_checked() -> None:
    assert check_mode("lexical") is SearchMode.LEXICAL and check_mode(SearchMode.DENSE) is SearchMode.DENSE
    with pytest.raises(InvalidArgumentError, match="hybrid, dense, lexical") as raised:
        check_mode("bm25")
    assert raised.value.error_type == "invalid_argument"
