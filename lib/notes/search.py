"""Searching the kb (spec 002's ``POST /api/v1/search``): dense, lexical (BM25) or both fused.

Both legs score exactly the same chunks: the live generation of every registered document carrying all the
requested tags (``lib.notes.index``). The dense leg is an exact cosine over their vectors, the lexical leg
BM25 over the snapshot's segmented index masked to those documents (IDF and average length from their
chunks alone), and ``rank_by_mode`` makes the final ranking (``rank_snapshot``, which needs no store). A
note being rewritten is searched in its old text until the registry flips to the new one, and in the new
text only from then on.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

import numpy as np

from lib.notes.index import Snapshot
from lib.notes.models import SearchHit, SearchResult
from lib.notes.registry import check_tags
from lib.notes.stores import NoteStores
from lib.observability.metrics import searches
from lib.retrieval.fusion import FusedHit
from lib.retrieval.modes import SearchMode, check_mode
from lib.retrieval.queries import check_query, check_result_count
from lib.retrieval.ranking import leg_depth, rank_by_mode

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
    fused, texts = rank_snapshot(snapshot, query, vector, allowed, search_mode, top)
    records = {r.document_id: r for r in stores.registry.get_many(sorted({f.key[0] for f in fused}))}
    results = [
        SearchHit(
            document_id=doc_id,
            chunk_index=index,
            text=texts[(doc_id, index)],
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
        for hit in fused
        for doc_id, index in [hit.key]
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
) -> tuple[list[FusedHit[Key]], dict[Key, str]]:
    """The ``top`` best chunks of the documents in ``allowed`` (``None``: all) for ``query`` in ``mode``, and
    the texts of the chunks named. The dense leg runs when ``vector`` (the query's) is given, the lexical leg
    unless ``mode`` is dense; both see exactly the allowed documents' live chunks."""
    depth = leg_depth(mode, top)
    index = snapshot.index
    dense = index.dense(vector, depth, index.hidden(allowed)) if vector is not None and index.rows else []
    lexical, ceiling = index.ranked_lexical(query, depth, allowed) if mode != SearchMode.DENSE else ([], 1.0)
    texts = {_key(chunk.metadata): chunk.text for chunk, _ in [*dense, *lexical]}
    fused = rank_by_mode(
        mode,
        [(_key(c.metadata), s) for c, s in dense],
        [(_key(c.metadata), s) for c, s in lexical],
        top,
        lexical_ceiling=ceiling,
    )
    return fused, texts


def _key(metadata: Mapping[str, object]) -> Key:
    return int(str(metadata["document_id"])), int(str(metadata["chunk_index"]))
