"""The corpus indexes one process holds of one collection's slices: the cache, the loader and the last
answers, so a store only says how to load a slice and which slices, under which stamps, a search may see.

Answers are remembered (``answers``, a ``cachetools`` memo) under the query, the row filter's scope and the
``serial`` of every slice searched, so one is only reused for the very slices that produced it (a reloaded
slice has a new serial): remembering adds no difference of its own. The memo keeps where the hits are (``HITS``:
slice, row, score), not the chunks, which are made from those same slices per call. Why they are kept, with
figures: ``docs/decisions/0014-remembered-answers.md``.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import TypeVar, cast

import numpy as np
from cachetools import LRUCache, cached

from lib.observability.metrics import cache_lookups, cache_misses
from lib.retrieval.code_pages import CodePages
from lib.retrieval.corpus_index import ROW_BYTES, SNAPSHOT_ROW_BYTES, CorpusIndex, Rows, Stamp
from lib.retrieval.float_rows import FLOAT_ROWS_BYTES, FloatRows
from lib.retrieval.index_cache import DEFAULT_CACHE_BYTES, DEFAULT_MAX_AGE_S, IndexCache
from lib.retrieval.index_loader import IndexCheck, IndexLoad, IndexLoader
from lib.retrieval.index_snapshot import IndexSnapshots
from lib.retrieval.lexical import TermPostings
from lib.retrieval.scratch import Scratch
from lib.retrieval.slice_search import (
    LexicalAnswer,
    LexicalHits,
    answer_key,
    chunks_of,
    exact_hits,
    lexical_answer_key,
    lexical_hits,
)
from lib.stores.chroma import StoredChunk

ANSWERS_REMEMBERED = 1024
POSTINGS_BYTES = 128 * 1024 * 1024
"""The most merged postings kept (``lib.retrieval.lexical.TermPostings``); a sixteenth of the slices' budget if less."""
cache_lookups_answers = cache_lookups.labels("answers")
cache_misses_answers = cache_misses.labels("answers")


class CorpusIndexes:
    """The slices of one collection held by this process, loaded by ``load`` under the stamps a search names."""

    def __init__(
        self,
        load: IndexLoad,
        *,
        verify: IndexCheck | None = None,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        max_age_s: float = DEFAULT_MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
        snapshots: IndexSnapshots | None = None,
    ) -> None:
        """``load(key, stamp)`` reads one slice (``None``: it must not be held, its rows disagree with the
        stamp); ``verify`` is the cheaper check a refresh makes first; ``clock`` ages the slices; ``snapshots``
        keeps loaded slices on disk for the next start (``lib.retrieval.index_snapshot``)."""
        row_bytes = ROW_BYTES if snapshots is None else SNAPSHOT_ROW_BYTES
        self.cache = IndexCache(cache_bytes, max_age_s=max_age_s, row_bytes=row_bytes)
        self.snapshots = snapshots
        self.loader = IndexLoader(self.cache, load, verify=verify, clock=clock, snapshots=snapshots)
        self.answers: LRUCache[tuple[object, ...], np.ndarray | LexicalHits] = LRUCache(
            ANSWERS_REMEMBERED if cache_bytes else 0
        )
        self.pages = CodePages()
        self.postings = TermPostings(min(POSTINGS_BYTES, cache_bytes // 16))
        self.float_rows = FloatRows(min(FLOAT_ROWS_BYTES, cache_bytes // 16))
        lock = threading.Lock()
        self.scratch = Scratch()
        dense = functools.partial(exact_hits, pages=self.pages, scratch=self.scratch, float_rows=self.float_rows)
        lexical = functools.partial(lexical_hits, postings=self.postings, scratch=self.scratch)
        self._dense = _counted(cached(self.answers, key=answer_key, lock=lock)(_miss(dense)))
        self._lexical = _counted(cached(self.answers, key=lexical_answer_key, lock=lock)(_miss(lexical)))

    def dense(
        self,
        query: np.ndarray,
        n_results: int,
        indexes: Sequence[CorpusIndex],
        rows: Rows = None,
        scope: Hashable = (),
    ) -> list[StoredChunk]:
        """``exact_search``, remembered."""
        return chunks_of(self._dense(query, n_results, indexes, rows, scope), indexes)

    def lexical(
        self, query: str, n_results: int, indexes: Sequence[CorpusIndex], rows: Rows = None, scope: Hashable = ()
    ) -> LexicalAnswer:
        """``lexical_search``, remembered."""
        return self._lexical(query, n_results, indexes, rows, scope).answer(indexes)

    def place(self, indexes: Sequence[CorpusIndex]) -> None:
        """Copy the codes of ``indexes`` into the pages now, as a warm-up does, rather than on the first search
        that needs them."""
        self.pages.place([index.vectors for index in indexes if index.ids and index.vectors.dims])

    def held(self, stamps: Mapping[str, Stamp], rows: int | None = None) -> list[CorpusIndex] | None:
        """The index of every slice of ``stamps`` (key -> stamp read from Redis), in order, loading what is
        missing; ``None`` when they cannot all be held at once (``rows`` over the budget, or a slice the
        loader refused)."""
        if rows is not None and not self.cache.fits(rows):
            return None
        return self.loader.get_all(stamps)


F = TypeVar("F", bound=Callable[..., object])


def _counted(remembered: F) -> F:
    """Every call of ``remembered`` counts as a lookup of the ``answers`` cache (its misses: ``_miss``)."""

    @functools.wraps(remembered)
    def lookup(*args: object, **kwargs: object) -> object:
        cache_lookups_answers.inc()
        return remembered(*args, **kwargs)

    return cast(F, lookup)


def _miss(compute: F) -> F:
    @functools.wraps(compute)
    def computed(*args: object, **kwargs: object) -> object:
        cache_misses_answers.inc()
        return compute(*args, **kwargs)

    return cast(F, computed)
