"""The worker threads a server process runs searches on: ``SEARCH_THREADS`` at a time, the rest waiting their
turn in arrival order.

A search is a millisecond or two of CPU, most of it Python holding the interpreter lock. Run on the default
thread pool (40 threads), twenty searches in flight meant twenty threads taking turns at the lock with each
other and with the event loop that reads requests and writes answers: every search finished late, some
very late. On the lane, as many run as there are cores (the encoder and BLAS release the lock, so more than
one pays), the others queue in order, and the event loop keeps its share. Measured with
``benchmarks/stack_load.py`` (20 clients, one replica, 3 alternating runs each): p99 110-118 ms on the
default pool, 92-102 ms on a 2-thread lane, p50 50-64 -> 49-53 ms.

Only searches take the lane: uploads, health and administration keep the default pool, so a search
stalled on a store outage never holds them up.
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
