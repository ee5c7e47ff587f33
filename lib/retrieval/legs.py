"""The two legs of a hybrid search side by side: one on the caller's thread, the other on a helper thread, when
a helper is idle.

Why: at 1M chunks each leg costs tens of milliseconds, and most of the dense leg's runs in onnxruntime and numpy
without the interpreter lock, so on a machine with a core to spare the search answers in about the time of its
longer leg (decision 0039). Why only when a helper is idle: when every core already runs a search (the search
lane runs as many as there are cores), a helper adds no core, only another thread to switch to; the leg then
runs on the caller's thread after the first, as it always did. The helper runs in a copy of the caller's
context, so its spans and log fields are the search's own.
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import TypeVar

from lib.retrieval.arguments import SearchMode

SIDE_BY_SIDE_ROWS = 100_000
"""The fewest rows a hybrid search must cover for its legs to run side by side: below it each leg takes a few
milliseconds, and handing one to a helper costs about as much CPU as it saves time, or more (decision 0039)."""

A = TypeVar("A")
B = TypeVar("B")


class Legs:
    """At most ``helpers`` second legs running at once, each on a thread of its own."""

    def __init__(self, helpers: int) -> None:
        self.helpers = helpers
        self._idle = threading.BoundedSemaphore(max(helpers, 1))
        self._pool = ThreadPoolExecutor(helpers, thread_name_prefix="search-leg") if helpers else None

    def both(self, first: Callable[[], A], second: Callable[[], B], *, together: bool = True) -> tuple[A, B]:
        """``(first(), second())``, ``second`` on an idle helper meanwhile (here after ``first`` when none is
        idle, or not ``together``). ``first``'s error wins; either way this returns only once both have
        finished."""
        if not together or self._pool is None or not self._idle.acquire(blocking=False):
            return first(), second()
        context = contextvars.copy_context()

        def helped() -> B:
            try:
                return context.run(second)
            finally:
                self._idle.release()  # before the result is set: idle again by the time the caller has it

        try:
            pending = self._pool.submit(helped)
        except BaseException:
            self._idle.release()
            raise
        try:
            done = first()
        finally:
            later = pending.exception()  # waits; ``first``'s own error, if any, goes on from here
        if later is not None:
            raise later
        return done, pending.result()


def side_by_side(mode: SearchMode, rows: int) -> bool:
    """Whether a search in ``mode`` over ``rows`` rows should run its legs side by side: hybrid, and large."""
    return mode == SearchMode.HYBRID and rows >= SIDE_BY_SIDE_ROWS


@cache
def legs(helpers: int) -> Legs:
    """The process's helpers for ``helpers`` (``SearchSettings.leg_helpers``): one pool per value."""
    return Legs(helpers)
