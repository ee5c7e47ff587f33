"""The worker threads a server process runs searches on: ``SEARCH_THREADS`` at a time, at most
``SEARCH_QUEUE_MAX`` more waiting their turn, none waiting longer than ``SEARCH_QUEUE_WAIT_MS``.

Why threads: a search is mostly Python holding the interpreter lock, so running as many at once as there are
cores (rather than on the 40-thread default pool) finishes them sooner and leaves the event loop its share. Only
searches take the lane; uploads, health and administration keep the default pool, so a search stalled on a
store outage never holds them up (docs/decisions/0003-search-lane.md).

Why a bounded queue: past capacity an unbounded line only grows, and every call in it is answered late
(seconds, then minutes). A search that would wait beyond the bound is refused at once with
``OverloadedError`` (``overloaded``; REST 503 with ``Retry-After``), so the admitted ones are answered in time
and the service is normal again as soon as the excess stops (docs/decisions/0034-capacity-and-admission.md).

In front of ``/mcp`` the admission gate (``mcp_service.admission``, decision 0051) refuses most of the excess
before the SDK reads a request; the lane is the second line behind it, and the only one for legacy SSE and REST.

The same admission (``SearchLane.admit``, without the thread) bounds the ``kb`` MCP server's engine reads
(``engine_lane``): they wait on HTTP, not on a thread, and a flood of them sent on to the engine would queue
on the event loop the engine's own answers need.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import TypeVar

import anyio
import anyio.to_thread
from anyio import CapacityLimiter
from anyio.lowlevel import RunVar

from lib.config import SearchSettings
from lib.errors import OverloadedError

logger = logging.getLogger(__name__)

T = TypeVar("T")


class SearchLane:
    """``threads`` places and a line of at most ``max_queued`` waiting at most ``max_wait_ms`` each."""

    def __init__(self, threads: int, max_queued: int, max_wait_ms: int, *, name: str = "search") -> None:
        self.name = name
        self.places = CapacityLimiter(threads)
        self._runner = CapacityLimiter(threads)  # never waited on: a holder of a place always finds one free
        self.max_queued = max_queued
        self.max_wait_s = max_wait_ms / 1000
        self.waiting = 0
        self.refused = 0

    @asynccontextmanager
    async def admit(self) -> AsyncIterator[None]:
        """A place held for the block; ``OverloadedError`` when the line is full or the wait would be too long."""
        borrower = object()
        try:
            self.places.acquire_on_behalf_of_nowait(borrower)
        except anyio.WouldBlock:
            await self._wait_for_place(borrower)
        try:
            yield
        finally:
            self.places.release_on_behalf_of(borrower)

    async def run(self, work: Callable[[], T]) -> T:
        """``work`` on a worker thread once a place is free (``admit``)."""
        async with self.admit():
            return await anyio.to_thread.run_sync(work, limiter=self._runner)

    async def _wait_for_place(self, borrower: object) -> None:
        if self.waiting >= self.max_queued:
            self._refuse("queue_full")
        self.waiting += 1
        try:
            with anyio.move_on_after(self.max_wait_s) as wait:
                await self.places.acquire_on_behalf_of(borrower)
        finally:
            self.waiting -= 1
        if wait.cancelled_caught:  # the place was not taken: acquiring is cancellation-safe
            self._refuse("waited_too_long")

    def _refuse(self, reason: str) -> None:
        self.refused += 1
        logger.info("%s.refused reason=%s waiting=%d refused_total=%d", self.name, reason, self.waiting, self.refused)
        raise OverloadedError(
            f"The server is at capacity ({reason.replace('_', ' ')}); retry in {OverloadedError.retry_after_s} s"
        )


_lane: RunVar[SearchLane] = RunVar("search_lane")
_engine_lane: RunVar[SearchLane] = RunVar("kb_engine_lane")


def _per_loop(var: RunVar[SearchLane], settings: SearchSettings, name: str) -> SearchLane:
    try:
        return var.get()
    except LookupError:
        lane = SearchLane(settings.threads, settings.queue_max, settings.queue_wait_ms, name=name)
        var.set(lane)
        return lane


def search_lane(settings: SearchSettings) -> SearchLane:
    """This event loop's lane, made from ``settings`` on first use."""
    return _per_loop(_lane, settings, "search")


def engine_lane(settings: SearchSettings) -> SearchLane:
    """This event loop's admission for the ``kb`` tools' engine reads, with the search lane's bounds: as many
    in flight as it has threads, the same line and wait. A lane of its own: with the engine mounted in this
    process, a read holding a search place while its engine route waits for one would deadlock."""
    return _per_loop(_engine_lane, settings, "kb_engine")


async def run_search(work: Callable[[], T], settings: SearchSettings) -> T:
    """``work`` on a worker thread of the lane (``OverloadedError`` past its bounds)."""
    return await search_lane(settings).run(work)
