"""Retrieval's contract, the one door into the engine: the names in ``__all__`` are all that the domains
(policies, application documents, kb notes, governance), the web page and the benchmarks may import of
``lib.retrieval`` (``tests/lib/retrieval/test_contract.py``; the engine's own unit tests and kernel benchmarks
excepted).

Searching. A domain turns its own question (as of which day, which applications, tags or document types) into
what its two legs may see, then asks ``search`` with a ``Query`` (the text, how many hits, the mode, at most how
many per document) and two legs, closures that gather the dense and the lexical candidates over exactly that
view. It gets ``Hit`` s back, best first: one relevance in 0..1 and the score of each leg that held the chunk.
The arguments are checked here too, so every tool refuses alike (``check_query``, ``check_result_count``,
``check_mode``). The query's vector is the caller's: encoding is ``lib.stores``' job.

Indexes. Slices loaded whole under a stamp (a policy revision, an application) are held by ``CorpusIndexes``
(refreshed when the stamp moves, checked again in the background as they age, kept on disk by
``IndexSnapshots``; ``IndexCache.stale`` and ``evict_stale`` for the audit). Slices of many small documents
updated one at a time (the kb, governance) are a ``DocumentsIndex`` of ``DocumentChunks``. What the lexical leg
indexes for a chunk is ``lexical_text``. ``pin_single_blas_thread`` is called once per process, before any
search. The module map is in docs/architecture.md.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lib.retrieval.arguments import MAX_QUERY_CHARS, SearchMode, check_mode, check_query, check_result_count
from lib.retrieval.blas import pin_single_blas_thread
from lib.retrieval.corpus import CorpusIndexes
from lib.retrieval.corpus_index import CorpusIndex
from lib.retrieval.document_index import DocumentChunks, DocumentsIndex
from lib.retrieval.index_cache import DEFAULT_CACHE_BYTES, StaleIndex
from lib.retrieval.index_snapshot import IndexSnapshots
from lib.retrieval.legs import legs, side_by_side
from lib.retrieval.lexical import lexical_text
from lib.retrieval.ranking import FUSION, FusionMethod, FusionParams, RankedChunk, leg_depth, rank_chunks
from lib.retrieval.segments import Selection
from lib.retrieval.slice_search import LexicalAnswer, dense_relevances, lexical_search
from lib.stores.chroma import StoredChunk

Hit = RankedChunk
"""One chunk of a search's answer: ``chunk``, its ``relevance`` (0..1, the order of the answer) and the scores
``dense_score`` and ``lexical_score`` of the legs whose candidates held it (``None`` for a leg that did not)."""

DenseLeg = Callable[[int], Sequence[tuple[StoredChunk, float]]]
"""Given a depth, that many chunks nearest the query with their relevance in 0..1, best first."""
LexicalLeg = Callable[[int], LexicalAnswer]
"""Given a depth, that many chunks best by BM25 with their scores and the query's ceiling there."""


@dataclass(frozen=True)
class Query:
    """What to search for and how many: ``text``, the ``k`` hits wanted, ranked by ``mode``; at most
    ``per_document`` hits sharing the values of ``document_fields`` in their metadata (``None``: no limit);
    ``ranked`` hits back instead of ``k``, ranked for that many, for a caller that reorders the ranking
    further (up to ``depth``); ``fusion``: how hybrid combines the legs (tuned once: ``FUSION``)."""

    text: str
    k: int
    mode: SearchMode = SearchMode.HYBRID
    per_document: int | None = None
    document_fields: tuple[str, ...] = ()
    ranked: int | None = None
    fusion: FusionParams = FUSION

    @property
    def depth(self) -> int:
        """How many candidates each leg gathers for this query (``lib.retrieval.ranking.leg_depth``)."""
        return leg_depth(self.mode, self.k, self.fusion, per_document=self.per_document)


def search(query: Query, dense: DenseLeg, lexical: LexicalLeg, *, rows: int = 0, helpers: int = 0) -> list[Hit]:
    """The hits of ``query``, best first, from the legs its mode uses, each called with ``query.depth`` over
    what the caller let it see. With ``helpers`` (``SearchSettings.leg_helpers``) and ``rows`` (the rows both
    legs cover) large enough, the legs run side by side; otherwise dense first, then lexical."""
    depth = query.depth

    def dense_leg() -> Sequence[tuple[StoredChunk, float]]:
        return [] if query.mode == SearchMode.LEXICAL else dense(depth)

    def lexical_leg() -> LexicalAnswer:
        return LexicalAnswer([], 1.0) if query.mode == SearchMode.DENSE else lexical(depth)

    together = side_by_side(query.mode, rows)
    nearest, best = legs(helpers).both(dense_leg, lexical_leg, together=together)
    return rank_chunks(
        query.mode,
        nearest,
        best.hits,
        query.ranked or query.k,
        lexical_ceiling=best.ceiling,
        per_document=query.per_document,
        document_fields=query.document_fields,
        params=query.fusion,
    )


__all__ = [
    "DEFAULT_CACHE_BYTES",
    "MAX_QUERY_CHARS",
    "CorpusIndex",
    "CorpusIndexes",
    "DocumentChunks",
    "DocumentsIndex",
    "FusionMethod",
    "FusionParams",
    "Hit",
    "IndexSnapshots",
    "LexicalAnswer",
    "Query",
    "SearchMode",
    "Selection",
    "StaleIndex",
    "check_mode",
    "check_query",
    "check_result_count",
    "dense_relevances",
    "lexical_search",
    "lexical_text",
    "pin_single_blas_thread",
    "search",
]
