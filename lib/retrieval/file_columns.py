"""A slice's exact vectors and texts read from its snapshot file when asked, instead of held in memory.

Why: a search reads the exact vectors of a few dozen rows (``lib.retrieval.quantized``) and the texts of the
hits it returns, while holding every row's vector and text was most of what a held chunk cost (decision 0037).
Each slice keeps its file open (one descriptor, closed when the slice is dropped) and reads with
``os.pread``, so the rows come from the kernel's page cache, which the kernel may reclaim, not from the
process's heap. A newer snapshot renamed over the file does not disturb a slice still served: its descriptor
holds the old file until it is closed.

Descriptors are a limited resource: the process's soft limit is raised to its hard limit once
(``raise_open_file_limit``), and slices keep at most half of it open (``OPEN_SHARE``), so sockets and the stores
always have the rest. Past that, a slice is held in memory as before (``OpenFile`` raises ``OSError``).
"""

from __future__ import annotations

import errno
import os
import resource
import threading
import weakref
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import overload

import numpy as np

OPEN_SHARE = 0.5
"""The share of the process's descriptor limit that open snapshot files may take."""
_open = 0
_open_lock = threading.Lock()


def raise_open_file_limit() -> int:
    """Raise this process's soft limit on open files to its hard limit (what a server is allowed and a shell
    default of 1,024 hides); the soft limit now."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if hard != resource.RLIM_INFINITY and soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
        soft = hard
    return soft


def open_files() -> int:
    """How many ``OpenFile`` are open in this process."""
    return _open


class OpenFile:
    """A file open for ``pread``, closed when nothing refers to it any more (or on ``close``). Raises
    ``OSError`` (``EMFILE``) rather than take more than ``OPEN_SHARE`` of the process's descriptor limit."""

    def __init__(self, path: Path) -> None:
        global _open
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        with _open_lock:
            if soft != resource.RLIM_INFINITY and _open >= soft * OPEN_SHARE:
                raise OSError(errno.EMFILE, f"{_open} snapshot files open, the share of the limit {soft}", str(path))
            self.path = path
            self.fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            _open += 1
        self._close = weakref.finalize(self, _close, self.fd)
        self.size = os.fstat(self.fd).st_size

    def prefetch(self, offset: int, size: int) -> None:
        """Ask the kernel to read ``size`` bytes from ``offset`` into its page cache now, in the background, so
        the first searches do not wait on the disk for each row (figures: decision 0037)."""
        if hasattr(os, "posix_fadvise") and size > 0:
            os.posix_fadvise(self.fd, offset, size, os.POSIX_FADV_WILLNEED)

    def read(self, offset: int, size: int) -> bytes:
        data = os.pread(self.fd, size, offset)
        if len(data) != size:
            raise OSError(f"{self.path}: {size} bytes wanted at {offset}, {len(data)} read")
        return data

    def close(self) -> None:
        self._close()


def _close(fd: int) -> None:
    global _open
    os.close(fd)
    with _open_lock:
        _open -= 1


@dataclass(frozen=True, eq=False)
class FileRows:
    """``count`` float32 rows of ``dims`` stored row after row from ``offset`` in ``file`` (``ExactRows``)."""

    file: OpenFile
    offset: int
    count: int
    dims: int

    @property
    def nbytes(self) -> int:
        return 0

    def rows(self, positions: Sequence[int]) -> np.ndarray:
        width = self.dims * 4
        data = b"".join(self.file.read(self.offset + int(p) * width, width) for p in positions)
        return np.frombuffer(data, dtype="<f4").reshape(len(positions), self.dims).astype(np.float32, copy=False)

    def matrix(self) -> np.ndarray:
        data = self.file.read(self.offset, self.count * self.dims * 4)
        return np.frombuffer(data, dtype="<f4").reshape(self.count, self.dims).astype(np.float32, copy=False)


class FileTexts(Sequence[str]):
    """Texts stored as UTF-8 one after another from ``offset`` in ``file``; ``ends[i]`` is where text ``i``
    ends, counted from ``offset``. Equal to any sequence of the same strings."""

    def __init__(self, file: OpenFile, offset: int, ends: np.ndarray) -> None:
        self.file = file
        self.offset = offset
        self.ends = ends

    @property
    def nbytes(self) -> int:
        return int(self.ends.nbytes)

    @property
    def encoded_size(self) -> int:
        return int(self.ends[-1]) if len(self.ends) else 0

    def __len__(self) -> int:
        return len(self.ends)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> list[str]: ...

    def __getitem__(self, index: int | slice) -> str | list[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if not 0 <= index < len(self):
            raise IndexError(index)
        start = int(self.ends[index - 1]) if index else 0
        return self.file.read(self.offset + start, int(self.ends[index]) - start).decode()

    def __iter__(self) -> Iterator[str]:
        data = self.file.read(self.offset, self.encoded_size)
        start = 0
        for end in self.ends.tolist():
            yield data[start:end].decode()
            start = end

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Sequence) and not isinstance(other, str) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]
