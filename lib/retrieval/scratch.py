"""Arrays a search borrows for its own work and gives back when it ends, instead of numpy mapping fresh ones.

Why: the service runs with glibc's mmap threshold fixed (decision 0004), so every array over it gets a mapping of
its own, returned to the kernel when freed, and the next search's array faults its pages in again, a page at a
time: at 1M chunks, milliseconds of CPU a search (decision 0040). A borrowed array stays mapped and resident, so
only its first search pays. Arrays under the threshold come from glibc's heap, which keeps them: they are not
lent.

A borrowed array is the lender's again once the ``lease`` ends: nothing that outlives the lease may keep it (a
leg's answer is always a fresh array or list).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import numpy as np
from numpy.typing import DTypeLike

from lib.glibc_heap import MMAP_THRESHOLD

LEASED_MAX = 16 << 20
"""The largest array lent (16 MiB): a search over 1M rows works in arrays of up to 8 bytes a row or a posting;
larger ones are made fresh rather than kept."""
SPARE = 4
"""A kept buffer is lent for an array up to this many times smaller (rather than a new one made)."""
KEPT_BYTES = 64 << 20
"""The most the lender keeps between searches (64 MiB): what a search over 1M rows borrows (decision 0040)."""

Take = Callable[[int, DTypeLike], np.ndarray]
"""``take(n, dtype)``: an uninitialised 1-d array of ``n`` items."""


def fresh(n: int, dtype: DTypeLike) -> np.ndarray:
    """A ``Take`` that lends nothing: ``np.empty``."""
    return np.empty(n, dtype)


class Scratch:
    """Buffers of a power-of-two size up to ``LEASED_MAX`` bytes, lent for the length of a ``lease``
    (thread-safe: each lease has buffers of its own)."""

    def __init__(self, kept_bytes: int = KEPT_BYTES, smallest: int = MMAP_THRESHOLD) -> None:
        """``smallest``: the fewest bytes lent (a test lends even small arrays)."""
        self.kept_bytes = kept_bytes
        self.smallest = smallest
        self._free: list[np.ndarray] = []  # kept buffers, the longest kept first
        self._kept = 0
        self._lock = threading.Lock()

    @contextmanager
    def lease(self) -> Iterator[Take]:
        """A ``Take`` whose arrays from ``smallest`` bytes up to ``LEASED_MAX`` are lent until the block ends;
        smaller and larger ones are fresh."""
        lent: list[np.ndarray] = []

        def take(n: int, dtype: DTypeLike) -> np.ndarray:
            kind = np.dtype(dtype)
            nbytes = n * kind.itemsize
            if not self.smallest <= nbytes <= LEASED_MAX:
                return np.empty(n, kind)
            buffer = self._borrow(1 << (nbytes - 1).bit_length())
            lent.append(buffer)
            return buffer[:nbytes].view(kind)

        try:
            yield take
        finally:
            self._give_back(lent)

    def kept(self) -> int:
        """Bytes kept for the next lease."""
        with self._lock:
            return self._kept

    def _borrow(self, size: int) -> np.ndarray:
        """The smallest kept buffer of ``size`` bytes or up to ``SPARE`` times more, else a new one of ``size``."""
        with self._lock:
            fits = [
                (buffer.nbytes, at) for at, buffer in enumerate(self._free) if size <= buffer.nbytes <= SPARE * size
            ]
            if fits:
                buffer = self._free.pop(min(fits)[1])
                self._kept -= buffer.nbytes
                return buffer
        return np.empty(size, np.uint8)

    def _give_back(self, buffers: list[np.ndarray]) -> None:
        """Keep ``buffers``, dropping the longest kept first when over ``kept_bytes``: the sizes the latest
        searches took are the likeliest wanted next."""
        with self._lock:
            self._free.extend(buffers)
            self._kept += sum(buffer.nbytes for buffer in buffers)
            while self._kept > self.kept_bytes:
                self._kept -= self._free.pop(0).nbytes


@contextmanager
def lease(scratch: Scratch | None) -> Iterator[Take]:
    """``scratch.lease()``, or a ``Take`` that lends nothing when there is no ``scratch``."""
    if scratch is None:
        yield fresh
    else:
        with scratch.lease() as take:
            yield take
