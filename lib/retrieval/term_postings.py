"""Each query term's postings over a set of slices, merged once and kept for the searches that follow.

Why: at 1M chunks in 500 slices, merging a term's postings costs a vocabulary lookup and two array slices per
slice, about 1 µs each: ~12 ms of Python per search before any scoring, the same work for every search that
shares the term (decision 0039). Questions share most of their words ("housing", "development", "green
belt"), and the longest postings are those of the commonest words, so a small memo holds most of what a search
merges.

An entry is named by the term and by the ``serial`` of every slice (a reloaded slice has a new one), so it is
only reused for the very slices it was merged from; it holds arrays, not the slices. The memo is bounded in
bytes; the least recently used go first.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable, Sequence

import numpy as np
from cachetools import LRUCache

from lib.observability.metrics import cache_lookups, cache_misses
from lib.retrieval.lexical import LexicalBlock, Postings, merged_postings

cache_lookups_postings = cache_lookups.labels("term_postings")
cache_misses_postings = cache_misses.labels("term_postings")


class TermPostings:
    """``merged_postings`` remembered, at most ``max_bytes`` of them (thread-safe)."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self._kept: LRUCache[tuple[str, Hashable], Postings] = LRUCache(max_bytes, getsizeof=_size)
        self._lock = threading.Lock()

    def get(self, term: str, blocks: Sequence[LexicalBlock], starts: np.ndarray, key: Hashable) -> Postings:
        """``merged_postings(term, blocks, starts)``; ``key`` names ``blocks`` (it must change when they do)."""
        cache_lookups_postings.inc()
        with self._lock:
            found = self._kept.get((term, key))
        if found is not None:
            return found
        cache_misses_postings.inc()
        merged = merged_postings(term, blocks, starts)
        merged.places.flags.writeable = False  # shared by every search that reads it
        merged.counts.flags.writeable = False
        if _size(merged) <= self.max_bytes:
            with self._lock:
                self._kept[(term, key)] = merged
        return merged

    @property
    def nbytes(self) -> int:
        with self._lock:
            return int(self._kept.currsize)


def _size(postings: Postings) -> int:
    return postings.nbytes + 200  # the entry's own objects
