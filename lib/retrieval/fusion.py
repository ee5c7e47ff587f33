"""Fusing the dense and lexical legs' rankings into one: weighted reciprocal-rank fusion.

Each leg gives its candidates best first; a candidate's fused score is the sum over the legs that found it of
``weight / (rrf_k + rank)`` (rank from 1). Only ranks are used, so the legs' incomparable scales (a cosine
in 0..1, an unbounded BM25) need no calibration. ``relevance`` is the fused score divided by the largest
possible one (first in both legs), so it is in 0..1, 1 only for a chunk both legs rank first, and monotone
in the fused score.

``FUSION`` starts as plain reciprocal-rank fusion (``rrf_k = 60``, equal weights, Cormack et al. 2009); its
values are replaced by the ones tuned on BEIR SciFact's train split (``benchmarks/retrieval.py``), and only
``FusionParams``' defaults change when they are.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)


@dataclass(frozen=True)
class FusionParams:
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
    dense: Sequence[tuple[K, float]], lexical: Sequence[tuple[K, float]], n: int, params: FusionParams = FUSION
) -> list[FusedHit[K]]:
    """The ``n`` best keys of the two best-first lists of ``(key, leg score)``, best first.

    Equal fused scores keep the order in which the keys were first met: dense list first, then lexical,
    so the result is a function of the two inputs alone. A key repeated within one list counts once, at
    its best rank."""
    best = params.dense_weight / (params.rrf_k + 1.0) + params.lexical_weight / (params.rrf_k + 1.0)
    fused: dict[K, float] = {}
    dense_scores: dict[K, float] = {}
    lexical_scores: dict[K, float] = {}
    for ranking, weight, scores in ((dense, params.dense_weight, dense_scores),
                                    (lexical, params.lexical_weight, lexical_scores)):  # fmt: skip
        for rank, (key, score) in enumerate(ranking, start=1):
            if key in scores:
                continue
            scores[key] = score
            fused[key] = fused.get(key, 0.0) + weight / (params.rrf_k + rank)
    order = sorted(fused, key=fused.__getitem__, reverse=True)[: max(n, 0)]
    return [
        FusedHit(key, min(1.0, fused[key] / best) if best > 0 else 0.0, dense_scores.get(key), lexical_scores.get(key))
        for key in order
    ]
