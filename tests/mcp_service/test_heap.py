"""``mcp_service.heap``: the warm heap is frozen, and so is whatever survives a slow full collection later."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import anyio
import pytest
from starlette.testclient import TestClient

from lib.config import Settings
from mcp_service import heap
from mcp_service.app import create_mcp_app, new_mcp_server, server_access
from tests.lib.test_glibc_heap import MB, fragment


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


class Cycle:
    def __init__(self) -> None:
        self.me = self


def test_a_cycle_frozen_while_alive_is_never_collected_until_a_thaw(frozen_heap: None) -> None:
    """The soak's slow RSS climb: a request's cyclic objects, alive when a slow collection refroze the heap,
    stay frozen after the request ends; ``thaw`` collects them and freezes the survivors again."""
    heap.freeze_startup_heap()
    in_flight = Cycle()
    gone = weakref.ref(in_flight)
    gc.freeze()  # what a refreeze after a slow full collection does while the request runs
    del in_flight  # the request ends: its cycle is garbage
    gc.collect()
    assert gone() is not None, "frozen cyclic garbage outlives a full collection"
    heap.thaw()  # (what it counts may be found by another thread's collection first: not asserted)
    assert gone() is None
    assert gc.get_freeze_count() > 0, "the survivors are frozen again"


@pytest.mark.anyio
async def test_the_thaw_loop_thaws_only_after_a_refreeze(frozen_heap: None, monkeypatch: pytest.MonkeyPatch) -> None:
    thaws: list[int] = []

    def counted_thaw() -> int:
        thaws.append(heap._state["refrozen"])
        heap._state["refrozen"] = 0
        return 0

    monkeypatch.setattr(heap, "thaw", counted_thaw)
    monkeypatch.setitem(heap._state, "refrozen", 0)
    monkeypatch.setitem(heap._state, "thawed_at", 0.0)
    with anyio.move_on_after(0.3):
        await heap.thaw_loop(every_s=0.05)
    assert thaws == [], "no refreeze, no thaw"
    heap._state["refrozen"] = 3
    with anyio.move_on_after(0.3):
        await heap.thaw_loop(every_s=0.05)
    assert thaws == [3], "one thaw for the refreezes, none after while nothing was refrozen again"


def test_a_trim_gives_back_what_glibc_keeps_over_the_threshold_and_says_so(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    heap.trim()
    kept = fragment(100)
    monkeypatch.setattr(heap, "TRIM_ABOVE", 1024 * MB)
    assert heap.trim() == 0, "under the threshold: left alone"
    monkeypatch.setattr(heap, "TRIM_ABOVE", 16 * MB)
    with caplog.at_level("INFO", logger=heap.__name__):
        assert heap.trim() > 50 * MB
    assert any(r.getMessage().startswith("service.heap_trimmed released_mb=") for r in caplog.records)
    assert kept


@pytest.mark.anyio
async def test_the_trim_loop_trims_on_every_pass_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    loop_thread, passes = threading.get_ident(), []

    class Enough(Exception):
        pass

    def counted() -> int:
        passes.append(threading.get_ident())
        if len(passes) == 3:
            raise Enough
        return 0

    monkeypatch.setattr(heap, "trim", counted)
    with pytest.raises(Enough):
        await heap.trim_loop(every_s=0.001)
    assert loop_thread not in passes


def test_a_service_gives_back_what_its_warm_up_freed_before_it_takes_a_request(
    settings: Settings, frozen_heap: None, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A replica's first start reads every slice from Chroma: a peak that glibc would otherwise keep resident
    until the first trim pass, 10 s later (at 1M chunks RSS read 2,289 MB at ``/health``). The service's own
    process trims once its warm-up is over, before it says it started."""
    server = new_mcp_server("heap-test", "A server whose warm-up frees 100 MB.")
    access = server_access(settings, server="policy-kb", scope="policy", port=0, api_key=None, read_api_key=None)
    kept: list[bytearray] = []
    app = create_mcp_app(settings, server, port=0, access=access, warm_up=lambda: kept.extend(fragment(100)))
    monkeypatch.setitem(heap._state, "owner", 1)
    with caplog.at_level("INFO"), TestClient(app):
        pass
    events = [r.getMessage().split(" ", 1)[0] for r in caplog.records]
    assert "service.heap_trimmed" in events and "service.started" in events
    assert events.index("service.heap_frozen") < events.index("service.heap_trimmed") < events.index("service.started")
    assert kept
