"""Loading revision blocks into a ``RevisionBlockCache``: once per block however many ask, and refreshed
before they expire without anyone waiting.

Why: a block is the chunks of one revision read from Chroma (tens of milliseconds for 500 chunks, seconds
for the whole NPPF on a busy machine). Twenty clients arriving together at a cold service each found the
block missing and each loaded it, twenty loads of the same rows at once; and every block expires 30 s
after loading, so under steady traffic every block was reloaded by the request that found it expired,
with every other request for it waiting or loading it too. Those were the 1-2 s p99 of a 20-client run.

- Single flight: a missing block is loaded by one caller while the others for the same key wait for that
  load and use its result (a lock per key; different blocks still load in parallel).
- Refresh ahead: a block served when older than ``refresh_after_s`` (three quarters of the cache's
  ``max_age_s`` by default) is reloaded in a background thread while it goes on being served; the new
  load replaces it before it would expire. A block nobody asks for expires as before, and the cache's
  own bound holds: no block is served more than ``max_age_s`` after its load.
- Ready when served: the loader builds a block's lexical twin before the block is put in the cache, so
  no search pays for tokenising a revision (~100 ms for the NPPF: the p99 of a 20-client run after the
  two fixes above, since every refresh handed the next search a block with no lexical index yet).
- A refresh first asks the store whether the held block is still what it holds (``verify``: ids, texts
  and metadata, no vectors: ~7 ms of this process's CPU for the NPPF against ~60 ms for the vectors, plus
  ~110 ms to index them again); if it is, the block, its lexical twin and the answers remembered under
  its ``serial`` are kept and only its age starts again. Five revisions refreshed at once in full every
  22 s took the interpreter lock from requests for most of a second.
- Kept while the service is idle: a long-running service calls ``keep_fresh()``, a thread that does the same
  refresh for every held block served in the last ``keep_idle_s`` (15 minutes), searched or not since. An
  agent's next question after a pause of 30 s found every block expired and waited ~360 ms for a reload; now
  the blocks it was using are there, checked within the last 30 s. Blocks idle for longer expire as before,
  except those its ``warm`` callback asks for on every pass (each ``get`` counts as served): the policy
  server's asks for the revisions searchable today, so they stay loaded for as long as it runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from lib.stores.block_cache import RevisionBlock, RevisionBlockCache, Stamp

logger = logging.getLogger(__name__)

REFRESH_AT = 0.75
"""The fraction of ``max_age_s`` after which a block in use is reloaded in the background."""

KEEP_IDLE_S = 900.0
"""How long after its last search ``keep_fresh`` goes on refreshing a block."""

REFRESH_RETRY_S = 2.0
"""After a failed background refresh, how long the block is served before the next one is tried."""

BlockLoad = Callable[[str, Stamp], RevisionBlock | None]
"""Reads one block from the store; None when it must not be cached (its rows disagree with the stamp)."""

BlockCheck = Callable[[RevisionBlock], bool]
"""Whether the store still holds exactly a block's rows (cheaper than loading it again)."""


