"""One BLAS thread for a dense leg's matrix-vector product (governance, notes, policy blocks), whatever the
process's BLAS default.

A query's ``matrix @ vector`` (26k x 384 float32 for the whole governance folder) is memory-bound: OpenBLAS
splitting it over every core gains nothing on 2 cores and loses a lot when they are busy (a 12k x 384 product
took 24 ms with its 2 threads on a loaded machine, 3.6 ms with 1), and concurrent queries each asking for
every core only queue behind each other. One thread also makes the scores independent of the core count:
OpenBLAS computes the rows at a thread split by another kernel path, so a product with 2 threads differs in
the last bit, on those rows, from one with 1 or 4 (measured on the governance matrix), and two replicas on
different machines would then break an exact tie differently.

The limit is process-wide (BLAS has one thread count), so it is taken by the first query that enters and
given back by the last that leaves: concurrent queries never restore it under each other. While it is held,
another thread's BLAS call in the same process runs single-threaded too; results are unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from threadpoolctl import ThreadpoolController


class SingleThreadedBlas:
    """Limits the BLAS libraries loaded when it is first used (numpy's, which the dense legs call); one loaded
    later by another package (a test session imports many) is left alone, as listing the process's libraries
    again on every query would cost about a millisecond."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._controller: ThreadpoolController | None = None
        self._holders = 0
        self._limiter: Any = None

    @property
    def libraries(self) -> list[str]:
        """The file paths of the BLAS libraries this limiter governs (empty before its first use)."""
        if self._controller is None:
            return []
        return [str(lib.filepath) for lib in self._controller.select(user_api="blas").lib_controllers]

    @contextmanager
    def __call__(self) -> Iterator[None]:
        with self._lock:
            if self._holders == 0:
                if self._controller is None:
                    self._controller = ThreadpoolController()
                self._limiter = self._controller.limit(limits=1, user_api="blas")
            self._holders += 1
        try:
            yield
        finally:
            with self._lock:
                self._holders -= 1
                if self._holders == 0:
                    self._limiter.restore_original_limits()
                    self._limiter = None


single_threaded_blas = SingleThreadedBlas()
"""The process's one limiter: ``with single_threaded_blas(): scores = matrix @ vector``."""
