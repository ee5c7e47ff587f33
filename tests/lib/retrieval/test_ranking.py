"""``rank_by_mode`` and ``leg_depth``: one ranking per mode from two legs' candidate lists."""

from __future__ import annotations

import random

import pytest

from lib.retrieval.arguments import SearchMode
from lib.retrieval.ranking import FUSION, FusionMethod, FusionParams, candidates, fuse, leg_depth, rank_by_mode

DENSE = [("a", 0.92), ("b", 0.81), ("c", 0.40)]
LEXICAL = [("d", 9.0), ("c", 6.0), ("a", 1.5)]
CEILING = 10.0


def test_only_hybrid_asks_the_legs_for_more_than_the_final_n() -> None:
    assert leg_depth(SearchMode.DENSE, 5) == 5
    assert leg_depth(SearchMode.LEXICAL, 5) == 5
    assert leg_depth(SearchMode.HYBRID, 5) == candidates(5) == FUSION.depth
    assert leg_depth(SearchMode.HYBRID, FUSION.depth + 7) == FUSION.depth + 7
    assert leg_depth(SearchMode.HYBRID, 5, FusionParams(depth=12)) == 12


def test_dense_keeps_the_dense_order_and_scores_clamped_to_0_1_with_no_lexical_score() -> None:
    ranked = rank_by_mode(SearchMode.DENSE, [*DENSE, ("e", -0.2)], LEXICAL, 4, lexical_ceiling=CEILING)
    assert [(h.key, h.relevance) for h in ranked] == [("a", 0.92), ("b", 0.81), ("c", 0.40), ("e", 0.0)]
    assert [h.dense_score for h in ranked] == [0.92, 0.81, 0.40, -0.2]
    assert all(h.lexical_score is None for h in ranked)
    assert [h.key for h in rank_by_mode(SearchMode.DENSE, DENSE, [], 2)] == ["a", "b"]


def test_lexical_keeps_the_bm25_order_and_reports_score_over_the_ceiling() -> None:
    ranked = rank_by_mode(SearchMode.LEXICAL, [], LEXICAL, 2, lexical_ceiling=CEILING)
    assert [(h.key, h.relevance, h.lexical_score, h.dense_score) for h in ranked] == [
        ("d", 0.9, 9.0, None),
        ("c", 0.6, 6.0, None),
    ]


def test_lexical_relevance_never_exceeds_1_and_a_zero_ceiling_does_not_divide_by_zero() -> None:
    assert rank_by_mode(SearchMode.LEXICAL, [], [("x", 12.0)], 1, lexical_ceiling=10.0)[0].relevance == 1.0
    assert rank_by_mode(SearchMode.LEXICAL, [], [("x", 0.5)], 1, lexical_ceiling=0.0)[0].relevance == 1.0
    assert rank_by_mode(SearchMode.LEXICAL, [], [], 3) == []


@pytest.mark.parametrize("params", [FUSION, FusionParams(method=FusionMethod.RRF), FusionParams(alpha=0.2)])
def test_hybrid_is_exactly_the_fusion_of_the_two_legs(params: FusionParams) -> None:
    ranked = rank_by_mode(SearchMode.HYBRID, DENSE, LEXICAL, 3, lexical_ceiling=CEILING, params=params)
    assert ranked == fuse(DENSE, LEXICAL, 3, params, lexical_ceiling=CEILING)
    assert len(ranked) == 3 and all(0.0 <= h.relevance <= 1.0 for h in ranked)


def test_hybrid_lets_a_key_both_legs_find_rise_and_carries_both_leg_scores() -> None:
    ranked = rank_by_mode(SearchMode.HYBRID, DENSE, LEXICAL, 4, lexical_ceiling=CEILING)
    by_key = {h.key: h for h in ranked}
    assert (by_key["c"].dense_score, by_key["c"].lexical_score) == (0.40, 6.0)
    assert (by_key["d"].dense_score, by_key["b"].lexical_score) == (None, None)
    assert ranked[0].key == "a"  # 0.5 * 0.92 + 0.5 * 0.15 beats d's 0.5 * 0 + 0.5 * 0.9


@pytest.mark.parametrize("mode", list(SearchMode))
def test_a_collapsed_ranking_is_the_full_one_with_a_documents_surplus_left_out(mode: SearchMode) -> None:
    dense = [("a1", 0.95), ("a2", 0.94), ("a3", 0.93), ("b1", 0.90), ("a4", 0.89), ("c1", 0.80), ("b2", 0.70)]
    lexical = [("a2", 9.0), ("a1", 8.0), ("c1", 7.5), ("a3", 7.0), ("b1", 3.0), ("b2", 2.0), ("a4", 1.0)]
    full = rank_by_mode(mode, dense, lexical, 7, lexical_ceiling=CEILING)
    collapsed = rank_by_mode(mode, dense, lexical, 4, lexical_ceiling=CEILING, document=lambda k: k[0], per_document=2)
    expected = [h for i, h in enumerate(full) if [g.key[0] for g in full[:i]].count(h.key[0]) < 2][:4]
    assert collapsed == expected and len(collapsed) == 4
    assert max(sum(h.key[0] == d for h in collapsed) for d in "abc") == 2
    assert leg_depth(mode, 4, per_document=2) == candidates(4)


@pytest.mark.parametrize("mode", list(SearchMode))
def test_a_collapsed_ranking_looks_past_its_headroom_when_one_document_fills_it(mode: SearchMode) -> None:
    """Twelve chunks of document a rank first; a top 3 with one chunk a document still finds b and c."""
    dense = [(f"a{i:02}", 0.99 - i / 100) for i in range(12)] + [("b1", 0.50), ("c1", 0.40)]
    lexical = [(key, 20.0 - i) for i, (key, _) in enumerate(dense)]
    collapsed = rank_by_mode(mode, dense, lexical, 3, lexical_ceiling=20.0, document=lambda k: k[0], per_document=1)
    assert [hit.key for hit in collapsed] == ["a00", "b1", "c1"]


@pytest.mark.parametrize("params", [FUSION, FusionParams(method=FusionMethod.RRF), FusionParams(depth=12)])
@pytest.mark.parametrize("per_document", [None, 1, 2])
def test_the_top_n_is_the_first_n_of_the_ranking_as_deep_as_the_legs(
    params: FusionParams, per_document: int | None
) -> None:
    """What lets a policy search rank once (``lib.policies.search``): for any n, the ranking for the legs'
    depth starts with the top n, collapsed or not, whatever the legs hold."""
    rng = random.Random(27)
    for _ in range(40):
        keys = [f"{rng.choice('abcdef')}{i}" for i in range(rng.randint(0, 60))]
        dense = sorted(((k, rng.random()) for k in rng.sample(keys, len(keys) // 2)), key=lambda e: -e[1])
        lexical = sorted(((k, rng.uniform(0, 9)) for k in rng.sample(keys, len(keys) // 2)), key=lambda e: -e[1])
        for n in (1, 3, 10, 25):
            depth = leg_depth(SearchMode.HYBRID, n, params, per_document=per_document)
            ask = {"lexical_ceiling": 9.0, "params": params, "document": first_letter, "per_document": per_document}
            deep = rank_by_mode(SearchMode.HYBRID, dense, lexical, depth, **ask)
            assert deep[:n] == rank_by_mode(SearchMode.HYBRID, dense, lexical, n, **ask)


def first_letter(key: str) -> str:
    return key[0]
