"""Object store: every original file, addressed by content hash, on a local folder or any S3 API.

Both backends honour one contract (``ObjectStore``) so flows and the service never care which one
``OBJECT_STORE_URL`` chose:

- Keys are ``/``-separated relative paths (``policies/NPPF/2024-12/<sha256>.pdf``). A key that is
  absolute, has an empty, ``.`` or ``..`` segment, a backslash or a NUL is rejected with
  ``InvalidArgumentError`` by *both* backends, so a key that works in tests on a folder also works on S3.
- A reader never sees a half-written object: the local store writes a temp file beside the target,
  fsyncs it and renames it into place; S3 only exposes an object once its upload has completed.
- A missing key raises ``FileNotFoundInStoreError``; an unreachable or failing store raises
  ``ObjectStoreError`` (transient, 503). No botocore or OS exception escapes this module except from
  caller-supplied local paths.
- Nothing here logs or returns credentials; ``describe()`` is safe for logs and health checks.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import mimetypes
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol, TypeVar, runtime_checkable
from urllib.parse import unquote, urlsplit, urlunsplit

from lib.errors import FileNotFoundInStoreError, InvalidArgumentError, KBError, ObjectStoreError

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from lib.config import Settings

logger = logging.getLogger(__name__)

HASH_BLOCK_SIZE = 8192
"""Spec 003 FR-008: files are hashed in 8192-byte blocks."""

COPY_BLOCK_SIZE = 1024 * 1024
MULTIPART_THRESHOLD = 8 * 1024 * 1024
"""Files at least this large go to S3 as multipart uploads, streamed from disk in parts of this size."""

DEFAULT_CONTENT_TYPE = "application/octet-stream"
_TEMP_PREFIX = ".tmp-objectstore-"
"""Local temp files start with this; ``list`` skips them and keys may not use it."""

_SHA256_RE = re.compile(r"^[0-9a-f]{64}$")
_T = TypeVar("_T")


@dataclass(frozen=True, slots=True)
class StoredObject:
    """What a put returns: enough to record the file in the registry and to verify it later."""

    key: str
    sha256: str
    size_bytes: int


@runtime_checkable
class ObjectStore(Protocol):
    """The contract both backends implement. Writes are atomic per key; reads of a missing key raise."""

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


# --------------------------------------------------------------------------- content addressing


def sha256_bytes(data: bytes) -> str:
    """Hex SHA-256 of ``data``."""
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in 8192-byte blocks (spec 003 FR-008) so memory stays flat."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(HASH_BLOCK_SIZE), b""):
            digest.update(block)
    return digest.hexdigest()


def policy_file_key(source: str, revision_id: str, sha256: str, suffix: str = ".pdf") -> str:
    """``policies/{source}/{revision_id}/{sha256}{suffix}``: where a policy revision's original lives."""
    _check_segment("source", source)
    _check_segment("revision_id", revision_id)
    return f"policies/{source}/{revision_id}/{_checked_sha256(sha256)}{_checked_suffix(suffix)}"


def document_file_key(application_ref_sanitized: str, sha256: str, suffix: str) -> str:
    """``applications/{ref}/{sha256}{suffix}``; ``ref`` is already sanitised (``25_01178_REM``)."""
    _check_segment("application_ref_sanitized", application_ref_sanitized)
    return f"applications/{application_ref_sanitized}/{_checked_sha256(sha256)}{_checked_suffix(suffix)}"


def _check_segment(name: str, value: str) -> None:
    if not value or value in {".", ".."} or any(char in value for char in "/\\\x00"):
        raise InvalidArgumentError(f"{name} must be a single non-empty path segment", field=name)


def _checked_sha256(sha256: str) -> str:
    if not _SHA256_RE.fullmatch(sha256):
        raise InvalidArgumentError("sha256 must be 64 lowercase hex characters", field="sha256")
    return sha256


def _checked_suffix(suffix: str) -> str:
    if suffix and (not suffix.startswith(".") or any(char in suffix for char in "/\\\x00")):
        raise InvalidArgumentError("suffix must be empty or start with '.' and contain no separators", field="suffix")
    return suffix


# --------------------------------------------------------------------------- key validation


