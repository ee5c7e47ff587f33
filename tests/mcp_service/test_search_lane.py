"""``mcp_service.search_lane``: searches run at most ``SEARCH_THREADS`` at a time, the others in arrival order,
at most ``SEARCH_QUEUE_MAX`` of them waiting and none longer than ``SEARCH_QUEUE_WAIT_MS``; past that they are
refused at once (``overloaded``).

What is asserted is what the lane decides (which search holds a place, which is refused), never how the OS
schedules threads or how long anything takes: each search holds its place until the test lets it go.
"""

from __future__ import annotations

import threading
from functools import partial

import anyio
import pytest

from lib.config import load_settings
from lib.errors import OverloadedError
from mcp_service.search_lane import SearchLane, run_search, search_lane
from tests.polling import eventually_async

pytestmark = pytest.mark.anyio

SEARCHES = 8
THREADS = 2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_searches_run_at_most_the_lane_s_threads_at_once_and_start_in_arrival_order() -> None:
    settings = load_settings(search_threads=THREADS).search
    lane = search_lane(settings)
    guard = threading.Lock()
    started: list[int] = []
    running = 0
    most = 0
    release = [threading.Event() for _ in range(SEARCHES)]

    def search(i: int) -> int:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
            started.append(i)
        release[i].wait(timeout=60)
        with guard:
            running -= 1
        return i

    def queued() -> int:
        stats = lane.places.statistics()
        return stats.borrowed_tokens + stats.tasks_waiting

    async with anyio.create_task_group() as group:
        try:
            for i in range(SEARCHES):
                group.start_soon(run_search, partial(search, i), settings)
                # the next search arrives only once this one holds a place or waits in the lane's line
                await eventually_async(lambda i=i: queued() == i + 1, what=f"search {i} reaching the lane")
            await eventually_async(lambda: len(started) == THREADS, what="the first searches starting")
            assert sorted(started) == list(range(THREADS))
            assert lane.places.statistics().tasks_waiting == SEARCHES - THREADS, "the others wait"
            for admitted in range(THREADS, SEARCHES):
                release[started[admitted - THREADS]].set()  # one place frees: the longest-running search ends
                await eventually_async(lambda n=admitted + 1: len(started) == n, what=f"search {admitted} starting")
                assert started[admitted] == admitted, f"the waiting ones went in the order they came: {started}"
        finally:
            for event in release:
                event.set()

    assert most == THREADS
    assert search_lane(load_settings(search_threads=5).search).places.total_tokens == THREADS, (
        "one lane per event loop, made on first use"
    )


async def test_a_search_beyond_the_queue_bound_is_refused_at_once_and_the_admitted_ones_answer() -> None:
    lane = SearchLane(threads=1, max_queued=2, max_wait_ms=600_000)
    release = threading.Event()
    answers: list[int] = []

    async def admitted(i: int) -> None:
        answers.append(await lane.run(partial(int, i)))

    async with anyio.create_task_group() as group:
        try:
            group.start_soon(lane.run, release.wait)  # holds the one place until the test lets it go
            await eventually_async(lambda: lane.places.borrowed_tokens == 1, what="a search holding the place")
            group.start_soon(admitted, 1)
            group.start_soon(admitted, 2)
            await eventually_async(lambda: lane.waiting == 2, what="two searches waiting")
            with pytest.raises(OverloadedError) as refused:
                await lane.run(partial(int, 3))
            assert refused.value.error_type == "overloaded" and refused.value.http_status == 503
            assert "retry in 1 s" in refused.value.message and lane.refused == 1
        finally:
            release.set()
    assert sorted(answers) == [1, 2], "every admitted search answered"
    assert lane.waiting == 0 and lane.places.borrowed_tokens == 0
    assert await lane.run(partial(str, "normal")) == "normal", "a search right after the flood is admitted at once"


async def test_a_search_that_waits_past_the_wait_bound_is_refused_and_leaves_no_place_taken() -> None:
    lane = SearchLane(threads=1, max_queued=8, max_wait_ms=20)
    release = threading.Event()
    async with anyio.create_task_group() as group:
        try:
            group.start_soon(lane.run, release.wait)
            await eventually_async(lambda: lane.places.borrowed_tokens == 1, what="a search holding the place")
            with pytest.raises(OverloadedError, match="waited too long"):
                await lane.run(
                    partial(str, "late")
                )  # the place is held until after this returns: it can only be refused
            assert lane.waiting == 0
        finally:
            release.set()
    assert lane.places.borrowed_tokens == 0
    assert await lane.run(partial(str, "next")) == "next"
