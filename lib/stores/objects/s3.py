"""Objects in an S3 bucket (MinIO in docker-compose, any S3 in production), and the boto3 client for it."""

from __future__ import annotations

import contextlib
import logging
import mimetypes
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from lib.errors import FileNotFoundInStoreError, InvalidArgumentError, ObjectStoreError
from lib.observability import store_calls
from lib.stores.objects.contract import DEFAULT_CONTENT_TYPE, OBSERVED_CALLS, StoredObject
from lib.stores.objects.files import atomic_write_file, open_source
from lib.stores.objects.keys import sha256_bytes, sha256_file, validate_key, validate_prefix

if TYPE_CHECKING:
    from botocore.client import BaseClient

    from lib.config import ObjectStoreSettings

logger = logging.getLogger(__name__)

MULTIPART_THRESHOLD = 8 * 1024 * 1024
"""Files at least this large go to S3 as multipart uploads, streamed from disk in parts of this size."""

_T = TypeVar("_T")


@store_calls("objects", OBSERVED_CALLS, expected=(FileNotFoundInStoreError, InvalidArgumentError))
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
        with open_source(path, key):
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

        atomic_write_file(dest, fetch)
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
        validate_prefix(prefix)  # eagerly, not on first ``next``
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


def make_s3_client(objects: ObjectStoreSettings) -> BaseClient:
    """A boto3 S3 client from the object-store settings: path-style (MinIO, moto), standard retries, bounded timeouts.

    Credentials left unset fall through to boto3's usual chain (env, profile, instance role).
    """
    import boto3
    from botocore.config import Config

    key = objects.aws_secret_access_key
    secret = key.get_secret_value() if key else None
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
        endpoint_url=objects.s3_endpoint_url or None,
        aws_access_key_id=objects.aws_access_key_id or None,
        aws_secret_access_key=secret,
        region_name=objects.aws_region,
        config=config,
    )
