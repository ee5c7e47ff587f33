"""``mcp_service.search_lane``: searches run at most ``SEARCH_THREADS`` at a time, the others in arrival order.

What is asserted is what the lane decides (which search holds a place), never how the OS schedules threads:
each search holds its place until the test lets it go, one at a time, so exactly one waiting search can be
admitted after each release.
"""

from __future__ import annotations

import threading
from functools import partial

import anyio
import pytest

from mcp_service.search_lane import run_search, search_lane
from tests.polling import eventually_async

pytestmark = pytest.mark.anyio

SEARCHES = 8
THREADS = 2


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_searches_run_at_most_the_lane_s_threads_at_once_and_start_in_arrival_order() -> None:
    lane = search_lane(THREADS)
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
        stats = lane.statistics()
        return stats.borrowed_tokens + stats.tasks_waiting

    async with anyio.create_task_group() as group:
        try:
            for i in range(SEARCHES):
                group.start_soon(run_search, partial(search, i), THREADS)
                # the next search arrives only once this one holds a place or waits in the lane's line
                await eventually_async(lambda i=i: queued() == i + 1, what=f"search {i} reaching the lane")
            await eventually_async(lambda: len(started) == THREADS, what="the first searches starting")
            assert sorted(started) == list(range(THREADS))
            assert lane.statistics().tasks_waiting == SEARCHES - THREADS, "the others wait"
            for admitted in range(THREADS, SEARCHES):
                release[started[admitted - THREADS]].set()  # one place frees: the longest-running search ends
                await eventually_async(lambda n=admitted + 1: len(started) == n, what=f"search {admitted} starting")
                assert started[admitted] == admitted, f"the waiting ones went in the order they came: {started}"
        finally:
            for event in release:
                event.set()

    assert most == THREADS
    assert search_lane(5).total_tokens == THREADS, "one lane per event loop, made on first use"
