"""Retrieval's contract, the one door into the engine: the names in ``__all__`` are all that the domains
(policies, application documents, kb notes, governance), the web page and the benchmarks may import of
``lib.retrieval``; ``tests/lib/retrieval/test_contract.py`` fails on any import of the modules behind it (the
engine's own unit tests and kernel benchmarks excepted: they check its parts one by one).

Searching. A domain turns its own question (as of which day, which applications, tags or document types) into
what its two legs may see: the slices and rows of its index. It then asks ``search`` with a ``Query`` (the
text, how many hits, the mode, at most how many per document) and two legs, closures that gather the dense
and the lexical candidates over exactly that view, and gets ``Hit`` s back, best first: one relevance in 0..1
and the score of each leg that held the chunk. ``search`` fetches as deep as the mode needs (``Query.depth``),
runs the legs a mode uses (side by side when large enough, ``lib.retrieval.legs``) and ranks once
(``lib.retrieval.ranking``). The arguments are checked here too, so every tool refuses alike
(``check_query``, ``check_result_count``, ``check_mode``). The query's vector is the caller's: encoding is
``lib.stores``' job.

Indexes. Slices loaded whole under a stamp (a policy revision, an application) are held by ``CorpusIndexes``
(build: its ``load``; refresh: a moved stamp reloads on next use, ``verify`` rechecks old ones; invalidate:
``stale_indexes`` then ``evict_stale``; kept on disk: ``IndexSnapshots``). Slices of many small documents
updated one at a time (the kb, governance) are a ``DocumentsIndex`` of ``DocumentChunks``, rebuilt with
``DocumentsIndex.after`` (``stack_columns``: a kept copy of some of its columns, scored alike). What the lexical
leg indexes for a chunk is ``lexical_text``; what the slices' memory budget counts: ``ROW_BYTES`` a chunk.
``pin_single_blas_thread`` is called once per process, before any search. Behind the door: int8 codes and code
pages, BM25 postings, segments, snapshots, the loader thread; none of it is a caller's business.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from lib.retrieval.blas import pin_single_blas_thread
from lib.retrieval.corpus import CorpusIndexes
from lib.retrieval.corpus_index import ROW_BYTES, CorpusIndex, LexicalAnswer, Stamp, dense_relevances, lexical_search
from lib.retrieval.dense import stack_columns
from lib.retrieval.document_index import DocumentChunks, DocumentsIndex
from lib.retrieval.fusion import FUSION, FusionMethod, FusionParams
from lib.retrieval.heading import lexical_text
from lib.retrieval.index_cache import DEFAULT_CACHE_BYTES, DEFAULT_MAX_AGE_S, StaleIndex, evict_stale, stale_indexes
from lib.retrieval.index_snapshot import IndexSnapshots
from lib.retrieval.legs import legs, side_by_side
from lib.retrieval.modes import SearchMode, check_mode
from lib.retrieval.queries import MAX_QUERY_CHARS, check_query, check_result_count
from lib.retrieval.ranking import RankedChunk, leg_depth, rank_chunks
from lib.retrieval.segments import Selection
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
    "DEFAULT_MAX_AGE_S",
    "FUSION",
    "MAX_QUERY_CHARS",
    "ROW_BYTES",
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
    "Stamp",
    "check_mode",
    "check_query",
    "check_result_count",
    "dense_relevances",
    "evict_stale",
    "lexical_search",
    "lexical_text",
    "pin_single_blas_thread",
    "search",
    "stack_columns",
    "stale_indexes",
]
