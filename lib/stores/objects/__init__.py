"""Object store: every original file, addressed by content hash, on a local folder or any S3 API.

Both backends honour one contract (``ObjectStore``, in ``contract``) so flows and the service never care
which one ``OBJECT_STORE_URL`` chose (``factory.open_object_store``):

- Keys are ``/``-separated relative paths (``policies/NPPF/2024-12/<sha256>.pdf``, built by ``keys``). A key
  that is absolute, has an empty, ``.`` or ``..`` segment, a backslash or a NUL is rejected with
  ``InvalidArgumentError`` by *both* backends, so a key that works in tests on a folder also works on S3.
- A reader never sees a half-written object: the local store writes a temp file beside the target,
  fsyncs it and renames it into place (``files``); S3 only exposes an object once its upload has completed.
- A missing key raises ``FileNotFoundInStoreError``; an unreachable or failing store raises
  ``ObjectStoreError`` (transient, 503). No botocore or OS exception escapes this package except from
  caller-supplied local paths.
- Nothing here logs or returns credentials; ``describe()`` is safe for logs and health checks.
"""

from lib.stores.objects.contract import DEFAULT_CONTENT_TYPE, ObjectStore, StoredObject
from lib.stores.objects.factory import open_object_store
from lib.stores.objects.keys import (
    document_file_key,
    policy_file_key,
    sha256_bytes,
    sha256_file,
    validate_key,
)
from lib.stores.objects.local import LocalObjectStore
from lib.stores.objects.s3 import S3ObjectStore, make_s3_client

__all__ = [
    "DEFAULT_CONTENT_TYPE",
    "LocalObjectStore",
    "ObjectStore",
    "S3ObjectStore",
    "StoredObject",
    "document_file_key",
    "make_s3_client",
    "open_object_store",
    "policy_file_key",
    "sha256_bytes",
    "sha256_file",
    "validate_key",
]
