"""The contract both object-store backends implement, and what a put returns."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

DEFAULT_CONTENT_TYPE = "application/octet-stream"
OBSERVED_CALLS = ("put_bytes", "put_file", "get_bytes", "download", "exists", "delete", "size")
"""The calls each backend makes in a span, failures counted (``lib.observability.store_calls``); ``list`` is a
generator, whose work happens after the call returns."""


@dataclass(frozen=True, slots=True)
class StoredObject:
    """What a put returns: enough to record the file in the registry and to verify it later."""

    key: str
    sha256: str
    size_bytes: int


@runtime_checkable
class ObjectStore(Protocol):
    """Writes are atomic per key; reads of a missing key raise ``FileNotFoundInStoreError``."""

    def put_bytes(self, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE) -> StoredObject:
        """Store ``data`` under ``key`` (replacing any previous object) and return its hash and size."""
        ...

    def put_file(self, key: str, path: Path, content_type: str | None = None) -> StoredObject:
        """Store the file at ``path`` under ``key``, streaming it (never read whole into memory)."""
        ...

    def get_bytes(self, key: str) -> bytes:
        """The whole object. Raises ``FileNotFoundInStoreError`` if absent."""
        ...

    def download(self, key: str, dest: Path) -> Path:
        """Copy the object to ``dest`` (atomically: ``dest`` is either absent or complete) and return it."""
        ...

    def exists(self, key: str) -> bool:
        """Whether an object is stored under ``key``."""
        ...

    def delete(self, key: str) -> bool:
        """Remove the object; True if one was there. Deleting a missing key is not an error."""
        ...

    def list(self, prefix: str = "") -> Iterator[str]:
        """Keys starting with ``prefix`` (plain string prefix, as S3), in code-point order."""
        ...

    def size(self, key: str) -> int:
        """Size in bytes. Raises ``FileNotFoundInStoreError`` if absent."""
        ...

    def describe(self) -> str:
        """A URL-ish description without credentials, for logs and health checks."""
        ...
