"""The object store ``OBJECT_STORE_URL`` names."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote, urlsplit

from lib.errors import InvalidArgumentError
from lib.stores.objects.contract import ObjectStore
from lib.stores.objects.local import LocalObjectStore
from lib.stores.objects.s3 import S3ObjectStore, make_s3_client

if TYPE_CHECKING:
    from lib.config import ObjectStoreSettings

logger = logging.getLogger(__name__)


def open_object_store(objects: ObjectStoreSettings, *, create_bucket: bool = False) -> ObjectStore:
    """The store ``objects.url`` (``OBJECT_STORE_URL``) names: ``file:///abs/dir`` or ``s3://bucket/prefix``.

    ``create_bucket`` makes sure an S3 bucket exists (docker-compose MinIO, tests); it is a no-op for a
    folder, which is always created. The URL is never echoed in errors in case it carries credentials.
    """
    url = objects.url
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
        s3_store = S3ObjectStore(bucket, unquote(parts.path), make_s3_client(objects))
        if create_bucket:
            s3_store.ensure_bucket()
        store = s3_store
    else:
        raise InvalidArgumentError(
            f"OBJECT_STORE_URL scheme {scheme or '(none)'!r} is not supported; use file:///abs/dir or s3://bucket/prefix"
        )
    logger.info("objectstore.open store=%s", store.describe())
    return store
