"""``lib.retrieval.index_loader``: a missing block loaded once however many ask at once, and a block in use
checked (and reloaded if changed) in the background as it ages while the old one goes on being served."""

from __future__ import annotations

import threading
from collections.abc import Callable

import numpy as np
import pytest

from lib.retrieval import index_loader
from lib.retrieval.corpus_index import CorpusIndex, Stamp
from lib.retrieval.index_cache import IndexCache
from lib.retrieval.index_loader import IndexLoader
from tests.polling import eventually

STAMP: Stamp = (3, "2024-12-12T00:00:00")


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Store:
    """Blocks of three chunks; ``gate`` holds every load until it is set; ``fail`` makes loads raise;
    ``text`` is every chunk's text (change it to change what the store holds)."""

    def __init__(self) -> None:
        self.calls = 0
        self.checks = 0
        self.gate = threading.Event()
        self.gate.set()
        self.fail = False
        self.text = "green belt boundaries"

    def rows(self, key: str, count: int) -> tuple[list[str], list[str], list[dict[str, str]]]:
        self.gate.wait()
        if self.fail:
            raise ConnectionError("chroma is down")
        ids = [f"{key}-{i}" for i in range(count)]
        return ids, [self.text] * count, [{"chapter": "13"}] * count

    def load(self, key: str, stamp: Stamp) -> CorpusIndex:
        self.calls += 1
        ids, texts, metadatas = self.rows(key, stamp[0])
        embeddings = np.eye(stamp[0], 384, dtype=np.float32)
        return CorpusIndex.from_embeddings(key, stamp, ids, embeddings, texts, metadatas)

    def verify(self, block: CorpusIndex) -> bool:
        self.checks += 1
        return block.holds(*self.rows(block.key, len(block.ids)))


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store() -> Store:
    return Store()


@pytest.fixture
def loader(clock: Clock, store: Store) -> IndexLoader:
    cache = IndexCache(10 * 2**20, max_age_s=30)
    return IndexLoader(cache, store.load, verify=store.verify, clock=clock)


def test_twenty_searches_arriving_together_at_a_cold_cache_load_the_block_once(
    loader: IndexLoader, store: Store
) -> None:
    store.gate.clear()
    got: list[CorpusIndex | None] = []
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
    loader: IndexLoader, store: Store, clock: Clock
) -> None:
    first = loader.get("NPPF:rev", STAMP)
    assert first is not None
    clock.now = 10.0
    assert loader.get("NPPF:rev", STAMP) is first and store.calls == 1, "young: served as is"

    clock.now = 25.0  # past 3/4 of the 30 s age
    store.gate.clear()
    store.text = "grey belt boundaries"  # changed behind the pipeline's back: the refresh must see it
    assert loader.get("NPPF:rev", STAMP) is first, "served at once while the refresh runs"
    eventually(lambda: store.checks == 1)
    assert loader.get("NPPF:rev", STAMP) is first and store.checks == 1, "one refresh at a time"
    store.gate.set()
    eventually(lambda: loader.cache.get("NPPF:rev", STAMP) is not first)

    refreshed = loader.get("NPPF:rev", STAMP)
    assert refreshed is not None and refreshed.serial != first.serial and refreshed.texts[0] == store.text
    assert store.calls == 2, "the check found the texts changed, so the block was loaded again in full"
    assert "lexical" in vars(refreshed), "indexed for the lexical leg before it was served"
    assert (loader.loads, loader.refreshes) == (1, 1)
    clock.now = 40.0  # past the first load's 30 s, not the refresh's
    assert loader.get("NPPF:rev", STAMP) is refreshed


