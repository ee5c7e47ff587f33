"""Searching application documents (spec 003 FR-002, issue 10): dense, lexical (BM25) or both fused.

Both legs apply the same filters before ranking: the dense leg through Chroma's where-clause on
``application_ref`` and ``document_type``, the lexical leg by searching only the blocks of the allowed
applications and types (``lib.documents.lexical``), so BM25's statistics come from exactly the chunks that
pass. ``hybrid`` (the default) takes ``lib.retrieval.fusion.candidates`` from each leg and fuses their
rankings with ``lib.retrieval.fusion.fuse``.

The registry decides what exists: an ingestion registers a document after its chunks are written and a
deletion unregisters it before they are removed, so chunks whose document is not registered are hidden
from both legs before fusion, and a half-written or half-deleted document is never in results.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any

from lib.documents.classification import check_document_type
from lib.documents.lexical import ApplicationBlock, LexicalHits, lexical_search, load_application_block
from lib.documents.models import DocumentHit, DocumentSearchResult
from lib.documents.registry import check_application_ref
from lib.kb import DocumentStores, KnowledgeBase
from lib.retrieval.fusion import candidates, fuse
from lib.retrieval.modes import SearchMode, check_mode
from lib.retrieval.queries import check_query, check_result_count
from lib.stores.chroma import StoredChunk, relevance

logger = logging.getLogger(__name__)

DEFAULT_MAX_RESULTS = 10


def search_application_docs(
    kb: KnowledgeBase,
    query: str,
    application_ref: str | None = None,
    document_types: Sequence[str] | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
    mode: str = SearchMode.HYBRID,
) -> DocumentSearchResult:
    """The ``max_results`` best chunks for ``query``, filtered by application and/or types, best first."""
    check_query(query)
    check_result_count(max_results, kb.settings.max_results, "max_results")
    search_mode = check_mode(mode)
    ref = check_application_ref(application_ref) if application_ref is not None else None
    types = list(dict.fromkeys(check_document_type(t) for t in document_types)) if document_types else None
    stores = kb.documents
    depth = candidates(max_results) if search_mode == SearchMode.HYBRID else max_results

    dense: list[tuple[StoredChunk, float]] = []
    if search_mode != SearchMode.LEXICAL:
        where = _where(ref, types)
        dense = [(c, relevance(c.distance or 0.0)) for c in stores.chunks.query(_embed(kb, query), depth, where)]
    lexical = LexicalHits([], 0.0)
    if search_mode != SearchMode.DENSE:
        lexical = lexical_search(query, _blocks(stores, ref), types, depth)
    lexical_hits = [(chunk, score / lexical.ceiling) for chunk, score in lexical.hits]
    dense, lexical_hits = _registered(stores, dense, lexical_hits)

    if search_mode == SearchMode.DENSE:
        results = [_hit(chunk, score, dense=score) for chunk, score in dense[:max_results]]
    elif search_mode == SearchMode.LEXICAL:
        results = [_hit(chunk, score, lexical=score) for chunk, score in lexical_hits[:max_results]]
    else:
        chunks = {chunk.id: chunk for chunk, _ in [*dense, *lexical_hits]}
        fused = fuse([(c.id, s) for c, s in dense], [(c.id, s) for c, s in lexical_hits], max_results)
        results = [_hit(chunks[f.key], f.relevance, dense=f.dense_score, lexical=f.lexical_score) for f in fused]
    return DocumentSearchResult(query=query, mode=search_mode.value, results_count=len(results), results=results)


def _where(ref: str | None, types: list[str] | None) -> dict[str, Any] | None:
    filters: list[dict[str, Any]] = []
    if ref is not None:
        filters.append({"application_ref": ref})
    if types:
        filters.append({"document_type": {"$in": types}})
    return filters[0] if len(filters) == 1 else ({"$and": filters} if filters else None)


def _embed(kb: KnowledgeBase, query: str) -> list[float]:
    vector: list[float] = kb.embedder.embed_queries([query])[0].tolist()
    return vector


def _blocks(stores: DocumentStores, ref: str | None) -> list[ApplicationBlock]:
    """The lexical blocks of ``ref`` (every application without it), each current for its generation."""
    registry, cache = stores.registry, stores.chunks.lexical
    refs = [ref] if ref is not None else cache.application_refs(registry.generation(), registry.application_refs)
    blocks: list[ApplicationBlock] = []
    for application_ref, generation in zip(refs, registry.application_generations(refs), strict=True):
        block = cache.get(application_ref, generation)
        if block is None:
            registered = registry.application_ids(application_ref)  # read after the generation: never newer
            block = load_application_block(stores.chunks, application_ref, generation, registered)
            cache.put(block)
            logger.info(
                "documents.lexical_block_loaded application_ref=%s generation=%d types=%d chunks=%d",
                application_ref, generation, len(block.types), sum(len(t.chunks) for t in block.types.values()),
            )  # fmt: skip
        blocks.append(block)
    return blocks


ScoredChunks = list[tuple[StoredChunk, float]]


def _registered(
    stores: DocumentStores, dense: ScoredChunks, lexical: ScoredChunks
) -> tuple[ScoredChunks, ScoredChunks]:
    """Both legs without chunks of unregistered documents (one registry round trip for both)."""
    owners = sorted({str(c.metadata.get("document_id", "")) for c, _ in [*dense, *lexical]})
    shown = {owner for owner, ok in zip(owners, stores.registry.registered(owners), strict=True) if ok}
    if len(shown) < len(owners):
        logger.warning("documents.unregistered_chunks_hidden documents=%d", len(owners) - len(shown))
    keep = [[(c, s) for c, s in leg if c.metadata.get("document_id") in shown] for leg in (dense, lexical)]
    return keep[0], keep[1]


def _hit(chunk: StoredChunk, score: float, *, dense: float | None = None, lexical: float | None = None) -> DocumentHit:
    return DocumentHit(
        chunk_id=chunk.id,
        text=chunk.text,
        relevance_score=round(score, 4),
        metadata=chunk.metadata,
        dense_score=None if dense is None else round(dense, 4),
        lexical_score=None if lexical is None else round(lexical, 4),
    )
