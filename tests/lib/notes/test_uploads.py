"""Chunked upload staging (``lib.notes.uploads``) on a real redis-server and a local object store: the
validation spec 002 asks for, replicas sharing one upload, and abandoned uploads cleaned on access and
by ``cleanup``."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import redis

from lib.errors import InvalidArgumentError, UnsupportedFileTypeError, UploadNotFoundError
from lib.notes.uploads import MAX_CHUNK_BYTES, OBJECT_PREFIX, UploadStaging, decode_chunk
from lib.stores.objects import LocalObjectStore
from tests.polling import eventually

TEXT = ("# Notes\n\nThe user prefers concise responses. " * 40).encode()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def parts(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


@pytest.fixture
def objects(tmp_path: Path) -> LocalObjectStore:
    return LocalObjectStore(tmp_path / "objects")


def staging(client: redis.Redis, objects: LocalObjectStore, ttl: int = 600, max_bytes: int = 10_000) -> UploadStaging:
    return UploadStaging(client, objects, max_upload_bytes=max_bytes, ttl_seconds=ttl)


def test_an_upload_sent_in_chunks_out_of_order_is_reassembled_in_order(
    redis_client: redis.Redis, objects: LocalObjectStore, tmp_path: Path
) -> None:
    area = staging(redis_client, objects)
    started = area.start("notes.md", len(TEXT), ["collection:memory", "feedback"])
    chunks = parts(TEXT, 500)
    for index in reversed(range(len(chunks))):
        area.put_chunk(started.upload_id, index, b64(chunks[index]))
    assembled = area.assemble(started.upload_id, tmp_path)
    assert assembled.path.read_bytes() == TEXT
    assert (assembled.filename, assembled.content_type) == ("notes.md", "text/markdown; charset=utf-8")
    assert assembled.tags == ["collection:memory", "feedback"]
    area.complete(started.upload_id)
    assert list(objects.list(OBJECT_PREFIX)) == [] and not redis_client.keys("kbup:*")
    with pytest.raises(UploadNotFoundError):
        area.assemble(started.upload_id, tmp_path)


def test_a_repeated_chunk_with_the_same_bytes_is_harmless_and_with_other_bytes_refused(
    redis_client: redis.Redis, objects: LocalObjectStore
) -> None:
    area = staging(redis_client, objects)
    upload_id = area.start("a.txt", 10, []).upload_id
    first = area.put_chunk(upload_id, 0, b64(b"hello"))
    again = area.put_chunk(upload_id, 0, b64(b"hello"))
    assert (first.duplicate, again.duplicate, again.received_bytes) == (False, True, 5)
    with pytest.raises(InvalidArgumentError, match="other bytes"):
        area.put_chunk(upload_id, 0, b64(b"HELLO"))
    assert len(list(objects.list(OBJECT_PREFIX))) == 1


def test_finish_refuses_gaps_and_a_size_that_does_not_match(
    redis_client: redis.Redis, objects: LocalObjectStore, tmp_path: Path
) -> None:
    area = staging(redis_client, objects)
    upload_id = area.start("a.txt", 15, []).upload_id
    area.put_chunk(upload_id, 0, b64(b"hello"))
    area.put_chunk(upload_id, 2, b64(b"world"))
    with pytest.raises(InvalidArgumentError, match="gaps: chunk_index 1"):
        area.assemble(upload_id, tmp_path)
    area.put_chunk(upload_id, 1, b64(b"...."))
    with pytest.raises(InvalidArgumentError, match="14 bytes but total_size is 15"):
        area.assemble(upload_id, tmp_path)
    with pytest.raises(InvalidArgumentError, match="past its total_size"):
        area.put_chunk(upload_id, 3, b64(b"xx"))
    area.put_chunk(upload_id, 3, b64(b"!"))
    assert area.assemble(upload_id, tmp_path).path.read_bytes() == b"hello....world!"


def test_sizes_names_and_chunks_are_validated(redis_client: redis.Redis, objects: LocalObjectStore) -> None:
    area = staging(redis_client, objects)
    with pytest.raises(InvalidArgumentError, match="KB_MAX_UPLOAD_BYTES"):
        area.start("big.pdf", 10_001, [])
    with pytest.raises(UnsupportedFileTypeError):
        area.start("photo.png", 10, [])
    upload_id = area.start("dir/../report.PDF", 10, []).upload_id
    with pytest.raises(InvalidArgumentError, match="base64"):
        area.put_chunk(upload_id, 0, "not base64!")
    with pytest.raises(InvalidArgumentError, match="at least one byte"):
        area.put_chunk(upload_id, 0, "")
    with pytest.raises(InvalidArgumentError, match="chunk_index"):
        area.put_chunk(upload_id, 10, b64(b"x"))
    with pytest.raises(InvalidArgumentError, match="at most"):
        decode_chunk(b64(b"x" * (MAX_CHUNK_BYTES + 1)))
    assert decode_chunk(b64(b"abc" * 30)[:40] + "\n" + b64(b"abc" * 30)[40:]) == b"abc" * 30
    for unknown in ("0f0e7a52-7c3a-4c0c-9a55-3a1d1b9d8f00", "../../etc", ""):
        with pytest.raises(UploadNotFoundError):
            area.put_chunk(unknown, 0, b64(b"x"))


def test_a_pdf_name_over_other_content_is_refused_at_finish(
    redis_client: redis.Redis, objects: LocalObjectStore, tmp_path: Path
) -> None:
    area = staging(redis_client, objects)
    upload_id = area.start("report.pdf", 5, []).upload_id
    area.put_chunk(upload_id, 0, b64(b"hello"))
    with pytest.raises(UnsupportedFileTypeError):
        area.assemble(upload_id, tmp_path)
    assert not list(tmp_path.glob("kb-upload-*"))


def test_an_upload_started_on_one_replica_is_continued_and_finished_on_another(
    redis_url: str, redis_client: redis.Redis, objects: LocalObjectStore, tmp_path: Path
) -> None:
    replica_a = staging(redis_client, objects)
    replica_b = staging(redis.Redis.from_url(redis_url, decode_responses=True), LocalObjectStore(objects.root))
    upload_id = replica_a.start("notes.txt", len(TEXT), []).upload_id
    for index, chunk in enumerate(parts(TEXT, 700)):
        (replica_a if index % 2 else replica_b).put_chunk(upload_id, index, b64(chunk))
    assert replica_b.assemble(upload_id, tmp_path).path.read_bytes() == TEXT
    with pytest.raises(InvalidArgumentError, match="being finished"):
        replica_a.assemble(upload_id, tmp_path)
    replica_b.release(upload_id)
    assert replica_a.assemble(upload_id, tmp_path).size == len(TEXT)


ABANDON_TTL_S = 4
"""Long enough for the start and first chunk to land before expiry on a loaded machine (1 s was not)."""


def test_an_abandoned_upload_is_gone_on_access_and_cleanup_removes_its_chunks(
    redis_client: redis.Redis, objects: LocalObjectStore
) -> None:
    area = staging(redis_client, objects, ttl=ABANDON_TTL_S)
    kept = staging(redis_client, objects, ttl=600).start("keep.txt", 5, []).upload_id
    staging(redis_client, objects).put_chunk(kept, 0, b64(b"keep!"))
    touched, untouched = (area.start("a.txt", 10, []).upload_id for _ in range(2))
    area.put_chunk(touched, 0, b64(b"abc"))
    area.put_chunk(untouched, 0, b64(b"abc"))
    objects.put_bytes(f"{OBJECT_PREFIX}0f0e7a52-7c3a-4c0c-9a55-3a1d1b9d8f00-000000-0000", b"orphan")
    eventually(lambda: not redis_client.exists(f"kbup:{touched}", f"kbup:{untouched}"), within=20, every=0.1)
    with pytest.raises(UploadNotFoundError):
        area.put_chunk(touched, 1, b64(b"def"))
    assert not list(objects.list(f"{OBJECT_PREFIX}{touched}"))
    report = area.cleanup()
    assert (report.expired_uploads, report.orphan_objects) == (1, 1)  # untouched (with its chunk); the orphan
    assert list(objects.list(OBJECT_PREFIX)) == [next(objects.list(f"{OBJECT_PREFIX}{kept}"))]
    assert area.in_progress() == 1


def test_sweep_cleans_once_per_interval_across_replicas(redis_client: redis.Redis, objects: LocalObjectStore) -> None:
    """The service's sweeper (no Prefect server): of two replicas sweeping in the same interval, one cleans
    (``cleanup``, as the flow does) and the other finds the interval claimed."""
    orphan = f"{OBJECT_PREFIX}0f0e7a52-7c3a-4c0c-9a55-3a1d1b9d8f01-000000-0000"
    objects.put_bytes(orphan, b"orphan")
    replica_a, replica_b = staging(redis_client, objects), staging(redis_client, objects)
    cleaned = replica_a.sweep(600)
    assert cleaned is not None and cleaned.orphan_objects == 1 and not list(objects.list(OBJECT_PREFIX))
    objects.put_bytes(orphan, b"orphan")
    assert replica_b.sweep(600) is None and replica_a.sweep(600) is None
    assert list(objects.list(OBJECT_PREFIX)) == [orphan]
    assert 0 < int(redis_client.ttl("kbup:sweep")) <= 600  # the claim lapses with the interval
