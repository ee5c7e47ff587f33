"""Policy search (spec 000 FR-001), shared by MCP tools, REST and CLI; section reads are ``lib.policies.sections``.

Which chunks a search may see is decided by the registry, not by chunk metadata: with an
``effective_date`` the resolver picks the revision in force for each policy; without one, every
``active`` or ``superseded`` revision counts. Chunks of revisions still ``processing`` (half written)
or ``failed`` are never returned. Citations (version label, dates) are read from the registry too.

The vector part is ``PolicyVectorStore.search`` (``lib.policies.chunks``): exact nearest neighbours over
those revisions' embeddings (cached per process, checked against the registry on every query), the
answer Chroma's where-filtered query approximates, at a fraction of its cost; queries are embedded with
``Embedder.embed_queries`` (ONNX when the service has exported it).

``mode`` (``lib.retrieval.SearchMode``) picks the ranking; the same ``searchable_revisions`` feed every leg:
- ``dense``: the vector part alone, exactly as above; ``score = relevance_score = max(0, 1 - L2 distance / 2)``.
- ``lexical``: BM25 over the same revisions' chunks (``PolicyVectorStore.lexical_search``), IDF over just
  them; ``score`` is the BM25 score over its least upper bound for the query (the share of the query's weight
  a chunk carries). No query is embedded, so ``relevance_score`` is null.
- ``hybrid`` (default): ``Query.depth`` candidates from each leg, fused (``lib.retrieval.search``: a convex
  combination of the dense relevance and the BM25 score over its ceiling); ``score`` is the fused relevance,
  the order of the results. ``relevance_score`` stays spec 000 FR-001's ``max(0, 1 - L2 / 2)`` for every hit
  (for one only the lexical leg found, from its held vector: ``PolicyVectorStore.dense_relevances``).
Every hit carries ``dense_score`` and ``lexical_score`` from the legs whose candidates held it. A section's
best chunk alone is returned (``PER_SECTION``): a top 5 of five citations, not one paragraph three times
(``get_policy_section`` gives the whole section). In ``hybrid``, a policy ranks at least as high as the best
paragraph of its reasoned justification (``policies_before_their_justification``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import date

import numpy as np
from pydantic import BaseModel

from lib.dates import iso, parse_date
from lib.errors import InvalidArgumentError, PolicyNotFoundError
from lib.observability import measured
from lib.observability.metrics import searches
from lib.policies.chunks import revision_ref
from lib.policies.models import Revision, SearchHit
from lib.policies.registry import PolicyRegistry, check_source
from lib.policies.stores import PolicyStores
from lib.policies.temporal import resolve_revision
from lib.retrieval import Hit, LexicalAnswer, Query, SearchMode, check_mode, check_query, check_result_count, search
from lib.stores.chroma import StoredChunk, relevance
from lib.text.printed_pages import from_stored

PER_SECTION = 1
"""Chunks of one section of one revision in a search's results: its best (docs/decisions/0023)."""


class SearchResult(BaseModel):
    query: str
    effective_date: str | None
    results: list[SearchHit]


def check_sources(registered: Sequence[str], sources: Sequence[str] | None) -> list[str]:
    """The policies to search: all when ``sources`` is empty; unknown slugs are an error, not silence."""
    if not sources:
        return list(registered)
    wanted = list(dict.fromkeys(check_source(s) for s in sources))
    unknown = sorted(set(wanted) - set(registered))
    if unknown:
        raise PolicyNotFoundError(f"No policy document found with source {', '.join(unknown)}", sources=unknown)
    return wanted


def searchable_revisions(
    registry: PolicyRegistry, sources: Sequence[str] | None, effective_date: date | None
) -> dict[str, Revision]:
    """``{revision_ref: Revision}`` of every revision a search may return chunks from, from one registry
    snapshot (one Redis read when the registry has not changed)."""
    with measured("resolve"):
        snapshot = registry.snapshot()
        wanted = check_sources(snapshot.sources, sources)
        if effective_date is not None:
            resolved = (resolve_revision(s, snapshot.revisions[s], effective_date) for s in wanted)
            revisions = [r.revision for r in resolved if r.revision is not None]
        else:
            revisions = [r for s in wanted for r in snapshot.revisions[s] if r.resolvable]
        return {revision_ref(r.source, r.revision_id): r for r in revisions}


def registered_refs(registry: PolicyRegistry) -> set[str]:
    """The ``revision_ref`` of every revision the registry holds, whatever its state: what a replica's snapshots
    may be kept for."""
    snapshot = registry.snapshot()
    return {revision_ref(r.source, r.revision_id) for revisions in snapshot.revisions.values() for r in revisions}


def _hit(
    chunk: StoredChunk,
    revision: Revision,
    score: float,
    *,
    relevance_score: float | None = None,
    dense_score: float | None = None,
    lexical_score: float | None = None,
) -> SearchHit:
    meta = chunk.metadata
    return SearchHit(
        chunk_id=chunk.id,
        text=chunk.text,
        relevance_score=None if relevance_score is None else round(relevance_score, 6),
        score=round(score, 6),
        source=revision.source,
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        section_ref=str(meta.get("section_ref", "")),
        page_number=int(meta.get("page_number", 0)),
        printed_page=from_stored(meta.get("printed_page")),
        chapter=str(meta.get("chapter", "")),
        effective_from=iso(revision.effective_from),
        effective_to=iso(revision.effective_to),
        dense_score=None if dense_score is None else round(dense_score, 6),
        lexical_score=None if lexical_score is None else round(lexical_score, 6),
        supports=str(meta.get("supports") or "") or None,
    )


