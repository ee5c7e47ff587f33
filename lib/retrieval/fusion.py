"""Fusing the dense and lexical legs into one ranking: a convex combination of normalised scores, or RRF.

Two families, both functions of the two legs' candidate lists alone (so every replica fuses alike):

- ``convex`` (the default): ``alpha * dense + (1 - alpha) * lexical``, each leg's score on a fixed 0..1
  scale: the dense leg's relevance (``1 - L2/2`` of unit vectors) as it is, the lexical leg's BM25 score
  divided by the query's ceiling (``lib.retrieval.lexical.bm25_ceiling``: the score of a chunk holding
  every query term at saturation). A key missing from one leg's candidates gets that leg's lowest listed
  score when the list was cut at ``candidates(n)`` (it ranked below all of them: an upper bound, the same
  for every such key), and 0 when the leg listed fewer (BM25 lists every chunk holding a query term).
  Scores rather than ranks matter for planning questions: "paragraph 116" makes one chunk the lexical
  leg's clear winner (``116`` is rare) while the dense leg ranks it nowhere; rank fusion then lets chunks
  that both legs rank modestly outrank it, a score combination does not (Bruch et al., "An Analysis of
  Fusion Functions for Hybrid Retrieval", 2023, found the tuned convex combination better than RRF on
  BEIR as well).
- ``rrf``: weighted reciprocal-rank fusion, ``sum(weight / (rrf_k + rank))`` (Cormack et al. 2009),
  relevance divided by the best possible (first in both legs).

``relevance`` is in 0..1 and monotone in the fused score. ``FUSION`` (convex, ``alpha = 0.5``, depth 100) was
chosen on BEIR SciFact's train split only (``benchmarks/retrieval.py --tune``); the grid and the test figures
are in docs/decisions/0011-convex-score-fusion.md.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


class FusionMethod(StrEnum):
    CONVEX = "convex"
    RRF = "rrf"


@dataclass(frozen=True)
class FusionParams:
    method: FusionMethod = FusionMethod.CONVEX
    alpha: float = 0.5
    """Convex: the dense leg's share; ``1 - alpha`` goes to the lexical leg."""
    rrf_k: float = 60.0
    dense_weight: float = 1.0
    lexical_weight: float = 1.0
    depth: int = 100
    """How many candidates each leg contributes at least (``candidates``)."""


FUSION = FusionParams()


@dataclass(frozen=True)
class FusedHit(Generic[K]):
    key: K
    relevance: float
    dense_score: float | None
    lexical_score: float | None


def candidates(n: int, params: FusionParams = FUSION) -> int:
    """How many candidates each leg contributes for a final top ``n``: ``n`` and never fewer than ``depth``,
    so a chunk ranked modestly by both legs can still rise above one ranked high by a single leg."""
    return max(n, params.depth)


def fuse(
    dense: Sequence[tuple[K, float]],
    lexical: Sequence[tuple[K, float]],
    n: int,
    params: FusionParams = FUSION,
    *,
    lexical_ceiling: float = 1.0,
    keep: int | None = None,
) -> list[FusedHit[K]]:
    """The ``n`` best keys of the two best-first lists of ``(key, leg score)``, best first (``keep``: return
    that many instead, ranked as for a top ``n``, for a caller that collapses them further).

    Dense scores are relevances in 0..1; lexical scores are BM25 scores whose upper bound for this query is
    ``lexical_ceiling`` (the hits report them as given). Equal fused scores keep the order in which the keys
    were first met: dense list first, then lexical. A key repeated within one list counts once, at its best
    rank."""
    dense_scores = _first_scores(dense)
    lexical_scores = _first_scores(lexical)
    if params.method == FusionMethod.RRF:
        fused = _rrf(list(dense_scores), list(lexical_scores), params)
    else:
        depth = candidates(n, params)
        fused = _convex(dense_scores, lexical_scores, params.alpha, max(lexical_ceiling, 1e-12), depth)
    order = sorted(fused, key=fused.__getitem__, reverse=True)[: max(n if keep is None else keep, 0)]
    return [
        FusedHit(key, min(1.0, max(0.0, fused[key])), dense_scores.get(key), lexical_scores.get(key)) for key in order
    ]


def _first_scores(ranking: Sequence[tuple[K, float]]) -> dict[K, float]:
    scores: dict[K, float] = {}
    for key, score in ranking:
        scores.setdefault(key, score)
    return scores


def _convex(dense: dict[K, float], lexical: dict[K, float], alpha: float, ceiling: float, depth: int) -> dict[K, float]:
    dense_floor = _floor(dense, depth)
    lexical_floor = _floor(lexical, depth) / ceiling
    keys = list(dict.fromkeys([*dense, *lexical]))
    return {
        key: alpha * dense.get(key, dense_floor)
        + (1.0 - alpha) * (lexical[key] / ceiling if key in lexical else lexical_floor)
        for key in keys
    }


def _floor(scores: dict[K, float], depth: int) -> float:
    """What a key missing from a leg's list scores there: below the last listed when the list was cut at
    ``depth``; nothing when the leg returned fewer (it listed every chunk it scores at all)."""
    return min(scores.values()) if len(scores) >= depth else 0.0


def _rrf(dense: list[K], lexical: list[K], params: FusionParams) -> dict[K, float]:
    best = (params.dense_weight + params.lexical_weight) / (params.rrf_k + 1.0)
    fused: dict[K, float] = {}
    for ranking, weight in ((dense, params.dense_weight), (lexical, params.lexical_weight)):
        for rank, key in enumerate(ranking, start=1):
            fused[key] = fused.get(key, 0.0) + weight / (params.rrf_k + rank)
    return {key: score / best if best > 0 else 0.0 for key, score in fused.items()}
