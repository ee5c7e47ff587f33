"""Loading corpus indexes into an ``IndexCache``: each once however many ask (single flight), refreshed ahead
of expiry without anyone waiting, and kept while the service is idle.

- Single flight: a missing index is loaded by one caller; the others for the same key wait for that load.
- Refresh ahead: one served past ``refresh_after_s`` (3/4 of the cache's ``max_age_s``) is reloaded in the
  background while it goes on being served; none is served more than ``max_age_s`` after its load.
- Ready when served: the lexical twin is built before the index is put in the cache.
- A refresh first asks the store whether the held index is still what it holds (``verify``, no vectors);
  if so the index, its twin and its remembered answers are kept and only its age starts again.
- ``keep_fresh()`` refreshes every index served in the last ``keep_idle_s`` whether searched or not, and
  calls ``warm`` on each pass (what the caller knows will be searched).

Why, with the measurements: ``docs/decisions/0002-block-loader.md``.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from lib.observability import timed_load
from lib.observability.metrics import count_lookup
from lib.retrieval.corpus_index import CorpusIndex, Stamp
from lib.retrieval.index_cache import IndexCache

logger = logging.getLogger(__name__)

REFRESH_AT = 0.75
"""The fraction of ``max_age_s`` after which an index in use is reloaded in the background."""

KEEP_IDLE_S = 900.0
"""How long after its last search ``keep_fresh`` goes on refreshing an index."""

REFRESH_RETRY_S = 2.0
"""After a failed background refresh, how long the index is served before the next one is tried."""

IndexLoad = Callable[[str, Stamp], CorpusIndex | None]
"""Reads one index from the store; None when it must not be cached (its rows disagree with the stamp)."""

IndexCheck = Callable[[CorpusIndex], bool]
"""Whether the store still holds exactly an index's rows (cheaper than loading it again)."""


class IndexLoader:
    """The cache's indexes, each loaded by one caller at a time and refreshed ahead of its expiry."""

    def __init__(
        self,
        cache: IndexCache,
        load: IndexLoad,
        *,
        verify: IndexCheck | None = None,
        clock: Callable[[], float] = time.monotonic,
        refresh_after_s: float | None = None,
    ) -> None:
        """``verify``: the cheap check a refresh makes first; without it every refresh loads in full."""
        self.cache = cache
        self._load = load
        self._verify = verify
        self._clock = clock
        self.refresh_after_s = cache.max_age_s * REFRESH_AT if refresh_after_s is None else refresh_after_s
        self._guard = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._loaded: dict[str, tuple[int, float]] = {}
        """key → (serial, load time) of the index last put for it: how old the served index is."""
        self._served: dict[str, float] = {}
        """key → when a search was last handed its index."""
        self.keep_idle_s = KEEP_IDLE_S
        self._keeper: threading.Thread | None = None
        self._stop = threading.Event()
        self.loads = 0
        self.refreshes = 0
        """How many loads ran in the foreground and in the background (for tests and health)."""

    def get(self, key: str, stamp: Stamp) -> CorpusIndex | None:
        """The index of ``key`` under ``stamp``, loaded if missing; None if it cannot be cached.

        Raises what the load raises (a store outage); the next caller tries again.
        """
        self._served[key] = self._clock()
        index = self.cache.get(key, stamp)
        count_lookup("corpus_index", hit=index is not None)
        if index is not None:
            self._refresh_if_old(key, stamp, index)
            return index
        with self._lock(key):
            index = self.cache.get(key, stamp)  # loaded by the caller this one waited for
            if index is None:
                self.loads += 1
                with timed_load("load"):
                    index = self._load_and_keep(key, stamp)
        return index

    def keep_fresh(self, interval_s: float | None = None, *, warm: Callable[[], object] | None = None) -> None:
        """Start the thread that refreshes held indexes in use whether or not they are searched (idempotent);
        every ``interval_s`` (a third of ``refresh_after_s`` by default). ``warm``, called on each pass too,
        loads what the caller knows will be searched (a revision ingested since: loaded here, not by the
        first search that wants it). ``stop()`` ends it."""
        if self._keeper is not None:
            return
        every = self.refresh_after_s / 3 if interval_s is None else interval_s
        self._keeper = threading.Thread(target=self._keeper_loop, args=(every, warm), name="index-keeper", daemon=True)
        self._keeper.start()

    def stop(self) -> None:
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join(timeout=10)

    def refresh_held(self) -> int:
        """Refresh, one after the other, each held index past its refresh age that a search was handed in the
        last ``keep_idle_s``; how many were refreshed."""
        now = self._clock()
        refreshed = 0
        for index in self.cache.indexes():
            with self._guard:
                serial, loaded_at = self._loaded.get(index.key, (-1, 0.0))
            if serial != index.serial or now - loaded_at < self.refresh_after_s:
                continue
            served = self._served.get(index.key)
            if served is None or now - served > self.keep_idle_s:
                continue
            lock = self._lock(index.key)
            if lock.acquire(blocking=False):
                self._refresh(index.key, index.stamp, index, lock)
                refreshed += 1
        return refreshed

    def _keeper_loop(self, every: float, warm: Callable[[], object] | None) -> None:
        while not self._stop.wait(every):
            try:
                self.refresh_held()
                if warm is not None:
                    warm()
            except Exception as exc:  # the keeper outlives a bad pass (a store down); indexes then expire as before
                logger.warning("corpus_index.keeper_pass_failed error=%r", exc)

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._key_locks.setdefault(key, threading.Lock())

    def _load_and_keep(self, key: str, stamp: Stamp) -> CorpusIndex | None:
        """Load ``key`` and index it for the lexical leg, before any search is handed it."""
        index = self._load(key, stamp)
        if index is None:
            return None
        _ = index.lexical
        return self._keep(index)

    def _keep(self, index: CorpusIndex) -> CorpusIndex | None:
        if not self.cache.put(index):
            return None
        with self._guard:
            self._loaded[index.key] = (index.serial, self._clock())
        return index

    def _refresh_if_old(self, key: str, stamp: Stamp, index: CorpusIndex) -> None:
        with self._guard:
            serial, loaded_at = self._loaded.get(key, (-1, 0.0))
        if serial != index.serial or self._clock() - loaded_at < self.refresh_after_s:
            return
        lock = self._lock(key)
        if not lock.acquire(blocking=False):  # a load or a refresh of this index is under way
            return
        try:
            thread = threading.Thread(
                target=self._refresh, args=(key, stamp, index, lock), name=f"index-refresh-{key}", daemon=True
            )
            thread.start()
        except BaseException:
            lock.release()
            raise

    def _refresh(self, key: str, stamp: Stamp, index: CorpusIndex, lock: threading.Lock) -> None:
        """Reload ``index`` unless it was replaced meanwhile; on failure it is served until it expires."""
        try:
            if self.cache.get(key, stamp) is index:
                self.refreshes += 1
                with timed_load("refresh"):
                    if self._verify is not None and self._verify(index):
                        self._keep(index)
                    elif self._load_and_keep(key, stamp) is None:
                        self.cache.evict(index)  # the store no longer holds what it holds: never served again
        except Exception as exc:
            logger.warning("corpus_index.refresh_failed key=%s error=%r: served until it expires", key, exc)
            with self._guard:  # try again a little later, not on every search meanwhile
                self._loaded[key] = (index.serial, self._clock() - self.refresh_after_s + REFRESH_RETRY_S)
        finally:
            lock.release()
