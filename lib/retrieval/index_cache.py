"""The corpus indexes a process holds: a byte budget, least recently used out first, each served only under the
stamp it was loaded with; and the audit's check of held indexes against the store.

Every write through the pipeline moves a slice's stamp (docs/decisions/0028-write-stamps.md), so a held index
is never served after one. ``max_age_s`` is how old an index may grow before ``IndexLoader`` checks it again
against the store in the background, which bounds how late a change made behind the pipeline's back (the stamp
unchanged) is seen; the index is served meanwhile, so the check is never on a search's path.
``IndexCache.stale`` finds such indexes at once and ``evict_stale`` drops them (the consistency audit's
``stale_search_index``). See ``docs/decisions/0001-revision-block-cache.md``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass

from cachetools import LRUCache

from lib.retrieval.corpus_index import ROW_BYTES, CorpusIndex, Stamp, index_digest

DEFAULT_CACHE_BYTES = 256 * 1024 * 1024
DEFAULT_MAX_AGE_S = 30.0


def _index_bytes(index: CorpusIndex) -> int:
    return max(1, index.nbytes)


@dataclass(frozen=True)
class StaleIndex:
    """A held index whose chunks are no longer what the store holds for its key."""

    block: CorpusIndex
    stored_rows: int
    detail: str


class IndexCache:
    """Corpus indexes by slice key: a ``cachetools.LRUCache`` sized in bytes behind a lock, since cachetools
    caches are not thread-safe. Loads run outside the lock. ``max_age_s`` is what the loader ages held indexes
    by (``IndexLoader``, on its own clock); the cache itself never drops an index for its age."""

    def __init__(
        self, max_bytes: int = DEFAULT_CACHE_BYTES, *, max_age_s: float = DEFAULT_MAX_AGE_S, row_bytes: int = ROW_BYTES
    ) -> None:
        """``row_bytes``: what ``fits`` reckons a chunk costs (less for slices read from snapshots)."""
        self.max_bytes = max_bytes
        self.row_bytes = row_bytes
        self.max_age_s = max_age_s
        self._indexes: LRUCache[str, CorpusIndex] = LRUCache(max_bytes, _index_bytes)
        self._lock = threading.Lock()

    def fits(self, rows: int) -> bool:
        """Whether ``rows`` chunks could be held at once (estimated at ``row_bytes`` each)."""
        return rows * self.row_bytes <= self.max_bytes

    def get(self, key: str, stamp: Stamp) -> CorpusIndex | None:
        """The index of ``key`` if it was loaded under ``stamp``."""
        with self._lock:
            index = self._indexes.get(key)
        return index if index is not None and index.stamp == stamp else None

    def get_many(self, stamps: Mapping[str, Stamp]) -> list[CorpusIndex | None]:
        """``get`` of every key of ``stamps``, in order, under one hold of the lock."""
        with self._lock:
            found = [self._indexes.get(key) for key in stamps]
        pairs = zip(found, stamps.values(), strict=True)
        return [index if index is not None and index.stamp == stamp else None for index, stamp in pairs]

    def put(self, index: CorpusIndex) -> bool:
        """Keep ``index`` unless it alone is over budget; the least recently used make room."""
        if index.nbytes > self.max_bytes:
            return False
        with self._lock:
            self._indexes[index.key] = index
        return True

    @property
    def nbytes(self) -> int:
        with self._lock:
            return int(self._indexes.currsize)

    def indexes(self) -> list[CorpusIndex]:
        """The indexes held now."""
        with self._lock:
            return list(self._indexes.values())

    def evict(self, index: CorpusIndex) -> bool:
        """Drop ``index`` if it is still the one held for its key (not a newer load); whether it was."""
        with self._lock:
            if (held := self._indexes.get(index.key)) is None or held.serial != index.serial:
                return False
            del self._indexes[index.key]
            return True

    def stale(
        self, served: Mapping[str, Stamp], read: Callable[[str], tuple[Sequence[str], Sequence[str]]]
    ) -> list[StaleIndex]:
        """The held indexes that would be served (their stamp is ``served[key]``, the source of truth now) whose
        ids or indexed texts (``CorpusIndex.indexed_texts``) differ from what ``read(key)`` returns from the
        store now. Indexes under an old stamp are left out: never served again, they reload on next use."""
        stale = []
        for index in self.indexes():
            if served.get(index.key) != index.stamp:
                continue
            ids, texts = read(index.key)
            if set(ids) != set(index.ids):
                lost, new = len(set(index.ids) - set(ids)), len(set(ids) - set(index.ids))
                detail = f"{len(index.ids)} chunks held, {len(ids)} stored ({lost} gone, {new} new)"
            elif index_digest(ids, texts) != index.digest:
                detail = f"{len(index.ids)} chunks held with the stored ids but other texts or headings"
            else:
                continue
            stale.append(StaleIndex(index, len(ids), detail))
        return stale

    def evict_stale(self, stale: Iterable[StaleIndex]) -> int:
        """Drop each stale index still held (a newer load of its key is kept); how many were dropped."""
        return sum(self.evict(s.block) for s in stale)

    def clear(self) -> None:
        with self._lock:
            self._indexes.clear()

    def __len__(self) -> int:
        with self._lock:
            return len(self._indexes)
