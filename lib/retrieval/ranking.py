"""One ranking per search mode, so each store's search only gathers its two legs' candidates.

Every search (policies, application documents, kb notes, governance) collects a dense list and a lexical
list, both already filtered, and asks ``rank_by_mode`` for the final top ``n``: ``dense`` and ``lexical``
keep one leg's order, ``hybrid`` fuses them (``lib.retrieval.fusion.fuse``). Each hit has one ``relevance``
in 0..1 and the leg scores it came from.
"""

from __future__ import annotations

from collections.abc import Sequence

from lib.retrieval.fusion import FUSION, FusedHit, FusionParams, K, candidates, fuse
from lib.retrieval.modes import SearchMode


def leg_depth(mode: SearchMode, n: int, params: FusionParams = FUSION) -> int:
    """How many candidates each leg should gather for a final top ``n`` in ``mode``."""
    return candidates(n, params) if mode == SearchMode.HYBRID else n


def rank_by_mode(
    mode: SearchMode,
    dense: Sequence[tuple[K, float]],
    lexical: Sequence[tuple[K, float]],
    n: int,
    *,
    lexical_ceiling: float = 1.0,
    params: FusionParams = FUSION,
) -> list[FusedHit[K]]:
    """The ``n`` best keys, best first. ``dense`` holds relevances in 0..1; ``lexical`` BM25 scores whose
    upper bound for the query is ``lexical_ceiling`` (``bm25_rank(...).ceiling``); a lexical-only ranking
    reports ``score / lexical_ceiling`` as its relevance. Lists are best first; the leg a mode does not use
    may be empty (and need not be computed)."""
    if mode == SearchMode.DENSE:
        return [FusedHit(key, min(1.0, max(0.0, score)), score, None) for key, score in dense[:n]]
    if mode == SearchMode.LEXICAL:
        ceiling = max(lexical_ceiling, 1e-12)
        return [FusedHit(key, min(1.0, score / ceiling), None, score) for key, score in lexical[:n]]
    return fuse(dense, lexical, n, params, lexical_ceiling=lexical_ceiling)
