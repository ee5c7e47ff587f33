"""One ranking per search mode, so each store's search only gathers its two legs' candidates, both already
filtered: ``dense`` and ``lexical`` keep one leg's order, ``hybrid`` fuses them. Each hit has one ``relevance`` in
0..1 and the leg scores it came from; a ranking may be collapsed per document (``per_document``: at most that
many chunks of one document in the top ``n``).

Fusion is a function of the two legs' candidate lists alone, so every replica fuses alike:

- ``convex`` (the default): ``alpha * dense + (1 - alpha) * lexical``, each leg's score on a fixed 0..1
  scale: the dense leg's relevance (``1 - L2/2`` of unit vectors) as it is, the lexical leg's BM25 score
  divided by the query's ceiling (the score of a chunk holding every query term at saturation). A key missing
  from one leg's candidates gets that leg's lowest listed score when the list was cut at ``candidates(n)``,
  and 0 when the leg listed fewer (BM25 lists every chunk holding a query term). Scores rather than ranks:
  "paragraph 116" makes one chunk the lexical leg's clear winner while the dense leg ranks it nowhere, and
  rank fusion would let chunks both legs rank modestly outrank it.
- ``rrf``: weighted reciprocal-rank fusion, ``sum(weight / (rrf_k + rank))``, relevance divided by the best
  possible (first in both legs).

``FUSION`` (convex, ``alpha = 0.5``, depth 100) was chosen on BEIR SciFact's train split only
(``benchmarks/retrieval.py --tune``; figures: docs/decisions/0011-convex-score-fusion.md).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Generic, TypeVar

from lib.observability import search_leg
from lib.retrieval.arguments import SearchMode
from lib.retrieval.corpus_index import HeldChunk
from lib.stores.chroma import StoredChunk

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
    return [FusedHit(*entry) for entry in _fused(dense, lexical, n, params, lexical_ceiling, keep)]


Entry = tuple[K, float, float | None, float | None]
"""A ``FusedHit``'s fields as a plain tuple: what a ranking works in until it knows which hits it keeps."""


def _fused(
    dense: Sequence[tuple[K, float]],
    lexical: Sequence[tuple[K, float]],
    n: int,
    params: FusionParams,
    lexical_ceiling: float,
    keep: int | None,
) -> list[Entry[K]]:
    """``fuse``'s answer as ``Entry`` tuples."""
    dense_scores = _first_scores(dense)
    lexical_scores = _first_scores(lexical)
    if params.method == FusionMethod.RRF:
        fused = _rrf(list(dense_scores), list(lexical_scores), params)
    else:
        depth = candidates(n, params)
        fused = _convex(dense_scores, lexical_scores, params.alpha, max(lexical_ceiling, 1e-12), depth)
    order = sorted(fused, key=fused.__getitem__, reverse=True)[: max(n if keep is None else keep, 0)]
    dense_get, lexical_get = dense_scores.get, lexical_scores.get
    return [(key, min(1.0, max(0.0, fused[key])), dense_get(key), lexical_get(key)) for key in order]


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


COLLAPSE_HEADROOM = 3
"""A collapsed ranking first looks at ``COLLAPSE_HEADROOM * n`` keys for its top ``n``, and at all of them only
when duplicates leave it short."""


def leg_depth(mode: SearchMode, n: int, params: FusionParams = FUSION, *, per_document: int | None = None) -> int:
    """How many candidates each leg should gather for a final top ``n`` in ``mode`` (a collapsed ranking
    needs the hybrid depth in every mode: chunks past a document's limit make room for others)."""
    return candidates(n, params) if mode == SearchMode.HYBRID or per_document is not None else n


