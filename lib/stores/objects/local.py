"""Objects as files in a local folder: the embedded default (``file:///abs/dir``)."""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO

from lib.errors import FileNotFoundInStoreError, InvalidArgumentError, KBError, ObjectStoreError
from lib.observability import store_calls
from lib.stores.objects.contract import DEFAULT_CONTENT_TYPE, OBSERVED_CALLS, StoredObject
from lib.stores.objects.files import COPY_BLOCK_SIZE, atomic_write_file, open_source
from lib.stores.objects.keys import TEMP_PREFIX, printable, sha256_bytes, validate_key, validate_prefix

logger = logging.getLogger(__name__)


@store_calls("objects", OBSERVED_CALLS, expected=(FileNotFoundInStoreError, InvalidArgumentError))
class LocalObjectStore:
    """Objects as files under ``root``; the embedded default (``file:///abs/dir``).

    Safe with several processes on one filesystem: every write is temp-file + fsync + ``os.replace``
    in the target's directory, so the final path holds the old object or the new one, never a mix.
    Empty directories left by ``delete`` are kept (removing them would race with concurrent writers).
    Content types are not stored; the key's suffix carries the type.
    """

    def __init__(self, root: Path) -> None:
        self.root = root.expanduser().resolve()
        self.root.mkdir(parents=True, exist_ok=True)

    def describe(self) -> str:
        return self.root.as_uri()

    def put_bytes(self, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE) -> StoredObject:
        target = self._path(key)
        stored = StoredObject(key=key, sha256=sha256_bytes(data), size_bytes=len(data))
        with self._io_errors("put", key):
            self._atomic_write(target, lambda handle: handle.write(data))
        logger.info("objectstore.put key=%s bytes=%d store=local", key, stored.size_bytes)
        return stored

    def put_file(self, key: str, path: Path, content_type: str | None = None) -> StoredObject:
        target = self._path(key)
        digest = hashlib.sha256()
        size = 0

        def copy(handle: IO[bytes]) -> None:
            nonlocal size
            with open_source(path, key) as source:
                for block in iter(lambda: source.read(COPY_BLOCK_SIZE), b""):
                    digest.update(block)
                    handle.write(block)
                    size += len(block)

        with self._io_errors("put", key):
            self._atomic_write(target, copy)
        stored = StoredObject(key=key, sha256=digest.hexdigest(), size_bytes=size)
        logger.info("objectstore.put key=%s bytes=%d store=local", key, size)
        return stored

    def get_bytes(self, key: str) -> bytes:
        target = self._path(key)
        with self._io_errors("get", key):
            return target.read_bytes()

    def download(self, key: str, dest: Path) -> Path:
        source = self._path(key)
        with self._io_errors("download", key):
            reader = source.open("rb")
        # Failures writing ``dest`` are about the caller's path, so they surface as plain ``OSError``.
        with reader:
            atomic_write_file(dest, lambda handle: shutil.copyfileobj(reader, handle, COPY_BLOCK_SIZE))
        logger.debug("objectstore.download key=%s store=local", key)
        return dest

    def exists(self, key: str) -> bool:
        return self._path(key).is_file()

    def delete(self, key: str) -> bool:
        target = self._path(key)
        with self._io_errors("delete", key):
            try:
                target.unlink()
            except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
                return False  # nothing stored under this key (a folder is not an object)
        logger.info("objectstore.delete key=%s store=local", key)
        return True

    def list(self, prefix: str = "") -> Iterator[str]:
        validate_prefix(prefix)
        # Walk only the deepest folder the prefix pins down; filter the rest as a string prefix.
        folder = prefix.rpartition("/")[0]
        start = self.root / folder if folder else self.root
        if not start.is_dir() or not _is_within(start.resolve(), self.root):
            return iter(())
        keys: list[str] = []
        with self._io_errors("list", prefix):
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = [name for name in dirnames if not name.startswith(TEMP_PREFIX)]
                relative = Path(dirpath).relative_to(self.root).as_posix()
                for name in filenames:
                    # Temp files are unfinished writes; symlinks may point outside root and are never objects.
                    if name.startswith(TEMP_PREFIX) or os.path.islink(os.path.join(dirpath, name)):
                        continue
                    key = name if relative == "." else f"{relative}/{name}"
                    if key.startswith(prefix):
                        keys.append(key)
        return iter(sorted(keys))

    def size(self, key: str) -> int:
        target = self._path(key)
        with self._io_errors("size", key):
            if not target.is_file():
                raise FileNotFoundError(key)
            return target.stat().st_size

    # -- internals

    def _path(self, key: str) -> Path:
        """Map a key to its file, refusing anything that resolves outside ``root`` (e.g. via a symlink)."""
        candidate = (self.root / validate_key(key)).resolve()
        if not _is_within(candidate, self.root):
            raise InvalidArgumentError("object key resolves outside the store", key=printable(key))
        return candidate

    def _atomic_write(self, target: Path, write: Callable[[IO[bytes]], object]) -> None:
        if target.is_dir():
            raise InvalidArgumentError("object key names a folder of other objects", key=self._key_of(target))
        atomic_write_file(target, write)

    def _key_of(self, path: Path) -> str:
        return path.relative_to(self.root).as_posix()

    @contextlib.contextmanager
    def _io_errors(self, operation: str, key: str) -> Iterator[None]:
        """Missing file → ``FileNotFoundInStoreError``; other OS failures → ``ObjectStoreError``."""
        try:
            yield
        except KBError:
            raise
        except (FileNotFoundError, FileExistsError, IsADirectoryError, NotADirectoryError) as exc:
            # A folder has no room for both ``a/b`` and ``a/b/c``; S3 does. Content-addressed keys never collide.
            if operation == "put":
                raise InvalidArgumentError("object key collides with an existing object or folder", key=key) from exc
            raise FileNotFoundInStoreError(f"no object stored under key {key!r}", key=key) from exc
        except OSError as exc:
            logger.warning("objectstore.error op=%s key=%s store=local errno=%s", operation, key, exc.errno)
            raise ObjectStoreError(
                f"local object store failed to {operation} {key!r}: {exc.strerror or exc}", operation=operation, key=key
            ) from exc


def _is_within(path: Path, root: Path) -> bool:
    return path == root or path.is_relative_to(root)
