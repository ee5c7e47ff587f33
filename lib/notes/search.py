"""Searching the kb (spec 002's ``POST /api/v1/search``): dense, lexical (BM25) or both fused.

Both legs score exactly the same chunks: the live generation of every registered document carrying all the
requested tags (``lib.notes.index``). The dense leg is an exact cosine over their vectors, the lexical leg
BM25 over the snapshot's segmented index masked to those documents (IDF and average length from their
chunks alone), and ``rank_by_mode`` makes the final ranking (``rank_snapshot``, which needs no store). A
note being rewritten is searched in its old text until the registry flips to the new one, and in the new
text only from then on.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import numpy as np

from lib.kb import KnowledgeBase
from lib.notes.index import Snapshot
from lib.notes.models import SearchHit, SearchResult
from lib.notes.registry import check_tags
from lib.retrieval.dense import column_scores
from lib.retrieval.fusion import FusedHit
from lib.retrieval.modes import SearchMode, check_mode
from lib.retrieval.queries import check_query, check_result_count
from lib.retrieval.ranking import leg_depth, rank_by_mode
from lib.stores.chroma import StoredChunk

DEFAULT_TOP = 10
Key = tuple[int, int]
"""A chunk: (document_id, chunk_index)."""


def search_notes(
    kb: KnowledgeBase,
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
    check_result_count(top, kb.settings.max_results, "top")
    search_mode = SearchMode.LEXICAL if fts_only else check_mode(mode or SearchMode.HYBRID)
    wanted = check_tags(tags or [])
    stores = kb.notes
    snapshot = stores.index.snapshot(stores.registry, stores.chunks)
    allowed = stores.registry.tagged(wanted) if wanted else None
    searchable = bool(snapshot.documents) and (allowed is None or bool(allowed))
    vector = None
    if search_mode != SearchMode.LEXICAL and searchable:
        vector = kb.embedder.embed_queries([query])[0]
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
    texts: dict[Key, str] = {}
    dense: list[tuple[Key, float]] = []
    if vector is not None:
        for chunk, score in _dense(snapshot, allowed, vector, depth):
            texts[_key(chunk.metadata)] = chunk.text
            dense.append((_key(chunk.metadata), score))
    lexical: list[tuple[Key, float]] = []
    ceiling = 1.0
    if mode != SearchMode.DENSE:
        ranking = snapshot.lexical.rank(query, depth, allowed)
        for hit in ranking.hits:
            chunk = snapshot.chunk(hit.key, hit.position)
            texts[_key(chunk.metadata)] = chunk.text
            lexical.append((_key(chunk.metadata), hit.score))
        ceiling = ranking.ceiling
    return rank_by_mode(mode, dense, lexical, top, lexical_ceiling=ceiling), texts


def _key(metadata: dict[str, object]) -> Key:
    return int(str(metadata["document_id"])), int(str(metadata["chunk_index"]))


def _dense(
    snapshot: Snapshot, allowed: Collection[int] | None, vector: np.ndarray, depth: int
) -> list[tuple[StoredChunk, float]]:
    """The ``depth`` live chunks of the ``allowed`` documents nearest to ``vector`` (unit vectors: cosine)."""
    if not snapshot.rows:
        return []
    scores = column_scores(snapshot.columns, vector, snapshot.rows)
    if allowed is not None:
        scores = np.where(np.isin(snapshot.row_ids, np.fromiter(allowed, np.int64, len(allowed))), scores, -np.inf)
    count = min(depth, int(np.isfinite(scores).sum()))
    if count <= 0:
        return []
    best = np.argpartition(-scores, count - 1)[:count]
    best = best[np.lexsort((best, -scores[best]))]
    return [(snapshot.chunk_at(row), max(0.0, float(scores[row]))) for row in best.tolist()]
