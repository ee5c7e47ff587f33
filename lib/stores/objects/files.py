"""Local files written whole or not at all, and callers' source files opened for upload. Both backends use
these: the local store for its objects, either store for ``download`` destinations."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from lib.errors import InvalidArgumentError
from lib.stores.objects.keys import TEMP_PREFIX

COPY_BLOCK_SIZE = 1024 * 1024


@contextlib.contextmanager
def open_source(path: Path, key: str) -> Iterator[IO[bytes]]:
    """Open a caller's file for upload. Its absence is the caller's input error, not a store failure."""
    if not path.is_file():
        raise InvalidArgumentError("put_file source is not a readable regular file", key=key)
    with path.open("rb") as handle:
        yield handle


def atomic_write_file(target: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Write via a temp file in ``target``'s folder, fsync it, rename over ``target``, fsync the folder.

    On any failure the temp file is removed and ``target`` is untouched (old object or nothing).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=target.parent)
    temp = Path(temp_name)
    try:
        with os.fdopen(fd, "wb") as handle:
            write(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            temp.unlink()
        raise
    _fsync_dir(target.parent)


def _fsync_dir(folder: Path) -> None:
    """Make the rename durable. Some filesystems refuse fsync on a directory; the data is still written."""
    try:
        dir_fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        with contextlib.suppress(OSError):
            os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