def search_policy(
    stores: PolicyStores,
    query: str,
    *,
    sources: Sequence[str] | None = None,
    effective_date: str | date | None = None,
    n_results: int = 10,
    mode: str = SearchMode.HYBRID,
) -> SearchResult:
    """Search the chunks of the revisions in force on ``effective_date`` (or of all), ranked by ``mode``."""
    return search_policy_batch(
        stores, [query], sources=sources, effective_date=effective_date, n_results=n_results, mode=mode
    )[0]


def search_policy_batch(
    stores: PolicyStores,
    queries: Sequence[str],
    *,
    sources: Sequence[str] | None = None,
    effective_date: str | date | None = None,
    n_results: int = 10,
    mode: str = SearchMode.HYBRID,
) -> list[SearchResult]:
    """Several queries with one registry resolution and one embedding batch."""
    if not queries:
        raise InvalidArgumentError("queries must hold at least one query")
    if len(queries) > stores.settings.search.max_results:
        raise InvalidArgumentError(f"at most {stores.settings.search.max_results} queries per call")
    queries = [check_query(q) for q in queries]
    check_result_count(n_results, stores.settings.search.max_results, "n_results")
    ranking = check_mode(mode)
    day = parse_date(effective_date, field="effective_date") if effective_date is not None else None
    revisions = searchable_revisions(stores.registry, sources, day)
    searches.labels("policies", ranking.value).inc(len(queries))
    embeddings = stores.embedder.embed_queries(queries) if revisions and ranking != SearchMode.LEXICAL else None
    results = []
    for i, query in enumerate(queries):
        hits: list[SearchHit] = []
        if revisions:
            vector = None if embeddings is None else embeddings[i]
            hits = _ranked(stores, query, vector, n_results, revisions, ranking)
        results.append(SearchResult(query=query, effective_date=iso(day), results=hits))
    return results


def _ranked(
    stores: PolicyStores,
    query: str,
    vector: np.ndarray | None,
    n_results: int,
    revisions: dict[str, Revision],
    mode: SearchMode,
) -> list[SearchHit]:
    """One query's hits over ``revisions``, ranked by ``mode``; chunks of other revisions never pass."""
    sections = Query(query, n_results, mode, per_document=PER_SECTION, document_fields=("revision_ref", "section_ref"))
    # A hybrid search ranks once, as deep as the legs: its first n are the top n (the fusion is the same for
    # any n up to ``depth``, and the collapse keeps the order), and the rest lets a paragraph of justification
    # in the top n bring its policy into it.
    if mode == SearchMode.HYBRID:
        sections = replace(sections, ranked=sections.depth)
    held = stores.vectors.held_blocks(revisions)  # once: both legs and the relevances read the same slices

    def dense_leg(depth: int) -> list[tuple[StoredChunk, float]]:
        assert vector is not None
        return [(c, relevance(c.distance or 0.0)) for c in stores.vectors.search(vector, depth, revisions, held)]

    def lexical_leg(depth: int) -> LexicalAnswer:
        answer = stores.vectors.lexical_search(query, depth, revisions, held)
        return LexicalAnswer(answer.hits, answer.ceiling or 1.0)

    deep = search(
        sections,
        dense_leg,
        lexical_leg,
        rows=sum(len(index.ids) for index in held or ()),
        helpers=stores.settings.search.leg_helpers,
    )
    ranked = deep[:n_results]
    if mode == SearchMode.HYBRID and any(hit.chunk.metadata.get("supports") for hit in ranked):
        ranked = policies_before_their_justification(deep)[:n_results]
    unscored = [r.chunk.id for r in ranked if r.dense_score is None]
    relevances = stores.vectors.dense_relevances(vector, unscored, revisions, held) if vector is not None else {}
    return [
        _hit(
            r.chunk,
            revision,
            r.relevance,
            dense_score=r.dense_score,
            lexical_score=r.lexical_score,
            relevance_score=r.dense_score if r.dense_score is not None else relevances.get(r.chunk.id),
        )
        for r in ranked
        if (revision := revisions.get(str(r.chunk.metadata.get("revision_ref")))) is not None
    ]


def policies_before_their_justification(ranked: Sequence[Hit]) -> list[Hit]:
    """``ranked`` (best first) with each policy moved up to just above the best paragraph of its reasoned
    justification (metadata ``supports``), taking that paragraph's relevance, when the paragraph ranked higher:
    a question in plain words often matches the paragraphs explaining a policy better than the policy's own
    regulatory wording, and the policy is what an application is decided against (docs/decisions/0025)."""
    explained: dict[tuple[str, str], tuple[float, int]] = {}
    for position, hit in enumerate(ranked):
        meta = hit.chunk.metadata
        if meta.get("supports"):
            explained.setdefault((str(meta.get("revision_ref")), str(meta["supports"])), (hit.relevance, position))
    placed: list[tuple[float, float, Hit]] = []
    for position, hit in enumerate(ranked):
        meta = hit.chunk.metadata
        best = explained.get((str(meta.get("revision_ref")), str(meta.get("section_ref"))))
        if best is not None and best[1] < position:
            hit = Hit(hit.chunk, max(hit.relevance, best[0]), hit.dense_score, hit.lexical_score)
            placed.append((-hit.relevance, best[1] - 0.5, hit))
        else:
            placed.append((-hit.relevance, position, hit))
    return [hit for _, _, hit in sorted(placed, key=lambda entry: entry[:2])]