def test_a_failed_refresh_leaves_the_block_served_and_tried_again_until_it_is_idle_too_long(
    loader: IndexLoader, store: Store, clock: Clock
) -> None:
    first = loader.get("NPPF:rev", STAMP)
    store.fail = True
    clock.now = 25.0
    assert loader.get("NPPF:rev", STAMP) is first
    eventually(lambda: store.checks == 1 and not loader._lock("NPPF:rev").locked())
    assert loader.get("NPPF:rev", STAMP) is first and store.checks == 1, "not retried on every search"
    clock.now = 28.0
    assert loader.get("NPPF:rev", STAMP) is first
    eventually(lambda: store.checks == 2)

    clock.now = 31.0  # past the 30 s age: still served, never a reload on the search's path
    assert loader.get("NPPF:rev", STAMP) is first
    clock.now = 31.0 + loader.keep_idle_s - 1.0  # in use (searched at 31 s), however long unchecked: served
    assert loader.get("NPPF:rev", STAMP) is first
    clock.now += loader.keep_idle_s + 1.0  # nobody searched it or checked it for the idle bound: loaded again
    with pytest.raises(ConnectionError):
        loader.get("NPPF:rev", STAMP)
    store.fail = False  # the store is back: the block, in use again, is served and checked, not loaded
    assert loader.get("NPPF:rev", STAMP) is first
    recovered = clock.now
    clock.now += 3.0  # past any failed background check's retry time
    eventually(lambda: loader.get("NPPF:rev", STAMP) is first and loader._checked_at(first) >= recovered)
    assert store.calls == 2, "the first load and the failed one: never loaded again since"


def one_by_one(loader: IndexLoader, stamps: dict[str, Stamp]) -> list[CorpusIndex | None]:
    return [loader.get(key, stamp) for key, stamp in stamps.items()]


def all_at_once(loader: IndexLoader, stamps: dict[str, Stamp]) -> list[CorpusIndex | None]:
    held = loader.get_all(stamps)
    assert held is not None
    return list(held)


@pytest.mark.parametrize("serve", [one_by_one, all_at_once])
def test_blocks_past_their_age_are_checked_one_at_a_time_by_one_refresher_while_served(
    loader: IndexLoader, store: Store, clock: Clock, serve: Callable[..., list[CorpusIndex | None]]
) -> None:
    """Fifty blocks aged together (a replica's warm-up at scale): every search is answered from the held block
    at once, and the checks queue for one thread instead of fifty loads at once; asked for one by one (``get``)
    or all at once (``get_all``, a search's slices)."""
    stamps = {f"LP{i}:rev": STAMP for i in range(50)}
    held = dict(zip(stamps, serve(loader, stamps), strict=True))
    assert store.calls == 50 and all(held.values())
    clock.now = 25.0
    store.gate.clear()
    running = threading.active_count()
    assert serve(loader, stamps) == list(held.values()), "all served at once"
    eventually(lambda: store.checks == 1)  # the first check waits at the gate: every block is still queued
    assert len(loader._due) == 50
    assert serve(loader, stamps) == list(held.values()) and len(loader._due) == 50, "queued once each"
    assert threading.active_count() <= running + 1, "one refresher thread"
    store.gate.set()
    eventually(lambda: store.checks == 50 and not loader._due)
    assert serve(loader, stamps) == list(held.values()), "found unchanged: kept"
    assert (store.calls, loader.refreshes) == (50, 50)