def validate_key(key: str) -> str:
    """Return ``key`` unchanged if it is a safe relative object key, else raise ``InvalidArgumentError``.

    Rejected: empty, absolute, backslashes, NUL, empty segments (``a//b``, trailing ``/``), ``.`` or
    ``..`` segments, and segments starting with the local store's temp prefix. ``..`` inside a segment
    (``v1..2``) is allowed: it is not traversal, and revision ids may contain it.
    """
    if not isinstance(key, str) or not key:
        raise InvalidArgumentError("object key must be a non-empty string")
    if "\\" in key or "\x00" in key:
        raise InvalidArgumentError("object key may not contain backslashes or NUL", key=_printable(key))
    if key.startswith("/"):
        raise InvalidArgumentError("object key must be relative", key=_printable(key))
    for segment in key.split("/"):
        if segment in {"", ".", ".."}:
            raise InvalidArgumentError("object key has an empty, '.' or '..' segment", key=_printable(key))
        if segment.startswith(_TEMP_PREFIX):
            raise InvalidArgumentError("object key segment uses a reserved prefix", key=_printable(key))
    return key


def _validate_prefix(prefix: str) -> str:
    """A list prefix is a key prefix: it may be empty or end with ``/``, but must not escape the store."""
    if prefix == "":
        return prefix
    validate_key(prefix[:-1] if prefix.endswith("/") else prefix)
    return prefix


def _printable(key: str) -> str:
    return key.encode("unicode_escape").decode("ascii")[:300]


# --------------------------------------------------------------------------- local folder


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
            with _open_source(path, key) as source:
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
            _atomic_write_file(dest, lambda handle: shutil.copyfileobj(reader, handle, COPY_BLOCK_SIZE))
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
        _validate_prefix(prefix)
        # Walk only the deepest folder the prefix pins down; filter the rest as a string prefix.
        folder = prefix.rpartition("/")[0]
        start = self.root / folder if folder else self.root
        if not start.is_dir() or not _is_within(start.resolve(), self.root):
            return iter(())
        keys: list[str] = []
        with self._io_errors("list", prefix):
            for dirpath, dirnames, filenames in os.walk(start):
                dirnames[:] = [name for name in dirnames if not name.startswith(_TEMP_PREFIX)]
                relative = Path(dirpath).relative_to(self.root).as_posix()
                for name in filenames:
                    # Temp files are unfinished writes; symlinks may point outside root and are never objects.
                    if name.startswith(_TEMP_PREFIX) or os.path.islink(os.path.join(dirpath, name)):
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
            raise InvalidArgumentError("object key resolves outside the store", key=_printable(key))
        return candidate

    def _atomic_write(self, target: Path, write: Callable[[IO[bytes]], object]) -> None:
        if target.is_dir():
            raise InvalidArgumentError("object key names a folder of other objects", key=self._key_of(target))
        _atomic_write_file(target, write)

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


@contextlib.contextmanager
def _open_source(path: Path, key: str) -> Iterator[IO[bytes]]:
    """Open a caller's file for upload. Its absence is the caller's input error, not a store failure."""
    if not path.is_file():
        raise InvalidArgumentError("put_file source is not a readable regular file", key=key)
    with path.open("rb") as handle:
        yield handle


