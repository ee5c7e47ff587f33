"""Chunked uploads (spec 002's ``kb_upload_start`` / ``_chunk`` / ``_finish``), staged where every replica
sees them: the bytes in the object store, the tracking in Redis. An upload started on one replica can be
continued and finished on another, and survives a restart of the service (the spec accepted losing it).

Keys::

    kbup:{id}           hash   filename, source_path, total_size, tags (JSON), created_at, expires_at, received,
                               finishing
    kbup:{id}:chunks    hash   chunk_index -> "{size}:{sha256}"
    kbup:index          zset   id -> expires_at (what the cleanup visits)
    kbup:sweep          string the claim of the service's sweeper for one interval (``sweep``)
    kb_uploads/{id}-{chunk_index:06d}-{sha256[:16]}     object: one chunk's bytes

Both hashes expire at ``expires_at`` (start + ``KB_UPLOAD_TTL_SECONDS``; spec: no finish within the TTL
means abandoned), so Redis itself forgets an abandoned upload on time. Its bytes go on the next access
to that id, or with the next ``cleanup`` (the ``cleanup_kb_uploads`` flow's schedule with a Prefect server, the
kb server's own ``sweep`` without one), which also removes chunk objects that no tracking entry owns (a crash
between the two deletes of a finish).

A chunk object is named by its content, and a Lua script records it only if the upload still exists,
its index is new (the same bytes again are harmless; other bytes are refused) and the bytes received stay
within ``total_size``. So two replicas racing on one index cannot leave the record and the object disagreeing.
A finish claims the upload for ``FINISH_LEASE_S`` (a second finish meanwhile is refused), checks that
indices 0..n-1 are all there and add up to ``total_size``, and reassembles into a local file.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

import redis
from pydantic import BaseModel, Field
from redis.typing import EncodableT, FieldT

from lib.errors import InvalidArgumentError, StoreUnavailableError, UnsupportedFileTypeError, UploadNotFoundError
from lib.notes.registry import check_source_path
from lib.observability.metrics import upload_bytes
from lib.stores.objects import ObjectStore, sha256_bytes
from lib.stores.redis_server import redis_client
from lib.text.filetypes import FileKind, detect_file_type

if TYPE_CHECKING:
    from lib.notes.stores import NoteStores

logger = logging.getLogger(__name__)

OBJECT_PREFIX = "kb_uploads/"
INDEX = "kbup:index"
SWEEP_CLAIM = "kbup:sweep"
MAX_CHUNK_BYTES = 2 * 1024 * 1024
"""Decoded bytes per chunk: its base64 (4/3 larger) stays inside the MCP transports' 4 MiB message limit."""
FINISH_LEASE_S = 300
CONTENT_TYPES = {
    ".pdf": (FileKind.PDF, "application/pdf"),
    ".md": (FileKind.TEXT, "text/markdown; charset=utf-8"),
    ".markdown": (FileKind.TEXT, "text/markdown; charset=utf-8"),
    ".txt": (FileKind.TEXT, "text/plain; charset=utf-8"),
    ".text": (FileKind.TEXT, "text/plain; charset=utf-8"),
}
MAX_FILENAME_CHARS = 255

_RECORD_CHUNK = """
if redis.call('EXISTS', KEYS[1]) == 0 then return {'missing', '0'} end
local previous = redis.call('HGET', KEYS[2], ARGV[1])
local received = tonumber(redis.call('HGET', KEYS[1], 'received'))
if previous then
  if previous == ARGV[2] then return {'duplicate', tostring(received)} end
  return {'conflict', previous}
end
received = received + tonumber(ARGV[3])
if received > tonumber(redis.call('HGET', KEYS[1], 'total_size')) then return {'too_large', tostring(received)} end
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[1], 'received', received)
redis.call('EXPIREAT', KEYS[2], redis.call('HGET', KEYS[1], 'expires_at'))
return {'stored', tostring(received)}
"""

_CLAIM = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 'missing' end
local until_ = tonumber(redis.call('HGET', KEYS[1], 'finishing') or '0')
if until_ > tonumber(ARGV[1]) then return 'busy' end
local lease = tonumber(ARGV[1]) + tonumber(ARGV[2])
redis.call('HSET', KEYS[1], 'finishing', lease)
if tonumber(redis.call('HGET', KEYS[1], 'expires_at')) < lease then
  redis.call('EXPIREAT', KEYS[1], lease)
  redis.call('EXPIREAT', KEYS[2], lease)
