"""One behaviour suite for both object-store backends: a folder in tmp_path and S3 on a real moto server.

Backend-specific tests (local atomicity, S3 multipart and error mapping) follow the shared suite.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import resource
import signal
from collections.abc import Iterator
from pathlib import Path
from uuid import uuid4

import boto3
import pytest
from botocore.client import BaseClient
from botocore.config import Config

from lib.config import Settings, load_settings
from lib.errors import FileNotFoundInStoreError, InvalidArgumentError, ObjectStoreError
from lib.stores.objects import (
    LocalObjectStore,
    ObjectStore,
    S3ObjectStore,
    StoredObject,
    document_file_key,
    make_s3_client,
    open_object_store,
    policy_file_key,
    sha256_bytes,
    sha256_file,
)
from tests.conftest import free_port

FAKE_KEY_ID = "testing-key-id"
FAKE_SECRET = "testing-secret-do-not-log"
LARGE_FILE_BYTES = 11 * 1024 * 1024  # above the 8 MiB multipart threshold and the spec's 10 MB mark
LIST_PAGE_SIZE = 7  # so S3 listings of a few dozen keys take several pages


def _s3_settings(tmp_path: Path, endpoint: str, url: str | None = None) -> Settings:
    return load_settings(
        data_dir=tmp_path / "data",
        object_store_url=url,
        s3_endpoint_url=endpoint,
        aws_access_key_id=FAKE_KEY_ID,
        aws_secret_access_key=FAKE_SECRET,
        aws_region="us-east-1",
    )


def _unique_bucket() -> str:
    return f"test-{uuid4().hex[:16]}"


@pytest.fixture(scope="module")
def s3_client(moto_endpoint: str, tmp_path_factory: pytest.TempPathFactory) -> BaseClient:
    """One client per module (building one costs ~0.3 s); isolation comes from a bucket per test."""
    return make_s3_client(_s3_settings(tmp_path_factory.mktemp("s3"), moto_endpoint).objects)


@pytest.fixture(params=["local", "s3"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> ObjectStore:
    """Each shared test runs once per backend; the S3 one gets its own bucket and small list pages."""
    if request.param == "local":
        return LocalObjectStore(tmp_path / "objects")
    s3 = S3ObjectStore(_unique_bucket(), "kb", request.getfixturevalue("s3_client"), list_page_size=LIST_PAGE_SIZE)
    assert s3.ensure_bucket() is True
    return s3


@pytest.fixture
def s3_store(s3_client: BaseClient) -> S3ObjectStore:
    s3 = S3ObjectStore(_unique_bucket(), "kb", s3_client)
    s3.ensure_bucket()
    return s3


def _write_random_file(path: Path, size: int) -> Path:
    with path.open("wb") as handle:
        remaining = size
        while remaining:
            block = os.urandom(min(remaining, 1024 * 1024))
            handle.write(block)
            remaining -= len(block)
    return path


# --------------------------------------------------------------------------- shared behaviour


def test_put_bytes_returns_hash_and_size_and_get_bytes_returns_the_same_bytes(store: ObjectStore) -> None:
    data = b"%PDF-1.7 national planning policy framework"

    stored = store.put_bytes("policies/NPPF/2024-12/file.pdf", data, content_type="application/pdf")

    assert stored == StoredObject(key="policies/NPPF/2024-12/file.pdf", sha256=sha256_bytes(data), size_bytes=len(data))
    assert store.get_bytes("policies/NPPF/2024-12/file.pdf") == data


def test_an_empty_object_round_trips(store: ObjectStore) -> None:
    stored = store.put_bytes("empty.bin", b"")

    assert stored.size_bytes == 0
    assert stored.sha256 == hashlib.sha256(b"").hexdigest()
    assert store.get_bytes("empty.bin") == b""
    assert store.size("empty.bin") == 0


def test_put_file_streams_a_file_larger_than_ten_megabytes_and_it_round_trips(
    store: ObjectStore, tmp_path: Path
) -> None:
    source = _write_random_file(tmp_path / "large.pdf", LARGE_FILE_BYTES)
    expected_sha = sha256_file(source)

    stored = store.put_file("applications/25_01178_REM/large.pdf", source)

    assert stored == StoredObject("applications/25_01178_REM/large.pdf", expected_sha, LARGE_FILE_BYTES)
    assert store.size(stored.key) == LARGE_FILE_BYTES
    copy = store.download(stored.key, tmp_path / "out" / "copy.pdf")
    assert sha256_file(copy) == expected_sha


def test_exists_is_false_before_a_put_and_true_after_it(store: ObjectStore) -> None:
    assert store.exists("a/b.txt") is False

    store.put_bytes("a/b.txt", b"x")

    assert store.exists("a/b.txt") is True
    assert store.exists("a") is False  # a folder-like prefix is not an object


def test_delete_removes_the_object_and_reports_whether_anything_was_deleted(store: ObjectStore) -> None:
    store.put_bytes("a/b.txt", b"x")
    store.put_bytes("a/c.txt", b"y")

    assert store.delete("a/b.txt") is True
    assert store.delete("a/b.txt") is False
    assert store.delete("never/there.txt") is False
    assert store.delete("a") is False  # a folder-like prefix is not an object
    assert store.exists("a/b.txt") is False
    assert list(store.list()) == ["a/c.txt"]


def test_list_returns_keys_in_sorted_order_filtered_by_a_plain_string_prefix(store: ObjectStore) -> None:
    keys = ["policies/NPPF/r2/b.pdf", "policies/NPPF/r1/a.pdf", "policies/NPPG/r1/c.pdf", "applications/x/d.pdf"]
    for key in keys:
        store.put_bytes(key, key.encode())

    assert list(store.list()) == sorted(keys)
    assert list(store.list("policies/")) == sorted(k for k in keys if k.startswith("policies/"))
    assert list(store.list("policies/NPPF/")) == ["policies/NPPF/r1/a.pdf", "policies/NPPF/r2/b.pdf"]
    assert list(store.list("policies/NPP")) == sorted(k for k in keys if k.startswith("policies/NPP"))
    assert list(store.list("nothing/here/")) == []


def test_list_pages_through_more_keys_than_one_s3_listing_returns(store: ObjectStore) -> None:
    keys = [f"many/{index:03d}" for index in range(4 * LIST_PAGE_SIZE + 3)]
    for key in reversed(keys):
        store.put_bytes(key, b"")
    store.put_bytes("other/zzz", b"")

    assert list(store.list("many/")) == keys
    assert len(list(store.list())) == len(keys) + 1


def test_size_reports_the_stored_byte_count(store: ObjectStore) -> None:
    store.put_bytes("sized.bin", b"0123456789")

    assert store.size("sized.bin") == 10


def test_download_writes_the_object_to_a_new_nested_destination(store: ObjectStore, tmp_path: Path) -> None:
    store.put_bytes("doc.pdf", b"content")

    dest = store.download("doc.pdf", tmp_path / "deep" / "er" / "doc.pdf")

    assert dest == tmp_path / "deep" / "er" / "doc.pdf"
    assert dest.read_bytes() == b"content"
    assert os.listdir(dest.parent) == ["doc.pdf"]


def test_a_missing_key_raises_file_not_found_in_store_and_download_leaves_no_file(
    store: ObjectStore, tmp_path: Path
) -> None:
    with pytest.raises(FileNotFoundInStoreError) as caught:
        store.get_bytes("missing.pdf")
    assert caught.value.error_type == "file_not_found"
    with pytest.raises(FileNotFoundInStoreError):
        store.size("missing.pdf")
    (tmp_path / "dl").mkdir()
    with pytest.raises(FileNotFoundInStoreError):
        store.download("missing.pdf", tmp_path / "dl" / "missing.pdf")
    assert os.listdir(tmp_path / "dl") == []


def test_putting_the_same_content_twice_is_idempotent(store: ObjectStore) -> None:
    data = b"same bytes"
    key = policy_file_key("NPPF", "2024-12", sha256_bytes(data))

    first = store.put_bytes(key, data)
    second = store.put_bytes(key, data)

    assert first == second
    assert list(store.list()) == [key]
    assert store.get_bytes(key) == data


def test_putting_to_an_existing_key_replaces_the_object(store: ObjectStore) -> None:
    store.put_bytes("notes/n.txt", b"first version")

    stored = store.put_bytes("notes/n.txt", b"second")

    assert store.get_bytes("notes/n.txt") == b"second"
    assert store.size("notes/n.txt") == stored.size_bytes == 6


def test_a_content_addressed_policy_file_is_stored_and_found_under_its_hash(store: ObjectStore, tmp_path: Path) -> None:
    source = tmp_path / "NPPF_December_2024.pdf"
    source.write_bytes(b"%PDF policy bytes")
    digest = sha256_file(source)
    key = policy_file_key("NPPF", "2024-12", digest)

    stored = store.put_file(key, source)

    assert stored.sha256 == digest
    assert list(store.list("policies/NPPF/2024-12/")) == [f"policies/NPPF/2024-12/{digest}.pdf"]


def test_put_file_of_a_missing_source_is_an_invalid_argument(store: ObjectStore, tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError):
        store.put_file("x.pdf", tmp_path / "does-not-exist.pdf")
    assert store.exists("x.pdf") is False


@pytest.mark.parametrize(
    "bad_key",
    [
        "",
        "/etc/passwd",
        "../outside.txt",
        "a/../../outside.txt",
        "a/./b.txt",
        "a//b.txt",
        "a/b/",
        "a\\..\\b.txt",
        "a/b\x00.txt",
        ".tmp-objectstore-abc",
    ],
)
def test_keys_that_are_absolute_traverse_or_are_malformed_are_rejected_by_every_operation(
    store: ObjectStore, bad_key: str, tmp_path: Path
) -> None:
    source = tmp_path / "f.bin"
    source.write_bytes(b"x")
    operations = [
        lambda: store.put_bytes(bad_key, b"x"),
        lambda: store.put_file(bad_key, source),
        lambda: store.get_bytes(bad_key),
        lambda: store.download(bad_key, tmp_path / "dest.bin"),
        lambda: store.exists(bad_key),
        lambda: store.delete(bad_key),
        lambda: store.size(bad_key),
    ]
    for operation in operations:
        with pytest.raises(InvalidArgumentError) as caught:
            operation()
        assert caught.value.error_type == "invalid_argument"
    assert list(store.list()) == []


@pytest.mark.parametrize("bad_prefix", ["/abs/", "../", "a/../", "a//", "a\\b"])
def test_a_list_prefix_that_could_escape_the_store_is_rejected(store: ObjectStore, bad_prefix: str) -> None:
    with pytest.raises(InvalidArgumentError):
        store.list(bad_prefix)


def test_two_dots_inside_a_name_are_a_plain_name_not_traversal(store: ObjectStore) -> None:
    key = policy_file_key("LOCAL_PLAN", "v1..2", "a" * 64)

    store.put_bytes(key, b"ok")

    assert store.get_bytes(key) == b"ok"


def test_describe_names_the_store_without_credentials(store: ObjectStore) -> None:
    description = store.describe()

    assert description.startswith(("file:///", "s3://"))
    assert FAKE_SECRET not in description
    assert FAKE_KEY_ID not in description


# --------------------------------------------------------------------------- content addressing


def test_content_addressed_keys_follow_the_policy_and_application_layouts() -> None:
    digest = sha256_bytes(b"abc")

    assert digest == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    assert policy_file_key("NPPF", "2024-12", digest) == f"policies/NPPF/2024-12/{digest}.pdf"
    assert policy_file_key("NPPF", "2024-12", digest, suffix="") == f"policies/NPPF/2024-12/{digest}"
    assert document_file_key("25_01178_REM", digest, ".pdf") == f"applications/25_01178_REM/{digest}.pdf"


@pytest.mark.parametrize(
    "make_key",
    [
        lambda: policy_file_key("NP/PF", "r1", "a" * 64),
        lambda: policy_file_key("NPPF", "..", "a" * 64),
        lambda: policy_file_key("NPPF", "", "a" * 64),
        lambda: policy_file_key("NPPF", "r1", "not-a-hash"),
        lambda: policy_file_key("NPPF", "r1", "A" * 64),
        lambda: policy_file_key("NPPF", "r1", "a" * 64, suffix="pdf"),
        lambda: document_file_key("25/01178/REM", "a" * 64, ".pdf"),
        lambda: document_file_key("25_01178_REM", "a" * 64, "./../x"),
    ],
)
def test_content_addressed_key_helpers_reject_parts_that_would_break_the_layout(make_key: object) -> None:
    with pytest.raises(InvalidArgumentError):
        make_key()  # type: ignore[operator]


def test_sha256_file_matches_sha256_bytes_for_the_same_content(tmp_path: Path) -> None:
    data = os.urandom(3 * 8192 + 17)
    path = tmp_path / "f.bin"
    path.write_bytes(data)

    assert sha256_file(path) == sha256_bytes(data)


# --------------------------------------------------------------------------- local store atomicity and containment


@contextlib.contextmanager
def _max_file_size(limit: int) -> Iterator[None]:
    """Make the kernel refuse to grow any file past ``limit`` bytes (EFBIG): a real mid-write failure."""
    soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
    previous_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))
        signal.signal(signal.SIGXFSZ, previous_handler)


def test_a_local_write_that_fails_halfway_leaves_no_object_and_no_temp_file(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path / "objects")

    with _max_file_size(1024 * 1024), pytest.raises(ObjectStoreError) as caught:
        store.put_bytes("policies/NPPF/r1/big.pdf", b"x" * (4 * 1024 * 1024))

    assert caught.value.error_type == "object_store_unavailable"
    assert caught.value.http_status == 503
    assert store.exists("policies/NPPF/r1/big.pdf") is False
    assert os.listdir(tmp_path / "objects" / "policies" / "NPPF" / "r1") == []


def test_a_local_write_that_fails_halfway_keeps_the_previous_object_intact(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path / "objects")
    store.put_bytes("doc.pdf", b"previous complete object")
    source = _write_random_file(tmp_path / "new.pdf", 4 * 1024 * 1024)

    with _max_file_size(1024 * 1024), pytest.raises(ObjectStoreError):
        store.put_file("doc.pdf", source)

    assert store.get_bytes("doc.pdf") == b"previous complete object"
    assert sorted(os.listdir(tmp_path / "objects")) == ["doc.pdf"]


def test_a_local_write_whose_key_collides_with_a_folder_fails_cleanly(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path / "objects")
    store.put_bytes("a/b/c.txt", b"inner")

    with pytest.raises(InvalidArgumentError):
        store.put_bytes("a/b", b"would replace a folder")
    with pytest.raises(InvalidArgumentError):
        store.put_bytes("a/b/c.txt/d", b"would need a file to be a folder")

    assert list(store.list()) == ["a/b/c.txt"]
    assert sorted(os.listdir(tmp_path / "objects" / "a")) == ["b"]


def test_temp_files_left_by_a_crashed_local_writer_are_never_listed(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path / "objects")
    store.put_bytes("p/real.pdf", b"real")
    (tmp_path / "objects" / "p" / ".tmp-objectstore-crashed").write_bytes(b"half")

    assert list(store.list()) == ["p/real.pdf"]
    assert list(store.list("p/")) == ["p/real.pdf"]


def test_the_local_store_never_follows_a_symlink_out_of_its_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_bytes(b"secret")
    store = LocalObjectStore(tmp_path / "objects")
    (tmp_path / "objects" / "link").symlink_to(outside, target_is_directory=True)

    with pytest.raises(InvalidArgumentError):
        store.get_bytes("link/secret.txt")
    with pytest.raises(InvalidArgumentError):
        store.put_bytes("link/planted.txt", b"x")
    (tmp_path / "objects" / "file-link").symlink_to(outside / "secret.txt")
    assert list(store.list()) == []
    assert list(store.list("link/")) == []
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_a_local_store_creates_its_root_folder(tmp_path: Path) -> None:
    store = LocalObjectStore(tmp_path / "new" / "root")

    assert (tmp_path / "new" / "root").is_dir()
    assert store.describe() == (tmp_path / "new" / "root").resolve().as_uri()


# --------------------------------------------------------------------------- S3 specifics


def test_s3_put_file_of_a_large_file_uses_a_multipart_upload(s3_store: S3ObjectStore, tmp_path: Path) -> None:
    source = _write_random_file(tmp_path / "large.bin", LARGE_FILE_BYTES)

    stored = s3_store.put_file("large.bin", source)

    head = s3_store.client.head_object(Bucket=s3_store.bucket, Key="kb/large.bin")
    assert head["ETag"].strip('"').endswith("-2")  # a multipart ETag carries its part count
    assert head["Metadata"]["sha256"] == stored.sha256


def test_s3_objects_live_under_the_configured_prefix(s3_store: S3ObjectStore) -> None:
    s3_store.put_bytes("policies/x.pdf", b"x", content_type="application/pdf")

    listed = s3_store.client.list_objects_v2(Bucket=s3_store.bucket)
    head = s3_store.client.head_object(Bucket=s3_store.bucket, Key="kb/policies/x.pdf")
    assert [item["Key"] for item in listed["Contents"]] == ["kb/policies/x.pdf"]
    assert head["ContentType"] == "application/pdf"
    assert list(s3_store.list()) == ["policies/x.pdf"]


def test_s3_ensure_bucket_creates_a_missing_bucket_once(s3_client: BaseClient) -> None:
    s3 = S3ObjectStore(_unique_bucket(), "", s3_client)

    assert s3.ensure_bucket() is True
    assert s3.ensure_bucket() is False
    s3.put_bytes("top.txt", b"x")
    assert list(s3.list()) == ["top.txt"]


def test_s3_bucket_that_does_not_exist_is_a_store_error_not_a_missing_file(s3_client: BaseClient) -> None:
    s3 = S3ObjectStore(_unique_bucket(), "kb", s3_client)

    with pytest.raises(ObjectStoreError):
        s3.get_bytes("x.pdf")
    with pytest.raises(ObjectStoreError):
        s3.put_bytes("x.pdf", b"x")


def test_s3_store_that_cannot_be_reached_raises_a_transient_store_error(tmp_path: Path) -> None:
    closed = f"http://127.0.0.1:{free_port()}"
    client = boto3.session.Session().client(
        "s3",
        endpoint_url=closed,
        aws_access_key_id=FAKE_KEY_ID,
        aws_secret_access_key=FAKE_SECRET,
        region_name="us-east-1",
        config=Config(s3={"addressing_style": "path"}, retries={"total_max_attempts": 1}, connect_timeout=2),
    )
    s3 = S3ObjectStore("bucket", "kb", client)
    source = tmp_path / "f.bin"
    source.write_bytes(b"x")

    for operation in (
        lambda: s3.get_bytes("x"),
        lambda: s3.put_bytes("x", b"x"),
        lambda: s3.put_file("x", source),
        lambda: s3.exists("x"),
        lambda: list(s3.list()),
    ):
        with pytest.raises(ObjectStoreError) as caught:
            operation()
        assert caught.value.error_type == "object_store_unavailable"
        assert FAKE_SECRET not in caught.value.message


# --------------------------------------------------------------------------- factory


def test_the_factory_opens_a_local_store_from_a_file_url(tmp_path: Path) -> None:
    root = tmp_path / "with space" / "objects"
    settings = load_settings(data_dir=tmp_path, object_store_url=root.as_uri())

    store = open_object_store(settings.objects)

    assert isinstance(store, LocalObjectStore)
    assert store.root == root.resolve()
    store.put_bytes("k.txt", b"v")
    assert (root / "k.txt").read_bytes() == b"v"


def test_the_default_settings_put_a_local_store_under_the_data_dir(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path / "data", object_store_url=None)

    store = open_object_store(settings.objects)

    assert isinstance(store, LocalObjectStore)
    assert store.root == (tmp_path / "data" / "objects").resolve()


def test_the_factory_opens_an_s3_store_from_an_s3_url_with_bucket_and_prefix(
    tmp_path: Path, moto_endpoint: str
) -> None:
    bucket = _unique_bucket()
    settings = _s3_settings(tmp_path, moto_endpoint, url=f"s3://{bucket}/policy-kb/objects/")

    store = open_object_store(settings.objects, create_bucket=True)

    assert isinstance(store, S3ObjectStore)
    assert (store.bucket, store.prefix) == (bucket, "policy-kb/objects")
    assert store.describe() == f"s3://{bucket}/policy-kb/objects (endpoint {moto_endpoint})"
    store.put_bytes("a.txt", b"a")
    raw = store.client.get_object(Bucket=bucket, Key="policy-kb/objects/a.txt")["Body"].read()
    assert raw == b"a"


@pytest.mark.parametrize(
    "url",
    ["ftp://host/dir", "gs://bucket/prefix", "relative/dir", "file://relative/dir", "file:relative", "s3:///prefix"],
)
def test_the_factory_rejects_a_url_it_cannot_open_with_a_clear_message(tmp_path: Path, url: str) -> None:
    settings = load_settings(data_dir=tmp_path, object_store_url=url)

    with pytest.raises(InvalidArgumentError) as caught:
        open_object_store(settings.objects)

    assert "file:///abs/dir" in caught.value.message or "s3://bucket/prefix" in caught.value.message


def test_the_factory_rejects_credentials_in_an_s3_url_without_echoing_them(tmp_path: Path) -> None:
    settings = load_settings(data_dir=tmp_path, object_store_url=f"s3://{FAKE_KEY_ID}:{FAKE_SECRET}@bucket/prefix")

    with pytest.raises(InvalidArgumentError) as caught:
        open_object_store(settings.objects)

    assert FAKE_SECRET not in str(caught.value)
    assert FAKE_SECRET not in repr(caught.value.details)
