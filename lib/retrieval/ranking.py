"""One ranking per search mode, so each store's search only gathers its two legs' candidates.

Every search (policies, application documents, kb notes, governance) collects a dense list and a lexical
list, both already filtered, and asks ``rank_by_mode`` (keys) or ``rank_chunks`` (stored chunks) for the final
top ``n``: ``dense`` and ``lexical`` keep one leg's order, ``hybrid`` fuses them (``lib.retrieval.fusion``).
Each hit has one ``relevance`` in 0..1 and the leg scores it came from. A search may also collapse the
ranking per document (``per_document``: at most that many chunks of one document in the top ``n``).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from lib.observability import search_leg
from lib.retrieval.fusion import FUSION, FusedHit, FusionParams, K, candidates, fuse
from lib.retrieval.modes import SearchMode
from lib.stores.chroma import StoredChunk

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
        return _ranked_keys(mode, dense, lexical, n, n, lexical_ceiling, params)
    everything = len(dense) + len(lexical)
    keep = min(everything, COLLAPSE_HEADROOM * n)
    kept = collapse(_ranked_keys(mode, dense, lexical, n, keep, lexical_ceiling, params), document, per_document, n)
    if len(kept) < n and keep < everything:  # more duplicates than the headroom: rank them all
        kept = collapse(
            _ranked_keys(mode, dense, lexical, n, everything, lexical_ceiling, params), document, per_document, n
        )
    return kept


def _ranked_keys(
    mode: SearchMode,
    dense: Sequence[tuple[K, float]],
    lexical: Sequence[tuple[K, float]],
    n: int,
    keep: int,
    lexical_ceiling: float,
    params: FusionParams,
) -> list[FusedHit[K]]:
    """The first ``keep`` keys of one mode's ranking (fused for a final top ``n``)."""
    if mode == SearchMode.DENSE:
        return [FusedHit(key, min(1.0, max(0.0, score)), score, None) for key, score in dense[:keep]]
    if mode == SearchMode.LEXICAL:
        ceiling = max(lexical_ceiling, 1e-12)
        return [FusedHit(key, min(1.0, score / ceiling), None, score) for key, score in lexical[:keep]]
    return fuse(dense, lexical, n, params, lexical_ceiling=lexical_ceiling, keep=keep)


def collapse(hits: Sequence[FusedHit[K]], document: Callable[[K], Hashable], limit: int, n: int) -> list[FusedHit[K]]:
    """The first ``n`` of ``hits`` keeping at most ``limit`` of each ``document(key)``, in their order."""
    counts: Counter[Hashable] = Counter()
    kept: list[FusedHit[K]] = []
    for hit in hits:
        owner = document(hit.key)
        if counts[owner] < limit:
            counts[owner] += 1
            kept.append(hit)
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
    ranked = rank_by_mode(
        mode,
        [(c.id, s) for c, s in dense],
        [(c.id, s) for c, s in lexical],
        n,
        lexical_ceiling=lexical_ceiling,
        params=params,
        document=(
            (lambda key: tuple(map(chunks[key].metadata.get, document_fields))) if per_document is not None else None
        ),
        per_document=per_document,
    )
    return [RankedChunk(chunks[h.key], h.relevance, h.dense_score, h.lexical_score) for h in ranked]