class BlockLoader:
    """The cache's blocks, each loaded by one caller at a time and refreshed ahead of its expiry."""

    def __init__(
        self,
        cache: RevisionBlockCache,
        load: BlockLoad,
        *,
        verify: BlockCheck | None = None,
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
        """key → (serial, load time) of the block last put for it: how old the served block is."""
        self._served: dict[str, float] = {}
        """key → when a search was last handed its block."""
        self.keep_idle_s = KEEP_IDLE_S
        self._keeper: threading.Thread | None = None
        self._stop = threading.Event()
        self.loads = 0
        self.refreshes = 0
        """How many loads ran in the foreground and in the background (for tests and health)."""

    def get(self, key: str, stamp: Stamp) -> RevisionBlock | None:
        """The block of ``key`` under ``stamp``, loaded if missing; None if it cannot be cached.

        Raises what the load raises (a store outage); the next caller tries again.
        """
        self._served[key] = self._clock()
        block = self.cache.get(key, stamp)
        if block is not None:
            self._refresh_if_old(key, stamp, block)
            return block
        with self._lock(key):
            block = self.cache.get(key, stamp)  # loaded by the caller this one waited for
            if block is None:
                self.loads += 1
                block = self._load_and_keep(key, stamp)
        return block

    def keep_fresh(self, interval_s: float | None = None, *, warm: Callable[[], object] | None = None) -> None:
        """Start the thread that refreshes held blocks in use whether or not they are searched (idempotent);
        every ``interval_s`` (a third of ``refresh_after_s`` by default). ``warm``, called on each pass too,
        loads what the caller knows will be searched (a revision ingested since: loaded here, not by the
        first search that wants it). ``stop()`` ends it."""
        if self._keeper is not None:
            return
        every = self.refresh_after_s / 3 if interval_s is None else interval_s
        self._keeper = threading.Thread(target=self._keeper_loop, args=(every, warm), name="block-keeper", daemon=True)
        self._keeper.start()

    def stop(self) -> None:
        self._stop.set()
        if self._keeper is not None:
            self._keeper.join(timeout=10)

    def refresh_held(self) -> int:
        """Refresh, one after the other, each held block past its refresh age that a search was handed in the
        last ``keep_idle_s``; how many were refreshed."""
        now = self._clock()
        refreshed = 0
        for block in self.cache.blocks():
            with self._guard:
                serial, loaded_at = self._loaded.get(block.key, (-1, 0.0))
            if serial != block.serial or now - loaded_at < self.refresh_after_s:
                continue
            served = self._served.get(block.key)
            if served is None or now - served > self.keep_idle_s:
                continue
            lock = self._lock(block.key)
            if lock.acquire(blocking=False):
                self._refresh(block.key, block.stamp, block, lock)
                refreshed += 1
        return refreshed

    def _keeper_loop(self, every: float, warm: Callable[[], object] | None) -> None:
        while not self._stop.wait(every):
            try:
                self.refresh_held()
                if warm is not None:
                    warm()
            except Exception as exc:  # the keeper outlives a bad pass (a store down); blocks then expire as before
                logger.warning("block_cache.keeper_pass_failed error=%r", exc)

    def _lock(self, key: str) -> threading.Lock:
        with self._guard:
            return self._key_locks.setdefault(key, threading.Lock())

    def _load_and_keep(self, key: str, stamp: Stamp) -> RevisionBlock | None:
        """Load ``key`` and index it for the lexical leg, before any search is handed it."""
        block = self._load(key, stamp)
        if block is None:
            return None
        _ = block.lexical
        return self._keep(block)

    def _keep(self, block: RevisionBlock) -> RevisionBlock | None:
        if not self.cache.put(block):
            return None
        with self._guard:
            self._loaded[block.key] = (block.serial, self._clock())
        return block

    def _refresh_if_old(self, key: str, stamp: Stamp, block: RevisionBlock) -> None:
        with self._guard:
            serial, loaded_at = self._loaded.get(key, (-1, 0.0))
        if serial != block.serial or self._clock() - loaded_at < self.refresh_after_s:
            return
        lock = self._lock(key)
        if not lock.acquire(blocking=False):  # a load or a refresh of this block is under way
            return
        try:
            thread = threading.Thread(
                target=self._refresh, args=(key, stamp, block, lock), name=f"block-refresh-{key}", daemon=True
            )
            thread.start()
        except BaseException:
            lock.release()
            raise

    def _refresh(self, key: str, stamp: Stamp, block: RevisionBlock, lock: threading.Lock) -> None:
        """Reload ``block`` unless it was replaced meanwhile; on failure it is served until it expires."""
        try:
            if self.cache.get(key, stamp) is block:
                self.refreshes += 1
                if self._verify is not None and self._verify(block):
                    self._keep(block)
                else:
                    self._load_and_keep(key, stamp)
        except Exception as exc:
            logger.warning("block_cache.refresh_failed key=%s error=%r: served until it expires", key, exc)
            with self._guard:  # try again a little later, not on every search meanwhile
                self._loaded[key] = (block.serial, self._clock() - self.refresh_after_s + REFRESH_RETRY_S)
        finally:
            lock.release()