def test_all_at_once_loads_what_is_missing_or_was_idle_unchecked_and_counts_each_lookup(
    loader: IndexLoader, store: Store, clock: Clock, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted: list[tuple[str, bool, int]] = []  # the metric itself: tests/mcp_service/test_metrics.py
    record = lambda cache, *, hit, times=1: counted.append((cache, hit, times))  # noqa: E731
    monkeypatch.setattr(index_loader, "count_lookup", record)
    first = loader.get_all({"A:rev": STAMP, "B:rev": STAMP})
    assert first is not None and store.calls == 2
    both = loader.get_all({"B:rev": STAMP, "A:rev": STAMP, "C:rev": STAMP})
    assert both is not None and both[:2] == first[::-1] and store.calls == 3, "only C loaded"
    hits, misses = (sum(t for c, h, t in counted if c == "corpus_index" and h is hit) for hit in (True, False))
    assert (hits, misses) == (2, 3), "A and B found the second time; A, B, then C missed"
    changed = loader.get_all({"A:rev": (4, "2025-01-01T00:00:00")})
    assert changed is not None and len(changed[0].ids) == 4 and store.calls == 4, "a new stamp: loaded"
    clock.now = 2 * loader.keep_idle_s + 1.0  # nobody was handed B or checked it since: loaded again, as by ``get``
    again = loader.get_all({"B:rev": STAMP})
    assert again is not None and again[0] is not first[1] and store.calls == 5


def test_all_at_once_is_none_when_one_slice_cannot_be_cached(clock: Clock, store: Store) -> None:
    def load(key: str, stamp: Stamp) -> CorpusIndex | None:
        return None if key == "B:rev" else store.load(key, stamp)

    refused = IndexLoader(IndexCache(10 * 2**20, max_age_s=30), load, clock=clock)
    assert refused.get_all({"A:rev": STAMP, "B:rev": STAMP}) is None
    held = refused.get_all({"A:rev": STAMP})
    assert held is not None and store.calls == 1, "A was loaded and kept"


def test_a_changed_stamp_loads_the_new_rows_in_the_foreground(loader: IndexLoader, store: Store) -> None:
    first = loader.get("NPPF:rev", STAMP)
    newer = loader.get("NPPF:rev", (4, "2025-01-01T00:00:00"))

    assert newer is not None and newer is not first and len(newer.ids) == 4
    assert loader.loads == 2


def test_a_loaded_block_is_served_with_its_lexical_index_built(loader: IndexLoader) -> None:
    block = loader.get("NPPF:rev", STAMP)

    assert block is not None and "lexical" in vars(block), "no search pays for tokenising the revision"
    assert block.lexical.rows == 3


def test_a_refresh_that_finds_the_same_rows_keeps_the_block_its_index_and_its_serial_without_loading_it(
    loader: IndexLoader, store: Store, clock: Clock
) -> None:
    first = loader.get("NPPF:rev", STAMP)
    assert first is not None
    index = first.lexical

    clock.now = 25.0
    assert loader.get("NPPF:rev", STAMP) is first
    eventually(lambda: loader.refreshes == 1 and not loader._lock("NPPF:rev").locked())

    assert (store.checks, store.calls) == (1, 1), "checked, not loaded again"
    clock.now = 45.0  # past the first load's 30 s, not the check's: its age started again
    kept = loader.get("NPPF:rev", STAMP)
    assert kept is first and kept.lexical is index and store.calls == 1


def test_a_block_holds_rows_in_any_order_but_not_other_texts_metadata_or_ids() -> None:
    ids, texts, metas = ["a", "b"], ["one", "two"], [{"chapter": "1"}, {"chapter": "2"}]
    block = CorpusIndex.from_embeddings("k", (2, "t"), ids, np.eye(2, 4, dtype=np.float32), texts, metas)

    assert block.holds(["b", "a"], ["two", "one"], [{"chapter": "2"}, {"chapter": "1"}])
    assert not block.holds(["a", "b"], ["one", "TWO"], metas)
    assert not block.holds(["a", "b"], texts, [{"chapter": "1"}, {"chapter": "9"}])
    assert not block.holds(["a", "c"], texts, metas)
    assert not block.holds(["a"], ["one"], [{"chapter": "1"}])


def test_the_keeper_refreshes_a_block_in_use_while_nobody_searches_so_the_next_search_finds_it(
    loader: IndexLoader, store: Store, clock: Clock
) -> None:
    first = loader.get("NPPF:rev", STAMP)
    clock.now = 10.0
    assert loader.refresh_held() == 0, "young: nothing to do"

    clock.now = 25.0  # no search since t=0
    assert loader.refresh_held() == 1
    eventually(lambda: store.checks == 1 and not loader._due)
    clock.now = 45.0  # past the load's 30 s: without the keeper this search would load it again
    assert loader.get("NPPF:rev", STAMP) is first and store.calls == 1


def test_the_keeper_lets_a_block_nobody_searched_for_a_long_time_expire(
    loader: IndexLoader, store: Store, clock: Clock
) -> None:
    loader.get("NPPF:rev", STAMP)
    clock.now = loader.keep_idle_s + 1.0

    assert loader.refresh_held() == 0 and store.checks == 0
    assert loader.cache.get("NPPF:rev", STAMP) is None, "dropped: nobody searched it for the idle bound"


def test_the_keeper_thread_refreshes_and_warms_until_stopped(loader: IndexLoader, store: Store, clock: Clock) -> None:
    loader.get("NPPF:rev", STAMP)
    clock.now = 25.0

    def warm() -> None:
        loader.get("NPPF:new", STAMP)  # a revision that became searchable since

    loader.keep_fresh(interval_s=0.01, warm=warm)
    try:
        eventually(lambda: store.checks >= 1 and loader.cache.get("NPPF:new", STAMP) is not None)
    finally:
        loader.stop()
    checks = store.checks
    clock.now = 50.0
    threading.Event().wait(0.05)
    assert store.checks == checks, "stopped"