def _atomic_write_file(target: Path, write: Callable[[IO[bytes]], object]) -> None:
    """Write via a temp file in ``target``'s folder, fsync it, rename over ``target``, fsync the folder.

    On any failure the temp file is removed and ``target`` is untouched (old object or nothing).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp_name = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=target.parent)
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


# --------------------------------------------------------------------------- S3


class S3ObjectStore:
    """Objects in an S3 bucket under ``prefix/`` (MinIO in docker-compose, any S3 in production).

    The client is built by ``make_s3_client`` (path-style addressing, retries for throttling and 5xx)
    and passed in. ``delete`` returns whether an object existed by asking first: S3's DeleteObject does
    not say, so under a concurrent delete both callers may see True. That is harmless for its callers.
    """

    def __init__(self, bucket: str, prefix: str, client: BaseClient, *, list_page_size: int = 1000) -> None:
        """``list_page_size`` is the S3 page size (max 1000); tests lower it to exercise paging."""
        if not bucket:
            raise InvalidArgumentError("S3 bucket name must not be empty")
        self.bucket = bucket
        self.prefix = prefix.strip("/")
        if self.prefix:
            validate_key(self.prefix)
        self.client = client
        self.list_page_size = list_page_size

    def describe(self) -> str:
        location = f"s3://{self.bucket}/{self.prefix}" if self.prefix else f"s3://{self.bucket}"
        endpoint = _redact_url(str(self.client.meta.endpoint_url))
        return f"{location} (endpoint {endpoint})"

    def ensure_bucket(self) -> bool:
        """Create the bucket if it does not exist (MinIO in docker-compose, tests). True if created."""
        from botocore.exceptions import ClientError

        try:
            self._call("head_bucket", self.bucket, lambda: self.client.head_bucket(Bucket=self.bucket))
            return False
        except FileNotFoundInStoreError:
            pass
        region = self.client.meta.region_name
        kwargs: dict[str, Any] = {"Bucket": self.bucket}
        if region and region != "us-east-1":
            kwargs["CreateBucketConfiguration"] = {"LocationConstraint": region}
        try:
            self._call("create_bucket", self.bucket, lambda: self.client.create_bucket(**kwargs))
        except ObjectStoreError as exc:
            cause = exc.__cause__
            if isinstance(cause, ClientError) and _error_code(cause) in {"BucketAlreadyOwnedByYou"}:
                return False
            raise
        logger.info("objectstore.bucket_created bucket=%s", self.bucket)
        return True

    def put_bytes(self, key: str, data: bytes, content_type: str = DEFAULT_CONTENT_TYPE) -> StoredObject:
        full = self._full_key(key)
        stored = StoredObject(key=key, sha256=sha256_bytes(data), size_bytes=len(data))
        self._call(
            "put",
            key,
            lambda: self.client.put_object(
                Bucket=self.bucket, Key=full, Body=data, ContentType=content_type, Metadata={"sha256": stored.sha256}
            ),
        )
        logger.info("objectstore.put key=%s bytes=%d store=s3", key, stored.size_bytes)
        return stored

    def put_file(self, key: str, path: Path, content_type: str | None = None) -> StoredObject:
        from boto3.s3.transfer import TransferConfig

        full = self._full_key(key)
        with _open_source(path, key):
            pass  # validates the source up front with the same error as the local store
        sha256 = sha256_file(path)
        size = path.stat().st_size
        extra = {
            "ContentType": content_type or mimetypes.guess_type(path.name)[0] or DEFAULT_CONTENT_TYPE,
            "Metadata": {"sha256": sha256},
        }
        transfer = TransferConfig(multipart_threshold=MULTIPART_THRESHOLD, multipart_chunksize=MULTIPART_THRESHOLD)
        self._call(
            "put",
            key,
            lambda: self.client.upload_file(str(path), self.bucket, full, ExtraArgs=extra, Config=transfer),
        )
        logger.info("objectstore.put key=%s bytes=%d store=s3 multipart=%s", key, size, size >= MULTIPART_THRESHOLD)
        return StoredObject(key=key, sha256=sha256, size_bytes=size)

    def get_bytes(self, key: str) -> bytes:
        full = self._full_key(key)

        def read() -> bytes:
            response = self.client.get_object(Bucket=self.bucket, Key=full)
            with contextlib.closing(response["Body"]) as body:
                return bytes(body.read())

        return self._call("get", key, read)

    def download(self, key: str, dest: Path) -> Path:
        full = self._full_key(key)

        def fetch(handle: IO[bytes]) -> None:
            self._call("download", key, lambda: self.client.download_fileobj(self.bucket, full, handle))

        _atomic_write_file(dest, fetch)
        logger.debug("objectstore.download key=%s store=s3", key)
        return dest

    def exists(self, key: str) -> bool:
        try:
            self._head(key)
        except FileNotFoundInStoreError:
            return False
        return True

    def delete(self, key: str) -> bool:
        full = self._full_key(key)
        if not self.exists(key):
            return False
        self._call("delete", key, lambda: self.client.delete_object(Bucket=self.bucket, Key=full))
        logger.info("objectstore.delete key=%s store=s3", key)
        return True

    def list(self, prefix: str = "") -> Iterator[str]:
        _validate_prefix(prefix)  # eagerly, not on first ``next``
        return self._list_pages(prefix)

    def _list_pages(self, prefix: str) -> Iterator[str]:
        base = f"{self.prefix}/" if self.prefix else ""
        paginator = self.client.get_paginator("list_objects_v2")
        pages = iter(
            paginator.paginate(
                Bucket=self.bucket, Prefix=base + prefix, PaginationConfig={"PageSize": self.list_page_size}
            )
        )
        # S3 lists keys in UTF-8 byte order, which is Python's code-point order: stream without sorting.
        while True:
            page = self._call("list", prefix, lambda: next(pages, None))
            if page is None:
                return
            for item in page.get("Contents", []):
                yield item["Key"][len(base) :]

    def size(self, key: str) -> int:
        return int(self._head(key)["ContentLength"])

    # -- internals

    def _full_key(self, key: str) -> str:
        validate_key(key)
        return f"{self.prefix}/{key}" if self.prefix else key

    def _head(self, key: str) -> dict[str, Any]:
        full = self._full_key(key)
        return self._call("head", key, lambda: self.client.head_object(Bucket=self.bucket, Key=full))

    def _call(self, operation: str, key: str, call: Callable[[], _T]) -> _T:
        """Run one S3 call, translating botocore/boto3 failures into this module's two error types."""
        from boto3.exceptions import Boto3Error
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            return call()
        except ClientError as exc:
            code = _error_code(exc)
            status = exc.response.get("ResponseMetadata", {}).get("HTTPStatusCode")
            if (status == 404 and code != "NoSuchBucket") or code in {"NoSuchKey", "404", "NotFound"}:
                raise FileNotFoundInStoreError(f"no object stored under key {key!r}", key=key) from exc
            logger.warning(
                "objectstore.error op=%s key=%s store=s3 bucket=%s code=%s status=%s",
                operation,
                key,
                self.bucket,
                code,
                status,
            )
            raise ObjectStoreError(
                f"S3 {operation} of {key!r} failed: {code or 'error'} (HTTP {status})",
                operation=operation,
                key=key,
                code=code,
                status=status,
            ) from exc
        except (BotoCoreError, Boto3Error) as exc:
            cause = exc.__cause__ or exc.__context__
            if isinstance(cause, ClientError):  # S3UploadFailedError wraps the real ClientError
                return self._call(operation, key, _raiser(cause))
            logger.warning("objectstore.error op=%s key=%s store=s3 error=%s", operation, key, type(exc).__name__)
            raise ObjectStoreError(
                f"S3 {operation} of {key!r} failed: {type(exc).__name__}", operation=operation, key=key
            ) from exc