end
return 'claimed'
"""


class UploadStarted(BaseModel):
    upload_id: str
    filename: str
    total_size: int
    expires_at: int = Field(description="Unix time after which the upload is abandoned and its chunks removed")
    max_chunk_bytes: int = Field(description="Most bytes one chunk may carry (before base64)")


class ChunkStored(BaseModel):
    upload_id: str
    chunk_index: int
    size: int
    received_bytes: int = Field(description="Bytes of distinct chunks received so far")
    total_size: int
    duplicate: bool = Field(description="The same bytes were already stored under this index; nothing changed")


class UploadCleanup(BaseModel):
    expired_uploads: int = Field(description="Abandoned uploads whose tracking and chunks were removed")
    orphan_objects: int = Field(description="Chunk objects no upload tracked any more, removed")


@dataclass(frozen=True)
class AssembledUpload:
    """A claimed, complete upload reassembled into ``path`` (the caller deletes it)."""

    upload_id: str
    filename: str
    content_type: str
    tags: list[str]
    size: int
    path: Path
    source_path: str | None = None


def _meta_key(upload_id: str) -> str:
    return f"kbup:{upload_id}"


def _chunks_key(upload_id: str) -> str:
    return f"kbup:{upload_id}:chunks"


def _object_key(upload_id: str, chunk_index: int, sha256: str) -> str:
    return f"{OBJECT_PREFIX}{upload_id}-{chunk_index:06d}-{sha256[:16]}"


def _checked_id(upload_id: str) -> str:
    """The canonical form of a well-formed id; anything else is unknown (and never reaches a key)."""
    try:
        return str(uuid.UUID(upload_id))
    except (ValueError, AttributeError, TypeError):
        raise UploadNotFoundError(f"No upload '{str(upload_id)[:64]}': start one with kb_upload_start") from None


def file_kind(filename: str) -> tuple[FileKind, str]:
    """The kind and content type a name promises; PDF, Markdown and plain text only."""
    found = CONTENT_TYPES.get(PurePath(filename.replace("\\", "/")).suffix.lower())
    if found is None:
        raise UnsupportedFileTypeError(
            f"Unsupported file type for '{filename[:100]}': upload a PDF (.pdf), Markdown (.md) or text (.txt)"
        )
    return found


def decode_chunk(data: str, max_bytes: int = MAX_CHUNK_BYTES) -> bytes:
    """Strict base64 (whitespace ignored) of at most ``max_bytes`` decoded bytes, never empty."""
    if len(data) > (max_bytes + 2) // 3 * 4 + len(data) // 64 + 4:
        raise InvalidArgumentError(f"A chunk may carry at most {max_bytes} bytes (before base64)")
    try:
        raw = base64.b64decode("".join(data.split()), validate=True)
    except (binascii.Error, ValueError):
        raise InvalidArgumentError("data is not valid base64") from None
    if not raw:
        raise InvalidArgumentError("A chunk must carry at least one byte")
    if len(raw) > max_bytes:
        raise InvalidArgumentError(f"A chunk may carry at most {max_bytes} bytes (before base64); got {len(raw)}")
    return raw


def upload_staging(stores: NoteStores) -> UploadStaging:
    """The deployment's staging: its Redis and object store, ``KB_MAX_UPLOAD_BYTES``, ``KB_UPLOAD_TTL_SECONDS``."""
    settings = stores.settings
    return UploadStaging(
        redis_client(settings),
        stores.objects,
        max_upload_bytes=settings.kb.max_upload_bytes,
        ttl_seconds=settings.kb.upload_ttl_seconds,
    )


