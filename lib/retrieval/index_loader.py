"""Loading corpus indexes into an ``IndexCache``: each once however many ask (single flight), checked again in
the background as it ages without anyone waiting, and kept while the service is idle.

- Single flight: a missing index is loaded by one caller; the others for the same key wait for that load.
- Checked in the background: one served past ``refresh_after_s`` (3/4 of the cache's ``max_age_s``) is queued
  for one refresher thread, which checks the queue's slices one at a time, resting so that checking takes at
  most ``CHECK_SHARE`` of a core, while they go on being served. A slice's stamp moves with every write through
  the pipeline (decision 0028), so age only bounds how late a change made behind the pipeline's back is seen:
  ``max_age_s`` while one pass of the queue fits in it, else the pass's length. The search never waits for a
  check (decision 0036).
- Idle slices go: one nobody was handed for ``keep_idle_s`` is dropped by the keeper, and one nobody was handed
  and nobody checked for that long (no keeper running) is loaded again in the foreground. One in use is never
  loaded on a search's path for its age, however long a pass of the checks takes.
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
from collections.abc import Callable, Mapping

from lib.observability import timed_load
from lib.observability.metrics import count_lookup
from lib.retrieval.corpus_index import CorpusIndex, Stamp
from lib.retrieval.index_cache import IndexCache
from lib.retrieval.index_snapshot import IndexSnapshots

logger = logging.getLogger(__name__)

REFRESH_AT = 0.75
"""The fraction of ``max_age_s`` after which an index in use is reloaded in the background."""

KEEP_IDLE_S = 900.0
"""How long after its last search ``keep_fresh`` goes on refreshing an index."""

CHECK_SHARE = 0.25
"""At most this share of the refresher's time goes to checking held indexes against the store; it rests the rest."""

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
        snapshots: IndexSnapshots | None = None,
    ) -> None:
        """``verify``: the cheap check a refresh makes first; without it every refresh loads in full.
        ``snapshots``: where a loaded index is saved, and read back by a later foreground load under the same
        stamp (then checked against the store at once, in the background)."""
        self.cache = cache
        self._load = load
        self._verify = verify
        self._snapshots = snapshots
        self._clock = clock
        self.refresh_after_s = cache.max_age_s * REFRESH_AT
        self._guard = threading.Lock()
        self._key_locks: dict[str, threading.Lock] = {}
        self._loaded: dict[str, tuple[int, float]] = {}
        """key → (serial, load time) of the index last put for it: how old the served index is."""
        self._served: dict[str, float] = {}
        """key → when a search was last handed its index."""
        self._due: dict[str, tuple[Stamp, CorpusIndex]] = {}
        """key → the held index a search found past its refresh age, in the order found (the refresher's queue)."""
        self._refresher: threading.Thread | None = None
        self._retry_at: dict[str, float] = {}
        """key → when a failed check of its index may be tried again."""
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
        previous = self._served.get(key)
        now = self._served[key] = self._clock()
        idle = previous is None or now - previous > self.keep_idle_s
        index = self._servable(self.cache.get(key, stamp), now, idle)
        count_lookup("corpus_index", hit=index is not None)
        if index is None:
            with self._lock(key):
                index = self._servable(self.cache.get(key, stamp), now, idle)  # loaded by the caller waited for
                if index is None:
                    self.loads += 1
                    with timed_load("load"):
                        index = self._load_and_keep(key, stamp, from_snapshot=True)
        if index is not None:
            self._refresh_if_old(key, stamp, index)  # past its age, or read from a snapshot (checked at once)
        return index

    def get_all(self, stamps: Mapping[str, Stamp]) -> list[CorpusIndex] | None:
        """``get`` of every key of ``stamps``, in order, or ``None`` as soon as one cannot be cached. What the cache
        holds is looked up, aged, queued for its check and counted in one pass, under one hold of each lock (a
        search asks for hundreds of slices at once; decision 0040). Only what must be loaded goes through ``get``,
        so a load stays single-flight."""
        now = self._clock()
        found = self.cache.get_many(stamps)
        with self._guard:
            for at, ((key, stamp), index) in enumerate(zip(stamps.items(), found, strict=True)):
                if index is None:
                    continue  # ``get`` loads it
                previous = self._served.get(key)
                checked_at = self._checked_at_locked(index)
                if (previous is None or now - previous > self.keep_idle_s) and now - checked_at > self.keep_idle_s:
                    found[at] = None  # nobody kept it: ``get`` loads it again
                    continue
                self._served[key] = now
                if now - checked_at >= self.refresh_after_s:
                    self._queue_locked(key, stamp, index, now)
        count_lookup("corpus_index", hit=True, times=sum(index is not None for index in found))
        indexes = []
        for (key, stamp), index in zip(stamps.items(), found, strict=True):
            index = index if index is not None else self.get(key, stamp)
            if index is None:
                return None
            indexes.append(index)
        return indexes

    def _servable(self, index: CorpusIndex | None, now: float, idle: bool) -> CorpusIndex | None:
        """``index``, unless nobody was handed it (``idle``) nor checked it for ``keep_idle_s``: the keeper did
        not keep it, so it is loaded again."""
        if index is not None and idle and now - self._checked_at(index) > self.keep_idle_s:
            return None
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
        """Queue for the refresher, the longest unchecked first, each held index past its refresh age that a
        search was handed in the last ``keep_idle_s``, and drop the others nobody was handed for that long; how
        many were queued."""
        now = self._clock()
        queued = 0
        for index in sorted(self.cache.indexes(), key=self._checked_at):
            served = self._served.get(index.key)
            if served is None or now - served > self.keep_idle_s:
                self.cache.evict(index)
                continue
            queued += self._refresh_if_old(index.key, index.stamp, index)
        return queued

    def _keeper_loop(self, every: float, warm: Callable[[], object] | None) -> None:
        while not self._stop.wait(every):
            try:
                self.refresh_held()
                if warm is not None:
                    warm()
            except Exception as exc:  # the keeper outlives a bad pass (a store down); the next pass tries again
                logger.warning("corpus_index.keeper_pass_failed error=%r", exc)

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._key_locks.setdefault(key, threading.Lock())

    def _load_and_keep(self, key: str, stamp: Stamp, *, from_snapshot: bool = False) -> CorpusIndex | None:
        """Load ``key`` and index it for the lexical leg, before any search is handed it; ``from_snapshot``: from
        its snapshot under ``stamp`` if there is one (kept as not yet checked), else from the store (saved, and served
        as read back from the file)."""
        if from_snapshot and self._snapshots is not None:
            index = self._snapshots.load(key, stamp)
            if index is not None:
                return self._keep(index, checked=False)
        index = self._load(key, stamp)
        if index is None:
            return None
        _ = index.lexical
        if self._snapshots is not None:
            index = self._snapshots.save(index) or index  # served from the file: its vectors and texts stay there
        return self._keep(index)

    def _keep(self, index: CorpusIndex, *, checked: bool = True) -> CorpusIndex | None:
        """Put ``index`` in the cache, its age starting now (``checked``) or already due for a check."""
        if not self.cache.put(index):
            return None
        now = self._clock()
        with self._guard:
            self._loaded[index.key] = (index.serial, now if checked else now - self.refresh_after_s)
            self._retry_at.pop(index.key, None)
        return index

    def _checked_at(self, index: CorpusIndex) -> float:
        """When ``index`` was loaded or last found unchanged (``-inf`` if it is not the one last put)."""
        with self._guard:
            return self._checked_at_locked(index)

    def _checked_at_locked(self, index: CorpusIndex) -> float:
        serial, loaded_at = self._loaded.get(index.key, (-1, 0.0))
        return loaded_at if serial == index.serial else float("-inf")

    def _refresh_if_old(self, key: str, stamp: Stamp, index: CorpusIndex) -> bool:
        """Queue ``index`` for the refresher once it is past its refresh age (the refresher starts if idle);
        whether it was queued now."""
        now = self._clock()
        if now - self._checked_at(index) < self.refresh_after_s:
            return False
        with self._guard:
            return self._queue_locked(key, stamp, index, now)

    def _queue_locked(self, key: str, stamp: Stamp, index: CorpusIndex, now: float) -> bool:
        """Queue ``index`` for the refresher, unless it is queued or waits to be tried again; whether it was."""
        if key in self._due or now < self._retry_at.get(key, now):
            return False
        self._due[key] = (stamp, index)
        if self._refresher is None:
            self._refresher = threading.Thread(target=self._refresh_due, name="index-refresher", daemon=True)
            self._refresher.start()
        return True

    def _refresh_due(self) -> None:
        """The refresher: the queued indexes one at a time, oldest queued first, until the queue is empty (then
        the thread ends; the next index queued starts another). After each check it rests so that checking
        takes at most ``CHECK_SHARE`` of its time: re-reading a million chunks from the store is minutes of
        work, which must not take a core from the searches."""
        while True:
            with self._guard:
                if not self._due:
                    self._refresher = None
                    return
                key, (stamp, index) = next(iter(self._due.items()))
            lock = self._lock(key)
            started = time.perf_counter()
            if lock.acquire(blocking=False):  # else a load of this key is under way, which restarts its age
                self._refresh(key, stamp, index, lock)
            with self._guard:
                del self._due[key]
            self._stop.wait((time.perf_counter() - started) * (1.0 / CHECK_SHARE - 1.0))

    def _refresh(self, key: str, stamp: Stamp, index: CorpusIndex, lock: threading.Lock) -> None:
        """Check ``index`` (reload it if changed) unless it was replaced meanwhile; on failure it goes on being
        served and is tried again ``REFRESH_RETRY_S`` later."""
        try:
            if self.cache.get(key, stamp) is index:
                self.refreshes += 1
                with timed_load("refresh"):
                    if self._verify is not None and self._verify(index):
                        self._keep(index)
                    elif self._load_and_keep(key, stamp) is None:
                        self.cache.evict(index)  # the store no longer holds what it holds: never served again
        except Exception as exc:
            logger.warning("corpus_index.refresh_failed key=%s error=%r: served, tried again", key, exc)
            with self._guard:  # try again a little later, not on every search meanwhile
                self._retry_at[key] = self._clock() + REFRESH_RETRY_S
        finally:
            lock.release()