def _raiser(exc: BaseException) -> Callable[[], Any]:
    def raise_it() -> Any:
        raise exc

    return raise_it


def _error_code(exc: Any) -> str:
    return str(exc.response.get("Error", {}).get("Code", ""))


def _redact_url(url: str) -> str:
    """Drop userinfo, query and fragment so a URL can be logged."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def make_s3_client(settings: Settings) -> BaseClient:
    """A boto3 S3 client from settings: path-style (MinIO, moto), standard retries, bounded timeouts.

    Credentials left unset fall through to boto3's usual chain (env, profile, instance role).
    """
    import boto3
    from botocore.config import Config

    secret = settings.aws_secret_access_key.get_secret_value() if settings.aws_secret_access_key else None
    config = Config(
        s3={"addressing_style": "path"},
        retries={"max_attempts": 4, "mode": "standard"},
        connect_timeout=10,
        read_timeout=60,
        # Only send/verify flexible checksums when S3 requires them: MinIO and older S3 clones reject some.
        request_checksum_calculation="when_required",
        response_checksum_validation="when_required",
    )
    session = boto3.session.Session()
    return session.client(
        "s3",
        endpoint_url=settings.s3_endpoint_url or None,
        aws_access_key_id=settings.aws_access_key_id or None,
        aws_secret_access_key=secret,
        region_name=settings.aws_region,
        config=config,
    )


# --------------------------------------------------------------------------- factory


def open_object_store(settings: Settings, *, create_bucket: bool = False) -> ObjectStore:
    """The store ``settings.object_store_url`` names: ``file:///abs/dir`` or ``s3://bucket/prefix``.

    ``create_bucket`` makes sure an S3 bucket exists (docker-compose MinIO, tests); it is a no-op for a
    folder, which is always created. The URL is never echoed in errors in case it carries credentials.
    """
    url = settings.object_store_url
    if not url:
        raise InvalidArgumentError("OBJECT_STORE_URL is empty; use file:///abs/dir or s3://bucket/prefix")
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "file":
        if parts.netloc not in {"", "localhost"}:
            raise InvalidArgumentError("OBJECT_STORE_URL file:// URL must name an absolute path (file:///abs/dir)")
        path = Path(unquote(parts.path))
        if not parts.path or not path.is_absolute():
            raise InvalidArgumentError("OBJECT_STORE_URL file:// URL must name an absolute path (file:///abs/dir)")
        store: ObjectStore = LocalObjectStore(path)
    elif scheme == "s3":
        bucket = parts.hostname or ""
        if not bucket or parts.username or parts.password:
            raise InvalidArgumentError("OBJECT_STORE_URL must be s3://bucket/prefix (credentials go in AWS_* settings)")
        s3_store = S3ObjectStore(bucket, unquote(parts.path), make_s3_client(settings))
        if create_bucket:
            s3_store.ensure_bucket()
        store = s3_store
    else:
        raise InvalidArgumentError(
            f"OBJECT_STORE_URL scheme {scheme or '(none)'!r} is not supported; use file:///abs/dir or s3://bucket/prefix"
        )
    logger.info("objectstore.open store=%s", store.describe())
    return store