@search_leg("fuse")
def rank_by_mode(
    mode: SearchMode,
    dense: Sequence[tuple[K, float]],
    lexical: Sequence[tuple[K, float]],
    n: int,
    *,
    lexical_ceiling: float = 1.0,
    params: FusionParams = FUSION,
    document: Callable[[K], Hashable] | None = None,
    per_document: int | None = None,
) -> list[FusedHit[K]]:
    """The ``n`` best keys, best first. ``dense`` holds relevances in 0..1; ``lexical`` BM25 scores whose
    upper bound for the query is ``lexical_ceiling`` (``bm25_rank(...).ceiling``); a lexical-only ranking
    reports ``score / lexical_ceiling`` as its relevance. Lists are best first; the leg a mode does not use
    may be empty (and need not be computed). With ``document`` and ``per_document``, at most that many keys of
    one document are kept (the ranking of the rest unchanged)."""
    if document is None or per_document is None:
        return [FusedHit(*entry) for entry in _ranked_keys(mode, dense, lexical, n, n, lexical_ceiling, params)]
    everything = len(dense) + len(lexical)
    keep = min(everything, COLLAPSE_HEADROOM * n)
    kept = collapse(_ranked_keys(mode, dense, lexical, n, keep, lexical_ceiling, params), document, per_document, n)
    if len(kept) < n and keep < everything:  # more duplicates than the headroom: rank them all
        kept = collapse(
            _ranked_keys(mode, dense, lexical, n, everything, lexical_ceiling, params), document, per_document, n
        )
    return [FusedHit(*entry) for entry in kept]


def _ranked_keys(
    mode: SearchMode,
    dense: Sequence[tuple[K, float]],
    lexical: Sequence[tuple[K, float]],
    n: int,
    keep: int,
    lexical_ceiling: float,
    params: FusionParams,
) -> list[Entry[K]]:
    """The first ``keep`` keys of one mode's ranking (fused for a final top ``n``), as ``Entry`` tuples."""
    if mode == SearchMode.DENSE:
        return [(key, min(1.0, max(0.0, score)), score, None) for key, score in dense[:keep]]
    if mode == SearchMode.LEXICAL:
        ceiling = max(lexical_ceiling, 1e-12)
        return [(key, min(1.0, score / ceiling), None, score) for key, score in lexical[:keep]]
    return _fused(dense, lexical, n, params, lexical_ceiling, keep)


def collapse(entries: Sequence[Entry[K]], document: Callable[[K], Hashable], limit: int, n: int) -> list[Entry[K]]:
    """The first ``n`` of ``entries`` keeping at most ``limit`` of each ``document(key)``, in their order."""
    counts: dict[Hashable, int] = {}
    kept: list[Entry[K]] = []
    for entry in entries:
        owner = document(entry[0])
        seen = counts.get(owner, 0)
        if seen < limit:
            counts[owner] = seen + 1
            kept.append(entry)
            if len(kept) == n:
                break
    return kept


@dataclass(frozen=True)
class RankedChunk:
    chunk: StoredChunk
    relevance: float
    dense_score: float | None
    lexical_score: float | None


def rank_chunks(
    mode: SearchMode,
    dense: Sequence[tuple[StoredChunk, float]],
    lexical: Sequence[tuple[StoredChunk, float]],
    n: int,
    *,
    lexical_ceiling: float = 1.0,
    per_document: int | None = None,
    document_fields: tuple[str, ...] = (),
    params: FusionParams = FUSION,
) -> list[RankedChunk]:
    """``rank_by_mode`` over two legs of stored chunks (keyed by chunk id); with ``per_document``, at most that
    many chunks sharing the values of ``document_fields`` in their metadata (a governance document's
    ``doc_id``; a policy section: ``revision_ref`` and ``section_ref``); ``params``: the fusion's."""
    chunks = {chunk.id: chunk for chunk, _ in dense} | {chunk.id: chunk for chunk, _ in lexical}

    def document(key: str) -> Hashable:
        chunk = chunks[key]
        if type(chunk) is HeldChunk:  # its slice's values of the fields, made once per slice
            return chunk.document(document_fields)
        return tuple(map(chunk.metadata.get, document_fields))

    ranked = rank_by_mode(
        mode,
        [(c.id, s) for c, s in dense],
        [(c.id, s) for c, s in lexical],
        n,
        lexical_ceiling=lexical_ceiling,
        params=params,
        document=document if per_document is not None else None,
        per_document=per_document,
    )
    return [RankedChunk(chunks[h.key], h.relevance, h.dense_score, h.lexical_score) for h in ranked]
