"""Policy search and section retrieval (spec 000 FR-001, FR-002), shared by MCP tools, REST and CLI.

Which chunks a search may see is decided by the registry, not by chunk metadata: with an
``effective_date`` the resolver picks the revision in force for each policy; without one, every
``active`` or ``superseded`` revision counts. Chunks of revisions still ``processing`` (half written)
or ``failed`` are never returned. Citations (version label, dates) are read from the registry too.

The vector part is ``PolicyVectorStore.search`` (``lib.policies.chunks``): exact nearest neighbours over
those revisions' embeddings (cached per process, checked against the registry on every query), the
answer Chroma's where-filtered query approximates, at a fraction of its cost; queries are embedded with
``Embedder.embed_queries`` (ONNX when the service has exported it).

``mode`` (``lib.retrieval.SearchMode``) picks the ranking; the same ``searchable_revisions`` feed every leg:
- ``dense``: the vector part alone, exactly as above; ``relevance_score = max(0, 1 - L2 distance / 2)``.
- ``lexical``: BM25 over the same revisions' chunks (``PolicyVectorStore.lexical_search``), IDF over just
  them; ``relevance_score`` is the BM25 score over its least upper bound for the query (the share of the
  query's weight a chunk carries). No query is embedded.
- ``hybrid`` (default): ``candidates(n)`` from each leg, fused (``lib.retrieval.fusion``: a convex
  combination of the dense relevance and the BM25 score over its ceiling); ``relevance_score`` is the fused
  relevance.
Every hit carries ``dense_score`` and ``lexical_score`` from the legs whose candidates held it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import date
from itertools import groupby

import numpy as np
from pydantic import BaseModel

from lib.dates import iso, parse_date
from lib.errors import InvalidArgumentError, PolicyNotFoundError, RevisionNotFoundError, SectionNotFoundError
from lib.kb import KnowledgeBase
from lib.policies.chunks import revision_ref
from lib.policies.models import Revision, SearchHit
from lib.policies.registry import PolicyRegistry, check_revision_id, check_source
from lib.policies.temporal import resolve_revision
from lib.retrieval import SearchMode, candidates, check_mode, fuse
from lib.retrieval.queries import check_query, check_result_count
from lib.stores.chroma import StoredChunk, relevance

_WHOLE_CHAPTER = re.compile(r"^Chapter \d+$")
"""A chapter ref names the whole chapter: its intro and every paragraph, policy and footnote in it."""
_MIN_OVERLAP = 20


class SearchResult(BaseModel):
    query: str
    effective_date: str | None
    results: list[SearchHit]


class PolicySection(BaseModel):
    source: str
    section_ref: str
    revision_id: str
    version_label: str
    chapter: str
    text: str
    page_numbers: list[int]


def _check_sources(registered: Sequence[str], sources: Sequence[str] | None) -> list[str]:
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
    snapshot = registry.snapshot()
    wanted = _check_sources(snapshot.sources, sources)
    if effective_date is not None:
        resolved = (resolve_revision(s, snapshot.revisions[s], effective_date) for s in wanted)
        revisions = [r.revision for r in resolved if r.revision is not None]
    else:
        revisions = [r for s in wanted for r in snapshot.revisions[s] if r.resolvable]
    return {revision_ref(r.source, r.revision_id): r for r in revisions}


def _hit(
    chunk: StoredChunk,
    revision: Revision,
    score: float,
    *,
    dense_score: float | None = None,
    lexical_score: float | None = None,
) -> SearchHit:
    meta = chunk.metadata
    return SearchHit(
        chunk_id=chunk.id,
        text=chunk.text,
        relevance_score=round(score, 6),
        source=revision.source,
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        section_ref=str(meta.get("section_ref", "")),
        page_number=int(meta.get("page_number", 0)),
        chapter=str(meta.get("chapter", "")),
        effective_from=iso(revision.effective_from),
        effective_to=iso(revision.effective_to),
        dense_score=None if dense_score is None else round(dense_score, 6),
        lexical_score=None if lexical_score is None else round(lexical_score, 6),
    )


def search_policy(
    kb: KnowledgeBase,
    query: str,
    *,
    sources: Sequence[str] | None = None,
    effective_date: str | date | None = None,
    n_results: int = 10,
    mode: str = SearchMode.HYBRID,
) -> SearchResult:
    """Search the chunks of the revisions in force on ``effective_date`` (or of all), ranked by ``mode``."""
    return search_policy_batch(
        kb, [query], sources=sources, effective_date=effective_date, n_results=n_results, mode=mode
    )[0]


def search_policy_batch(
    kb: KnowledgeBase,
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
    if len(queries) > kb.settings.max_results:
        raise InvalidArgumentError(f"at most {kb.settings.max_results} queries per call")
    queries = [check_query(q) for q in queries]
    check_result_count(n_results, kb.settings.max_results, "n_results")
    ranking = check_mode(mode)
    day = parse_date(effective_date, field="effective_date") if effective_date is not None else None
    revisions = searchable_revisions(kb.registry, sources, day)
    embeddings = kb.embedder.embed_queries(queries) if revisions and ranking != SearchMode.LEXICAL else None
    results = []
    for i, query in enumerate(queries):
        hits: list[SearchHit] = []
        if revisions:
            vector = None if embeddings is None else embeddings[i]
            hits = _ranked(kb, query, vector, n_results, revisions, ranking)
        results.append(SearchResult(query=query, effective_date=iso(day), results=hits))
    return results


def _ranked(
    kb: KnowledgeBase,
    query: str,
    vector: np.ndarray | None,
    n_results: int,
    revisions: dict[str, Revision],
    mode: SearchMode,
) -> list[SearchHit]:
    """One query's hits over ``revisions``, ranked by ``mode``; chunks of other revisions never pass."""

    def revision_of(chunk: StoredChunk) -> Revision | None:
        return revisions.get(str(chunk.metadata.get("revision_ref")))

    if mode == SearchMode.DENSE:
        assert vector is not None
        hits = []
        for chunk in kb.vectors.search(vector, n_results, revisions):
            if (revision := revision_of(chunk)) is not None:
                score = relevance(chunk.distance or 0.0)
                hits.append(_hit(chunk, revision, score, dense_score=score))
        return hits
    depth = n_results if mode == SearchMode.LEXICAL else candidates(n_results)
    lexical = kb.vectors.lexical_search(query, depth, revisions)
    if mode == SearchMode.LEXICAL:
        ceiling = lexical.ceiling or 1.0
        return [
            _hit(c, r, min(1.0, score / ceiling), lexical_score=score)
            for c, score in lexical.hits
            if (r := revision_of(c)) is not None
        ]
    assert vector is not None
    dense_chunks = kb.vectors.search(vector, depth, revisions)
    chunks = {c.id: c for c in dense_chunks} | {c.id: c for c, _ in lexical.hits}
    fused = fuse(
        [(c.id, relevance(c.distance or 0.0)) for c in dense_chunks],
        [(c.id, score) for c, score in lexical.hits],
        n_results,
        lexical_ceiling=lexical.ceiling or 1.0,
    )
    return [
        _hit(chunks[f.key], r, f.relevance, dense_score=f.dense_score, lexical_score=f.lexical_score)
        for f in fused
        if (r := revision_of(chunks[f.key])) is not None
    ]


