"""``mcp_service.search_lane``: searches run at most ``SEARCH_THREADS`` at a time, the others in arrival order."""

from __future__ import annotations

import threading
import time

import anyio
import pytest

from mcp_service.search_lane import run_search, search_lane

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def test_searches_run_at_most_the_lane_s_threads_at_once_and_start_in_arrival_order() -> None:
    running = 0
    most = 0
    started: list[int] = []
    guard = threading.Lock()

    def search(i: int) -> int:
        nonlocal running, most
        with guard:
            running += 1
            most = max(most, running)
            started.append(i)
        time.sleep(0.02)
        with guard:
            running -= 1
        return i

    async with anyio.create_task_group() as group:
        for i in range(8):
            group.start_soon(run_search, lambda i=i: search(i), 2)
            await anyio.sleep(0.001)  # arrive one after the other

    assert most == 2
    assert started[2:] == sorted(started[2:]), "the waiting ones went in the order they came"
    assert search_lane(5).total_tokens == 2, "one lane per event loop, made on first use"