class UploadStaging:
    """The staging area of one deployment; any number of processes share it through the stores."""

    def __init__(self, client: redis.Redis, objects: ObjectStore, *, max_upload_bytes: int, ttl_seconds: int) -> None:
        self._r = client
        self._objects = objects
        self.max_upload_bytes = max_upload_bytes
        self.ttl_seconds = ttl_seconds
        self._record = client.register_script(_RECORD_CHUNK)
        self._claim = client.register_script(_CLAIM)

    def start(self, filename: str, total_size: int, tags: list[str], source_path: str | None = None) -> UploadStarted:
        """Track a new upload. The document it becomes keeps ``source_path``, by default ``filename`` as given
        (spec 002: ``kb_get(source_path=...)`` finds what was uploaded)."""
        name = PurePath(filename.replace("\\", "/")).name
        if not name or len(name) > MAX_FILENAME_CHARS:
            raise InvalidArgumentError(f"filename must be a file name of 1 to {MAX_FILENAME_CHARS} characters")
        file_kind(name)
        path = check_source_path(source_path if source_path is not None else filename)
        if not 1 <= total_size <= self.max_upload_bytes:
            raise InvalidArgumentError(
                f"total_size must be between 1 and {self.max_upload_bytes} bytes (KB_MAX_UPLOAD_BYTES)"
            )
        upload_id = str(uuid.uuid4())
        now = int(time.time())
        expires_at = now + self.ttl_seconds
        meta: dict[FieldT, EncodableT] = {
            "filename": name,
            "source_path": path or name,
            "total_size": total_size,
            "tags": json.dumps(tags),
            "created_at": now,
            "expires_at": expires_at,
            "received": 0,
        }
        with self._store_errors():
            pipe = self._r.pipeline(transaction=True)
            pipe.hset(_meta_key(upload_id), mapping=meta)
            pipe.expireat(_meta_key(upload_id), expires_at)
            pipe.zadd(INDEX, {upload_id: expires_at})
            pipe.execute()
        logger.info("kb_upload.started upload_id=%s size=%d", upload_id, total_size)
        return UploadStarted(
            upload_id=upload_id,
            filename=name,
            total_size=total_size,
            expires_at=expires_at,
            max_chunk_bytes=MAX_CHUNK_BYTES,
        )

    def put_chunk(self, upload_id: str, chunk_index: int, data: str) -> ChunkStored:
        upload_id = _checked_id(upload_id)
        raw = decode_chunk(data)
        total = self._total_size(upload_id)
        if not 0 <= chunk_index < total:
            raise InvalidArgumentError(f"chunk_index must be between 0 and {total - 1}")
        digest = sha256_bytes(raw)
        key = _object_key(upload_id, chunk_index, digest)
        self._objects.put_bytes(key, raw)
        with self._store_errors():
            outcome, value = self._record(
                keys=[_meta_key(upload_id), _chunks_key(upload_id)],
                args=[chunk_index, f"{len(raw)}:{digest}", len(raw)],
            )
        if outcome == "stored":
            upload_bytes.labels("kb_chunk").inc(len(raw))
        if outcome == "duplicate":
            return ChunkStored(
                upload_id=upload_id,
                chunk_index=chunk_index,
                size=len(raw),
                received_bytes=int(value),
                total_size=total,
                duplicate=True,
            )
        if outcome != "stored":
            self._objects.delete(key)
        if outcome == "missing":
            self._forget(upload_id)
            raise UploadNotFoundError(f"No upload '{upload_id}': it finished or expired; start again")
        if outcome == "conflict":
            raise InvalidArgumentError(f"chunk_index {chunk_index} was already received with other bytes")
        if outcome == "too_large":
            raise InvalidArgumentError(f"This chunk would bring the upload past its total_size of {total} bytes")
        return ChunkStored(
            upload_id=upload_id,
            chunk_index=chunk_index,
            size=len(raw),
            received_bytes=int(value),
            total_size=total,
            duplicate=False,
        )

    def assemble(self, upload_id: str, directory: Path | None = None) -> AssembledUpload:
        """Claim a complete upload and write it, in order, to a new file. On any refusal the claim is released."""
        upload_id = _checked_id(upload_id)
        with self._store_errors():
            claimed = self._claim(
                keys=[_meta_key(upload_id), _chunks_key(upload_id)], args=[int(time.time()), FINISH_LEASE_S]
            )
        if claimed == "missing":
            self._forget(upload_id)
            raise UploadNotFoundError(f"No upload '{upload_id}': it finished or expired; start again")
        if claimed == "busy":
            raise InvalidArgumentError(f"Upload '{upload_id}' is being finished by another call")
        try:
            return self._write(upload_id, directory)
        except BaseException:
            self.release(upload_id)
            raise

    def release(self, upload_id: str) -> None:
        """Give a claimed upload back (the engine refused or was unreachable): finish may be called again."""
        with self._store_errors():
            self._r.hdel(_meta_key(upload_id), "finishing")

    def complete(self, upload_id: str) -> None:
        """The engine took the file: forget the upload (tracking first, so nobody continues it)."""
        self._forget(upload_id)
        logger.info("kb_upload.finished upload_id=%s", upload_id)

    def in_progress(self) -> int:
        with self._store_errors():
            return int(self._r.zcount(INDEX, int(time.time()), "+inf"))

    def cleanup(self) -> UploadCleanup:
        """Remove abandoned uploads (past ``expires_at``) and chunk objects no upload tracks."""
        now = int(time.time())
        with self._store_errors():
            expired = [str(i) for i in self._r.zrangebyscore(INDEX, "-inf", now)]
        count = 0
        for upload_id in expired:
            with self._store_errors():
                alive = self._r.hget(_meta_key(upload_id), "expires_at")
                if alive is not None and int(alive) > now:  # a finish extended it
                    self._r.zadd(INDEX, {upload_id: int(alive)})
                    continue
            self._forget(upload_id)
            count += 1
        orphans = 0
        for key in list(self._objects.list(OBJECT_PREFIX)):
            upload_id = key[len(OBJECT_PREFIX) : len(OBJECT_PREFIX) + 36]
            with self._store_errors():
                tracked = self._r.exists(_meta_key(upload_id))
            if not tracked and self._objects.delete(key):
                orphans += 1
        if count or orphans:
            logger.info("kb_upload.cleaned expired=%d orphan_objects=%d", count, orphans)
        return UploadCleanup(expired_uploads=count, orphan_objects=orphans)

    def sweep(self, every_seconds: int) -> UploadCleanup | None:
        """``cleanup``, by one process of the deployment per ``every_seconds``: each replica calls this once per
        interval, the first to claim ``kbup:sweep`` (``SET NX``, expiring after the interval, never released)
        cleans, the others find it claimed and return ``None``. A replica that dies mid-sweep leaves nothing
        held beyond the interval."""
        with self._store_errors():
            claimed = self._r.set(SWEEP_CLAIM, uuid.uuid4().hex, nx=True, ex=every_seconds)
        return self.cleanup() if claimed else None

    def _total_size(self, upload_id: str) -> int:
        with self._store_errors():
            total = self._r.hget(_meta_key(upload_id), "total_size")
        if total is None:
            self._forget(upload_id)
            raise UploadNotFoundError(f"No upload '{upload_id}': it finished or expired; start again")
        return int(total)

    def _write(self, upload_id: str, directory: Path | None) -> AssembledUpload:
        with self._store_errors():
            pipe = self._r.pipeline(transaction=True)
            pipe.hgetall(_meta_key(upload_id))
            pipe.hgetall(_chunks_key(upload_id))
            meta, chunks = pipe.execute()
        if not meta:
            raise UploadNotFoundError(f"No upload '{upload_id}': it finished or expired; start again")
        total, filename = int(meta["total_size"]), str(meta["filename"])
        records = {int(index): str(record).split(":") for index, record in chunks.items()}
        missing = [i for i in range(max(records, default=-1) + 1) if i not in records]
        if missing or not records:
            shown = ", ".join(map(str, missing[:10])) + (" ..." if len(missing) > 10 else "")
            raise InvalidArgumentError(f"Upload '{upload_id}' has gaps: chunk_index {shown or 0} not received")
        received = sum(int(size) for size, _ in records.values())
        if received != total:
            raise InvalidArgumentError(f"Upload '{upload_id}' has {received} bytes but total_size is {total}")
        kind, content_type = file_kind(filename)
        handle = tempfile.NamedTemporaryFile(prefix="kb-upload-", dir=directory, delete=False)  # noqa: SIM115
        path = Path(handle.name)
        try:
            with handle:
                for index in range(len(records)):
                    size, digest = records[index]
                    data = self._objects.get_bytes(_object_key(upload_id, index, digest))
                    if len(data) != int(size) or sha256_bytes(data) != digest:
                        raise StoreUnavailableError(f"Chunk {index} of upload '{upload_id}' changed in the store")
                    handle.write(data)
            sample = path.read_bytes() if kind is FileKind.TEXT else path.open("rb").read(4096)
            detect_file_type(sample, {kind}, file_name=filename)
        except BaseException:
            path.unlink(missing_ok=True)
            raise
        return AssembledUpload(
            upload_id=upload_id,
            filename=filename,
            content_type=content_type,
            tags=list(json.loads(meta["tags"])),
            size=total,
            path=path,
            source_path=meta.get("source_path") or filename,
        )

    def _forget(self, upload_id: str) -> None:
        with self._store_errors():
            chunks: dict[str, str] = self._r.hgetall(_chunks_key(upload_id))  # type: ignore[assignment]
            self._r.delete(_meta_key(upload_id), _chunks_key(upload_id))
            self._r.zrem(INDEX, upload_id)
        keys = {_object_key(upload_id, int(i), record.split(":")[1]) for i, record in chunks.items()}
        keys |= set(self._objects.list(f"{OBJECT_PREFIX}{upload_id}-"))
        for key in keys:
            self._objects.delete(key)

    @staticmethod
    @contextmanager
    def _store_errors() -> Iterator[None]:
        """Redis down or failing: ``StoreUnavailableError`` (503), as every store outage of a request."""
        try:
            yield
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise StoreUnavailableError("Redis did not answer; try again") from exc