def merge_chunk_texts(texts: Sequence[str]) -> str:
    """Rejoin consecutive chunks of one section, dropping the overlap the splitter repeated."""
    merged = ""
    for text in texts:
        if not merged:
            merged = text
            continue
        overlap = next(
            (k for k in range(min(len(merged), len(text)), _MIN_OVERLAP - 1, -1) if merged.endswith(text[:k])), 0
        )
        merged = merged + text[overlap:] if overlap else f"{merged}\n\n{text}"
    return merged


def get_policy_section(
    kb: KnowledgeBase,
    source: str,
    section_ref: str,
    *,
    revision_id: str | None = None,
    effective_date: str | date | None = None,
) -> PolicySection:
    """One section of one revision: the named revision, else the one in force on the date (default today).

    Chunks are looked up by metadata (exact and complete), not by embedding the reference. ``Chapter N``
    returns the whole chapter, as spec 000's ``Chapter 5`` example expects.
    """
    check_source(source)
    if not isinstance(section_ref, str) or not section_ref.strip():
        raise InvalidArgumentError("section_ref must be a non-empty string such as 'Para 116'")
    section_ref = " ".join(section_ref.split())
    if revision_id is not None:
        revision = kb.registry.get_revision(source, check_revision_id(revision_id))
    else:
        day = parse_date(effective_date, field="effective_date") if effective_date is not None else date.today()
        kb.registry.get_policy(source)
        resolution = kb.resolver.resolve_for_policy(source, day)
        if resolution.revision is None:
            raise RevisionNotFoundError(
                f"No revision of '{source}' was in force on {day.isoformat()} ({resolution.reason})",
                source=source,
                reason=resolution.reason,
            )
        revision = resolution.revision
    chunks = kb.vectors.section_chunks(source, revision.revision_id, section_ref)
    if chunks and _WHOLE_CHAPTER.match(section_ref) and chunks[0].metadata.get("chapter"):
        chunks = kb.vectors.chapter_chunks(source, revision.revision_id, str(chunks[0].metadata["chapter"]))
    if not chunks:
        raise SectionNotFoundError(
            f"Section '{section_ref}' not found in {source} revision '{revision.revision_id}'",
            source=source,
            section_ref=section_ref,
            revision_id=revision.revision_id,
        )
    pages = sorted(
        {int(p) for c in chunks for p in str(c.metadata.get("page_numbers") or c.metadata["page_number"]).split(",")}
    )
    return PolicySection(
        source=source,
        section_ref=section_ref,
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        chapter=str(chunks[0].metadata.get("chapter", "")),
        text="\n\n".join(
            merge_chunk_texts([c.text for c in group])
            for _, group in groupby(chunks, key=lambda c: c.metadata.get("section_ref"))
        ),
        page_numbers=pages,
    )
