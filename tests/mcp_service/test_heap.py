"""``mcp_service.heap``: the warm heap is frozen, and so is whatever survives a slow full collection later."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from mcp_service import heap


@pytest.fixture
def frozen_heap() -> Iterator[None]:
    yield
    gc.unfreeze()
    if heap._refreeze_after_slow_full_collection in gc.callbacks:
        gc.callbacks.remove(heap._refreeze_after_slow_full_collection)


def test_the_start_up_heap_is_frozen_and_the_survivors_of_a_slow_full_collection_are_frozen_too(
    frozen_heap: None,
) -> None:
    heap.freeze_startup_heap()
    at_start = gc.get_freeze_count()
    assert at_start > 0

    quick = gc.get_freeze_count()
    gc.collect()  # nothing new to walk: fast, so nothing more is frozen (frozen objects may still die)
    assert gc.get_freeze_count() <= quick

    gc.disable()  # so the one collection below is the one that meets them all
    try:
        kept = [[i] for i in range(1_000_000)]  # long-lived, as Prefect's client once the first upload imports it
    finally:
        gc.enable()
    gc.collect()  # walks a million new objects: slow, so its survivors are frozen
    assert gc.get_freeze_count() > at_start + 0.99 * len(kept)
    assert all(o is not kept[-1] for o in gc.get_objects()), "the new objects are no longer walked"
    assert heap._refreeze_after_slow_full_collection in gc.callbacks
