"""The service's long-lived heap, kept out of the garbage collector's sight.

Why: everything a warm replica holds (the SDK, schemas, the encoder, clients, cached indexes) is live for as
long as it runs, yet CPython's full collection walks it all again and again, pausing the process. So the warm
heap is frozen (``gc.freeze``) after start-up, and what survives any slow full collection later (the heap also
grows for good, e.g. when the first upload imports Prefect's client) is frozen too. What requests allocate is
collected as before. Cyclic garbage among objects alive at a freeze (an in-flight request's frames and tasks)
is never collected while frozen, so after any refreeze the heap is thawed, collected in full and frozen again at
most every ``THAW_EVERY_S`` (``thaw_loop``): one full pause per interval bounds what refreezes can keep.
And what Python frees, glibc keeps: the pages of freed memory are given back every ``TRIM_EVERY_S``
(``trim_loop``), so a transient peak does not stay in RSS. Measurements and history:
docs/decisions/0004-frozen-heap.md.
"""

from __future__ import annotations

import gc
import logging
import time
from typing import Any

import anyio
import anyio.to_thread

from lib.glibc_heap import give_back, malloc_figures
from lib.observability.memory import rss_bytes

logger = logging.getLogger(__name__)

SLOW_FULL_COLLECTION_S = 0.025
"""A full collection slower than this means many long-lived objects are being walked again and again."""

THAW_EVERY_S = 600.0
"""At most one thaw (a full collection of the whole heap) per this interval, and only after a refreeze."""

TRIM_EVERY_S = 10.0
"""How often glibc's freed memory is looked at, and its pages given back if it keeps more than ``TRIM_ABOVE``."""

TRIM_ABOVE = 16 * 1024 * 1024
"""Freed bytes glibc may keep without a trim (a trim walks its free lists: about 1 ms, 20 ms when it gives back
hundreds of MB)."""

_state = {"owner": 0, "full_started": 0.0, "refrozen": 0, "thawed_at": 0.0, "thawing": 0}
"""Whether this process is the service (``claim_process``), when the running full collection started,
refreezes since the last thaw, when that ran (``time.monotonic``) and whether one is running: one per process,
whatever the servers."""


def claim_process() -> None:
    """Say that this process is the service (``policy-kb serve``, a uvicorn worker, the stdio server), so its
    heap is frozen once a server has started. The collector is the whole process's: an app embedded in another
    process (a test run, a host application) leaves it alone."""
    _state["owner"] = 1


def owns_process() -> bool:
    """Whether ``claim_process`` was called: whether start-up freezes the heap and ``thaw_loop`` runs."""
    return bool(_state["owner"])


def freeze_startup_heap() -> int:
    """Collect what start-up left behind, freeze every surviving object, and from now on freeze the survivors
    of any slow full collection; how many objects are frozen."""
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    _state["thawed_at"] = time.monotonic()  # the first thaw, if any refreeze, comes THAW_EVERY_S after start-up
    if _refreeze_after_slow_full_collection not in gc.callbacks:
        gc.callbacks.append(_refreeze_after_slow_full_collection)
    frozen = gc.get_freeze_count()
    logger.info("service.heap_frozen objects=%d ms=%.1f", frozen, (time.perf_counter() - started) * 1000)
    return frozen


def _refreeze_after_slow_full_collection(phase: str, info: dict[str, Any]) -> None:
    """``gc.callbacks`` hook: time each full collection; freeze what survives a slow one."""
    if info["generation"] != 2 or _state["thawing"]:
        return
    if phase == "start":
        _state["full_started"] = time.perf_counter()
        return
    took = time.perf_counter() - _state["full_started"]
    if took > SLOW_FULL_COLLECTION_S:
        gc.freeze()
        _state["refrozen"] += 1
        logger.info("service.heap_refrozen objects=%d full_collection_ms=%.1f", gc.get_freeze_count(), took * 1000)


def thaw() -> int:
    """Unfreeze, collect everything that has become garbage since the freezes (cycles included), freeze the
    survivors again; how many objects the collection found unreachable."""
    started = time.perf_counter()
    _state["thawing"] = 1  # this full collection is slow by design: not a refreeze
    try:
        gc.unfreeze()
        found = gc.collect()
        gc.freeze()
    finally:
        _state["thawing"] = 0
    _state["refrozen"], _state["thawed_at"] = 0, time.monotonic()
    logger.info(
        "service.heap_thawed unreachable=%d frozen=%d ms=%.1f",
        found,
        gc.get_freeze_count(),
        (time.perf_counter() - started) * 1000,
    )
    return found


async def thaw_loop(every_s: float = THAW_EVERY_S) -> None:
    """A service's background loop: thaw once per ``every_s`` when a refreeze happened since the last thaw."""
    while True:
        await anyio.sleep(every_s / 10)
        if _state["refrozen"] and time.monotonic() - _state["thawed_at"] >= every_s:
            thaw()


def trim() -> int:
    """Give glibc's freed pages back when it keeps more than ``TRIM_ABOVE`` freed bytes; the RSS it released
    (bytes, 0 if it did not trim)."""
    if malloc_figures().get("malloc_free", 0) <= TRIM_ABOVE:
        return 0
    before = rss_bytes()
    give_back()
    released = max(0, before - rss_bytes())
    if released >= 1024 * 1024:
        logger.info("service.heap_trimmed released_mb=%.1f rss_mb=%.1f", released / 2**20, rss_bytes() / 2**20)
    return released


async def trim_loop(every_s: float = TRIM_EVERY_S) -> None:
    """A service's background loop: ``trim`` every ``every_s``, on a worker thread (glibc's arena lock is held
    while it walks the free lists, not the event loop)."""
    while True:
        await anyio.sleep(every_s)
        await anyio.to_thread.run_sync(trim)
