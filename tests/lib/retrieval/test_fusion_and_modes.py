"""Rank fusion and the mode argument."""

from __future__ import annotations

import pytest

from lib.errors import InvalidArgumentError
from lib.retrieval.arguments import SearchMode, check_mode
from lib.retrieval.ranking import FUSION, FusionMethod, FusionParams, candidates, fuse

RRF = FusionParams(method=FusionMethod.RRF)


def test_rrf_puts_what_both_legs_find_first_and_keeps_each_legs_score() -> None:
    dense = [("a", 0.9), ("b", 0.8), ("c", 0.7)]
    lexical = [("c", 12.0), ("d", 9.0)]
    fused = fuse(dense, lexical, 10, RRF)
    assert [f.key for f in fused] == ["c", "a", "b", "d"]
    assert (fused[0].dense_score, fused[0].lexical_score) == (0.7, 12.0)
    assert (fused[1].dense_score, fused[1].lexical_score) == (0.9, None)
    assert (fused[3].dense_score, fused[3].lexical_score) == (None, 9.0)


def test_rrf_relevance_is_in_0_1_monotone_and_1_only_for_first_in_both() -> None:
    fused = fuse([("a", 0.9), ("b", 0.5)], [("a", 3.0), ("c", 1.0)], 10, RRF)
    assert fused[0].key == "a" and fused[0].relevance == 1.0
    relevances = [f.relevance for f in fused]
    assert relevances == sorted(relevances, reverse=True) and all(0 < r < 1 for r in relevances[1:])


def test_ties_keep_the_order_first_met_dense_then_lexical_and_n_cuts() -> None:
    for params in (RRF, FusionParams(alpha=0.5)):
        fused = fuse([("a", 0.9)], [("b", 9.0)], 10, params, lexical_ceiling=10.0)
        assert [f.key for f in fused] == ["a", "b"] and fused[0].relevance == fused[1].relevance
        assert [f.key for f in fuse([("a", 0.9)], [("b", 9.0)], 1, params, lexical_ceiling=10.0)] == ["a"]
        assert fuse([], [], 5, params) == []


def test_rrf_weights_shift_the_balance_between_legs() -> None:
    lexical_first = fuse([("a", 0.9)], [("b", 5.0)], 2, FusionParams(method=FusionMethod.RRF, dense_weight=0.5))
    assert [f.key for f in lexical_first] == ["b", "a"]


def test_convex_combines_the_legs_scores_on_their_own_scales() -> None:
    """The lexical score counts as a share of its ceiling; a key missing from a leg cut at the depth gets that
    leg's lowest listed score."""
    dense = [("a", 0.8), ("b", 0.6)]
    lexical = [("c", 9.0), ("a", 3.0)]
    fused = fuse(dense, lexical, 2, FusionParams(alpha=0.5, depth=2), lexical_ceiling=10.0)
    expected = {"a": 0.5 * 0.8 + 0.5 * 0.3, "b": 0.5 * 0.6 + 0.5 * 0.3, "c": 0.5 * 0.6 + 0.5 * 0.9}
    assert [f.key for f in fused] == sorted(expected, key=expected.__getitem__, reverse=True)[:2]
    assert all(abs(f.relevance - expected[f.key]) < 1e-12 for f in fused)
    assert (fused[0].key, fused[0].dense_score, fused[0].lexical_score) == ("c", None, 9.0)


def test_a_key_missing_from_a_leg_that_listed_fewer_than_the_depth_scores_nothing_there() -> None:
    """BM25 lists every chunk holding a query term: one that is not listed holds none of them."""
    dense = [("a", 0.8), ("b", 0.6)]
    fused = fuse(dense, [("b", 9.0)], 10, FusionParams(alpha=0.5, depth=100), lexical_ceiling=10.0)
    assert {f.key: round(f.relevance, 12) for f in fused} == {"b": 0.75, "a": 0.4}


def test_a_clear_lexical_winner_the_dense_leg_misses_rises_with_scores_not_with_ranks() -> None:
    """ "paragraph 116": one chunk carries both terms; many carry only "paragraph"; dense ranks the chunk nowhere."""
    dense = [(f"d{i}", 0.62 - i * 0.001) for i in range(20)] + [("other", 0.5)]
    lexical = [("para116", 9.5)] + [(f"d{i}", 1.0) for i in range(20)]
    convex = fuse(dense, lexical, 5, FusionParams(alpha=0.5), lexical_ceiling=10.0)
    ranked = fuse(dense, lexical, 5, RRF)
    assert convex[0].key == "para116" and "para116" not in [f.key for f in ranked]


def test_convex_extremes_are_each_leg_alone() -> None:
    dense = [("a", 0.9), ("b", 0.8)]
    lexical = [("b", 5.0), ("a", 1.0)]
    assert [f.key for f in fuse(dense, lexical, 2, FusionParams(alpha=1.0), lexical_ceiling=5.0)] == ["a", "b"]
    assert [f.key for f in fuse(dense, lexical, 2, FusionParams(alpha=0.0), lexical_ceiling=5.0)] == ["b", "a"]


def test_each_leg_contributes_at_least_the_depth() -> None:
    assert candidates(10) == FUSION.depth and candidates(FUSION.depth + 5) == FUSION.depth + 5


def test_modes_are_checked() -> None:
    assert check_mode("lexical") is SearchMode.LEXICAL and check_mode(SearchMode.DENSE) is SearchMode.DENSE
    with pytest.raises(InvalidArgumentError, match="hybrid, dense, lexical") as raised:
        check_mode("bm25")
    assert raised.value.error_type == "invalid_argument"
