"""The service's long-lived heap, kept out of the garbage collector's sight.

A replica holds a large, long-lived heap from the moment it is warm (the SDK, pydantic's schemas, the
encoder, Chroma's client, the cached blocks): a few hundred thousand container objects. CPython's full
(generation 2) collection walks all of them, and under steady traffic one ran every few seconds and
stopped the process for 150-280 ms: the p99 of a 20-client load run. Nothing made at start-up is
garbage, so ``gc.freeze()`` after the warm-up moves it to the permanent generation that collections skip;
what requests allocate is collected as before.

The heap also grows for good after start-up: the first upload imports Prefect's client (a hundred
thousand objects more), and the 150-200 ms pauses came back after it. So a full collection that takes
longer than ``SLOW_FULL_COLLECTION_S`` freezes what survived it: it has just been collected, so what is
left is live. The cost is that cyclic garbage among objects alive at that moment is never collected;
freezes are rare (after a burst of new long-lived objects, not per request), which bounds it.
"""

from __future__ import annotations

import gc
import logging
import time
from typing import Any

logger = logging.getLogger(__name__)

SLOW_FULL_COLLECTION_S = 0.025
"""A full collection slower than this means many long-lived objects are being walked again and again."""

_full_started: list[float] = [0.0]


def freeze_startup_heap() -> int:
    """Collect what start-up left behind, freeze every surviving object, and from now on freeze the survivors
    of any slow full collection; how many objects are frozen."""
    started = time.perf_counter()
    gc.collect()
    gc.freeze()
    if _refreeze_after_slow_full_collection not in gc.callbacks:
        gc.callbacks.append(_refreeze_after_slow_full_collection)
    frozen = gc.get_freeze_count()
    logger.info("service.heap_frozen objects=%d ms=%.1f", frozen, (time.perf_counter() - started) * 1000)
    return frozen


def _refreeze_after_slow_full_collection(phase: str, info: dict[str, Any]) -> None:
    """``gc.callbacks`` hook: time each full collection; freeze what survives a slow one."""
    if info["generation"] != 2:
        return
    if phase == "start":
        _full_started[0] = time.perf_counter()
        return
    took = time.perf_counter() - _full_started[0]
    if took > SLOW_FULL_COLLECTION_S:
        gc.freeze()
        logger.info("service.heap_refrozen objects=%d full_collection_ms=%.1f", gc.get_freeze_count(), took * 1000)
