"""Searching the kb (spec 002's ``POST /api/v1/search``): dense, lexical (BM25) or both fused.

Both legs score exactly the same chunks: the live generation of every registered document carrying all the
requested tags (``lib.notes.index``). The dense leg is an exact cosine over their vectors, the lexical leg
BM25 over the snapshot's segmented index masked to those documents (IDF and average length from their
chunks alone), and ``lib.retrieval.search`` makes the final ranking (``rank_snapshot``, which needs no store). A
note being rewritten is searched in its old text until the registry flips to the new one, and in the new
text only from then on.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from lib.notes.index import Snapshot
from lib.notes.models import SearchHit, SearchResult
from lib.notes.registry import check_tags
from lib.notes.stores import NoteStores
from lib.observability.metrics import searches
from lib.retrieval import Hit, LexicalAnswer, Query, SearchMode, check_mode, check_query, check_result_count, search
from lib.stores.chroma import StoredChunk

DEFAULT_TOP = 10
Key = tuple[int, int]
"""A chunk: (document_id, chunk_index)."""


def search_notes(
    stores: NoteStores,
    query: str,
    top: int = DEFAULT_TOP,
    tags: Sequence[str] | None = None,
    *,
    fts_only: bool = False,
    mode: str | None = None,
) -> SearchResult:
    """The ``top`` best chunks for ``query`` among documents carrying every tag of ``tags``, best first.
    ``fts_only`` is spec 002's name for the lexical mode and wins over ``mode``."""
    check_query(query)
    check_result_count(top, stores.settings.search.max_results, "top")
    search_mode = SearchMode.LEXICAL if fts_only else check_mode(mode or SearchMode.HYBRID)
    wanted = check_tags(tags or [])
    searches.labels("notes", search_mode.value).inc()
    snapshot = stores.index.snapshot(stores.registry, stores.chunks)
    allowed = stores.registry.tagged(wanted) if wanted else None
    searchable = bool(snapshot.documents) and (allowed is None or bool(allowed))
    vector = None
    if search_mode != SearchMode.LEXICAL and searchable:
        vector = stores.embedder.embed_queries([query])[0]
    hits = rank_snapshot(snapshot, query, vector, allowed, search_mode, top)
    records = {r.document_id: r for r in stores.registry.get_many(sorted({key(hit)[0] for hit in hits}))}
    results = [
        SearchHit(
            document_id=doc_id,
            chunk_index=index,
            text=hit.chunk.text,
            score=round(hit.relevance, 4),
            dense_score=None if hit.dense_score is None else round(hit.dense_score, 4),
            lexical_score=None if hit.lexical_score is None else round(hit.lexical_score, 4),
            title=record.title,
            source_path=record.source_path,
            kind=record.kind,
            filename=record.filename,
            tags=record.tags,
            created_at=record.created_at,
            updated_at=record.updated_at,
        )
        for hit in hits
        for doc_id, index in [key(hit)]
        if (record := records.get(doc_id)) is not None
    ]
    return SearchResult(query=query, mode=search_mode.value, results=results)


def rank_snapshot(
    snapshot: Snapshot,
    query: str,
    vector: np.ndarray | None,
    allowed: Collection[int] | None,
    mode: SearchMode,
    top: int,
) -> list[Hit]:
    """The ``top`` best chunks of the documents in ``allowed`` (``None``: all) for ``query`` in ``mode``. The
    dense leg runs when ``vector`` (the query's) is given, the lexical leg unless ``mode`` is dense; both see
    exactly the allowed documents' live chunks."""
    index = snapshot.index

    def dense(depth: int) -> list[tuple[StoredChunk, float]]:
        return index.dense(vector, depth, index.hidden(allowed)) if vector is not None and index.rows else []

    def lexical(depth: int) -> LexicalAnswer:
        return LexicalAnswer(*index.ranked_lexical(query, depth, allowed))

    return search(Query(query, top, mode), dense, lexical)


def key(hit: Hit) -> Key:
    """The (document_id, chunk_index) of a hit."""
    return int(str(hit.chunk.metadata["document_id"])), int(str(hit.chunk.metadata["chunk_index"]))
