"""``lib.stores.block_loader``: a missing block loaded once however many ask at once, and a block in use
reloaded in the background before it expires while the old one goes on being served."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from lib.stores.block_cache import RevisionBlock, RevisionBlockCache, Stamp
from lib.stores.block_loader import BlockLoader
from tests.polling import eventually

STAMP: Stamp = (3, "2024-12-12T00:00:00")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Store:
    """Blocks of three chunks; ``gate`` holds every load until it is set; ``fail`` makes loads raise."""

    def __init__(self) -> None:
        self.calls = 0
        self.gate = threading.Event()
        self.gate.set()
        self.fail = False

    def load(self, key: str, stamp: Stamp) -> RevisionBlock:
        self.calls += 1
        self.gate.wait()
        if self.fail:
            raise ConnectionError("chroma is down")
        ids = [f"{key}-{i}" for i in range(stamp[0])]
        embeddings = np.eye(stamp[0], 384, dtype=np.float32)
        return RevisionBlock.from_embeddings(key, stamp, ids, embeddings, ["text"] * len(ids), [{}] * len(ids))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store() -> Store:
    return Store()


@pytest.fixture
def loader(clock: Clock, store: Store) -> BlockLoader:
    return BlockLoader(RevisionBlockCache(10 * 2**20, max_age_s=30, clock=clock), store.load, clock=clock)


def test_twenty_searches_arriving_together_at_a_cold_cache_load_the_block_once(
    loader: BlockLoader, store: Store
) -> None:
    store.gate.clear()
    got: list[RevisionBlock | None] = []
    threads = [threading.Thread(target=lambda: got.append(loader.get("NPPF:rev", STAMP))) for _ in range(20)]
    for thread in threads:
        thread.start()
    eventually(lambda: store.calls == 1)
    store.gate.set()
    for thread in threads:
        thread.join(timeout=10)

    assert store.calls == 1 and loader.loads == 1
    assert len(got) == 20 and all(block is got[0] for block in got) and got[0] is not None


def test_a_block_in_use_is_reloaded_in_the_background_before_it_expires(
    loader: BlockLoader, store: Store, clock: Clock
) -> None:
    first = loader.get("NPPF:rev", STAMP)
    clock.now = 10.0
    assert loader.get("NPPF:rev", STAMP) is first and store.calls == 1, "young: served as is"

    clock.now = 25.0  # past 3/4 of the 30 s age
    store.gate.clear()
    assert loader.get("NPPF:rev", STAMP) is first, "served at once while the refresh runs"
    eventually(lambda: store.calls == 2)
    assert loader.get("NPPF:rev", STAMP) is first and store.calls == 2, "one refresh at a time"
    store.gate.set()
    eventually(lambda: loader.cache.get("NPPF:rev", STAMP) is not first)

    refreshed = loader.get("NPPF:rev", STAMP)
    assert refreshed is not None and refreshed.serial != first.serial
    assert (loader.loads, loader.refreshes) == (1, 1)
    clock.now = 40.0  # past the first load's 30 s, not the refresh's
    assert loader.get("NPPF:rev", STAMP) is refreshed


def test_a_failed_refresh_leaves_the_block_served_until_it_expires_then_the_next_search_loads_it(
    loader: BlockLoader, store: Store, clock: Clock
) -> None:
    first = loader.get("NPPF:rev", STAMP)
    store.fail = True
    clock.now = 25.0
    assert loader.get("NPPF:rev", STAMP) is first
    eventually(lambda: not loader._lock("NPPF:rev").locked())
    assert loader.get("NPPF:rev", STAMP) is first and store.calls == 2, "not retried on every search"
    clock.now = 28.0
    assert loader.get("NPPF:rev", STAMP) is first
    eventually(lambda: store.calls == 3)

    clock.now = 31.0
    with pytest.raises(ConnectionError):
        loader.get("NPPF:rev", STAMP)
    store.fail = False
    assert loader.get("NPPF:rev", STAMP) is not first


def test_a_changed_stamp_loads_the_new_rows_in_the_foreground(loader: BlockLoader, store: Store) -> None:
    first = loader.get("NPPF:rev", STAMP)
    newer = loader.get("NPPF:rev", (4, "2025-01-01T00:00:00"))

    assert newer is not None and newer is not first and len(newer.ids) == 4
    assert loader.loads == 2
