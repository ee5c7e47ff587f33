"""The worker threads a server process runs searches on: ``SEARCH_THREADS`` at a time, the rest waiting their
turn.

Why: a search is mostly Python holding the interpreter lock, so running as many at once as there are cores
(rather than on the 40-thread default pool) finishes them sooner and leaves the event loop its share. Only
searches take the lane; uploads, health and administration keep the default pool, so a search stalled on a
store outage never holds them up. Measurements: docs/decisions/0003-search-lane.md.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread
from anyio import CapacityLimiter
from anyio.lowlevel import RunVar

T = TypeVar("T")

_lane: RunVar[CapacityLimiter] = RunVar("search_lane")


def search_lane(threads: int) -> CapacityLimiter:
    """This event loop's lane, made with ``threads`` places on first use."""
    try:
        return _lane.get()
    except LookupError:
        lane = CapacityLimiter(threads)
        _lane.set(lane)
        return lane


async def run_search(work: Callable[[], T], threads: int) -> T:
    """``work`` on a worker thread of the lane."""
    return await anyio.to_thread.run_sync(work, limiter=search_lane(threads))
