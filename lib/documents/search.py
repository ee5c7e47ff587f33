"""Searching application documents (spec 003 FR-002, issue 10): dense, lexical (BM25) or both fused.

Both legs search the corpus index (``lib.documents.index``: one slice per application, served under the
application's generation in Redis) of exactly the applications ``application_ref`` allows, masked to the
``document_types`` asked for, so the dense leg is exact over the chunks that pass and BM25's statistics come
from them alone; ``lib.retrieval.search`` ranks. A slice holds only the chunks of documents registered
under its generation, so a half-written or half-deleted document is never in results.
"""

from __future__ import annotations

from collections.abc import Sequence

from lib.documents.classification import check_document_type
from lib.documents.models import DocumentHit, DocumentSearchResult
from lib.documents.registry import check_application_ref
from lib.documents.stores import DocumentStores
from lib.observability.metrics import searches
from lib.retrieval import (
    LexicalAnswer,
    Query,
    SearchMode,
    check_mode,
    check_query,
    check_result_count,
    dense_relevances,
    search,
)
from lib.stores.chroma import StoredChunk, relevance
from lib.text.printed_pages import from_stored

DEFAULT_MAX_RESULTS = 10


def search_application_docs(
    stores: DocumentStores,
    query: str,
    application_ref: str | None = None,
    document_types: Sequence[str] | None = None,
    max_results: int = DEFAULT_MAX_RESULTS,
    mode: str = SearchMode.HYBRID,
) -> DocumentSearchResult:
    """The ``max_results`` best chunks for ``query``, filtered by application and/or types, best first."""
    check_query(query)
    check_result_count(max_results, stores.settings.search.max_results, "max_results")
    search_mode = check_mode(mode)
    ref = check_application_ref(application_ref) if application_ref is not None else None
    types = list(dict.fromkeys(check_document_type(t) for t in document_types)) if document_types else None
    registry = stores.registry
    refs = [ref] if ref is not None else stores.index.application_refs(registry.generation(), registry.application_refs)
    indexes = stores.index.held(dict(zip(refs, registry.application_generations(refs), strict=True)))
    allowed = frozenset(types) if types else None
    rows = [index.rows_where("document_type", allowed) for index in indexes] if allowed else None
    scope = tuple(sorted(allowed)) if allowed else ()
    searches.labels("documents", search_mode.value).inc()

    vector = stores.embedder.embed_queries([query])[0] if search_mode != SearchMode.LEXICAL else None

    def dense_leg(depth: int) -> list[tuple[StoredChunk, float]]:
        if vector is None:
            return []
        found = stores.index.indexes.dense(vector, depth, indexes, rows, scope)
        return [(c, relevance(c.distance or 0.0)) for c in found]

    def lexical_leg(depth: int) -> LexicalAnswer:
        answer = stores.index.indexes.lexical(query, depth, indexes, rows, scope)
        return LexicalAnswer([(chunk, score / answer.ceiling) for chunk, score in answer.hits], 1.0)

    ranked = search(
        Query(query, max_results, search_mode),
        dense_leg,
        lexical_leg,
        rows=sum(len(index.ids) for index in indexes or ()),
        helpers=stores.settings.search.leg_helpers,
    )
    relevances: dict[str, float] = {}
    if vector is not None:  # spec 003 FR-002's relevance also for a hit only the lexical leg found
        relevances = dense_relevances(vector, [r.chunk.id for r in ranked if r.dense_score is None], indexes or [])
    results = [
        _hit(
            r.chunk,
            r.relevance,
            dense=r.dense_score,
            lexical=r.lexical_score,
            relevance_score=r.dense_score if r.dense_score is not None else relevances.get(r.chunk.id),
        )
        for r in ranked
    ]
    return DocumentSearchResult(query=query, mode=search_mode.value, results_count=len(results), results=results)


def _hit(
    chunk: StoredChunk,
    score: float,
    *,
    relevance_score: float | None = None,
    dense: float | None = None,
    lexical: float | None = None,
) -> DocumentHit:
    return DocumentHit(
        chunk_id=chunk.id,
        text=chunk.text,
        relevance_score=None if relevance_score is None else round(relevance_score, 4),
        score=round(score, 4),
        metadata={**chunk.metadata, "printed_page": from_stored(chunk.metadata.get("printed_page"))},
        printed_page=from_stored(chunk.metadata.get("printed_page")),
        dense_score=None if dense is None else round(dense, 4),
        lexical_score=None if lexical is None else round(lexical, 4),
    )
