"""The registry of application documents in Redis: what is ingested, and who is ingesting what right now.

Keys (a Redis hash and index sets, as the policy registry does; not spec 003's Chroma collection of
placeholder embeddings)::

    appdoc:{document_id}          hash   DocumentRecord: spec 003 FR-008 registry fields and a few counts
    appdocs:{application_ref}     set    document ids of one application
    appdocs_all                   set    every document id
    appdoc_claim:{document_id}    string token of the worker ingesting that document (PX expiry)
    appdoc_gen                    int    generation of the whole registry
    appdoc_gen:{application_ref}  int    generation of one application's documents

The generations go up by one with every registration and removal, in the same script, and are never
reset (they outlive the documents): a process that keeps something derived from the stored documents
(the corpus index of ``lib.documents.index``) compares the generation it built from with the current
one, so every replica sees a change on its next query.

``document_id`` is ``{sanitized_ref}_{sha256[:6]}`` (spec 003 FR-008), so the same file for the same
application always maps to the same id. A registration is written only if the hash does not exist yet
(one Lua script: hash and both sets, or nothing), so a second writer can never overwrite the first.

A *claim* serialises ingestions of one document across threads, processes and machines: a lease lock
(``lib.stores.locks``) on ``appdoc_claim:{document_id}``, renewed while its holder works; a worker that
dies stops renewing, so its claim lapses after ``CLAIM_LEASE_SECONDS`` instead of blocking the document
forever.

The client must be built with ``decode_responses=True`` (``lib.stores.redis_server.redis_client``):
replies are read as ``str``.
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar, cast

import redis
from pydantic import BaseModel, Field

from lib.errors import (
    DocumentNotFoundError,
    IngestionInProgressError,
    InvalidArgumentError,
    RegistryUnavailableError,
)
from lib.stores.locks import LEASE_SECONDS, LeaseLock

logger = logging.getLogger(__name__)

DOCUMENTS_ALL = "appdocs_all"
GENERATION = "appdoc_gen"
CLAIM_LEASE_SECONDS = LEASE_SECONDS
"""A claim lapses this long after its holder last renewed it (it renews every third of it)."""
CLAIM_WAIT_SECONDS = 3600.0
"""How long a second ingestion of the same document waits for the first before giving up."""
MAX_APPLICATION_REF_CHARS = 100
MAX_DOCUMENT_ID_CHARS = 200

_UNSAFE = re.compile(r"[^A-Za-z0-9]+")
_T = TypeVar("_T")

_REGISTER = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SADD', KEYS[2], KEYS[4])
redis.call('SADD', KEYS[3], KEYS[4])
redis.call('INCR', KEYS[5])
redis.call('INCR', KEYS[6])
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""
"""Redis does not roll a script back when a command in it fails, so the writes that could fail on a damaged
key (the index sets, the generations) come first and the record, which makes the document exist, last."""
_REMOVE = """
local deleted = redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], KEYS[4])
redis.call('SREM', KEYS[3], KEYS[4])
redis.call('INCR', KEYS[5])
redis.call('INCR', KEYS[6])
return deleted
"""


def document_key(document_id: str) -> str:
    return f"appdoc:{document_id}"


def application_key(application_ref: str) -> str:
    return f"appdocs:{application_ref}"


def claim_key(document_id: str) -> str:
    return f"appdoc_claim:{document_id}"


def generation_key(application_ref: str) -> str:
    return f"appdoc_gen:{application_ref}"


def check_application_ref(application_ref: str) -> str:
    """The reference without surrounding blanks; it must hold a letter or digit and fit a Redis key comfortably."""
    if not isinstance(application_ref, str) or not sanitize_ref(application_ref.strip()):
        raise InvalidArgumentError("application_ref must be a planning reference such as '25/01178/REM'")
    ref = application_ref.strip()
    if len(ref) > MAX_APPLICATION_REF_CHARS or any(not ch.isprintable() for ch in ref):
        raise InvalidArgumentError(f"application_ref must be at most {MAX_APPLICATION_REF_CHARS} printable characters")
    return ref


def sanitize_ref(application_ref: str) -> str:
    """``25/01178/REM`` → ``25_01178_REM``: safe in chunk ids, document ids and object-store keys."""
    return _UNSAFE.sub("_", application_ref).strip("_")


def make_document_id(application_ref: str, file_hash: str) -> str:
    """``{sanitized_ref}_{file_hash_6}`` (spec 003 FR-008)."""
    return f"{sanitize_ref(application_ref)}_{file_hash[:6]}"


def check_document_id(document_id: str) -> str:
    if not isinstance(document_id, str) or not document_id.strip() or len(document_id) > MAX_DOCUMENT_ID_CHARS:
        raise InvalidArgumentError("document_id must be an id such as '25_01178_REM_a1b2c3'")
    return document_id.strip()


class DocumentRecord(BaseModel):
    """One ingested document.

    ``file_path`` is the path the document was ingested from, as the caller gave it (spec 003's meaning);
    a document that came in as bytes with only a name (no path) has that name. ``object_key`` is where
    the original is kept in the object store; ``source_file`` is the file's name.
    """

    document_id: str
    application_ref: str
    file_path: str
    object_key: str
    source_file: str
    file_hash: str
    file_size_bytes: int = 0
    document_type: str
    chunk_count: int
    page_count: int = 0
    total_chars: int = 0
    total_words: int = 0
    ingested_at: datetime = Field(default_factory=lambda: datetime.now(UTC))
    extraction_method: str
    contains_drawings: bool = False

    def to_hash(self) -> dict[str, str]:
        data = self.model_dump(mode="json")
        data["contains_drawings"] = "true" if self.contains_drawings else "false"
        return {key: str(value) for key, value in data.items()}

    @classmethod
    def from_hash(cls, data: dict[str, str]) -> DocumentRecord:
        """Records written before ``object_key`` existed kept the key in ``file_path`` and no path: their
        ``file_path`` becomes the file's name, the only name of the original they remember."""
        values = {**data, "contains_drawings": data.get("contains_drawings") == "true"}
        if "object_key" not in data:
            values["object_key"] = data.get("file_path", "")
            values["file_path"] = data.get("source_file", "")
        return cls.model_validate(values)


class DocumentRegistry:
    """All Redis access for application documents. Thread-safe (the redis client pools connections)."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._register = client.register_script(_REGISTER)
        self._remove = client.register_script(_REMOVE)

    # -- reads ------------------------------------------------------------------------------------

    def get(self, document_id: str) -> DocumentRecord | None:
        data = cast(dict[str, str], _call(self._r.hgetall, document_key(document_id)))
        return DocumentRecord.from_hash(data) if data else None

    def require(self, document_id: str) -> DocumentRecord:
        """The record of ``document_id`` (checked first); ``DocumentNotFoundError`` when it is not registered."""
        record = self.get(check_document_id(document_id))
        if record is None:
            raise DocumentNotFoundError(f"Document not found: {document_id}")
        return record

    def list_application(self, application_ref: str) -> list[DocumentRecord]:
        """One application's documents, oldest first (then by id, for a stable order)."""
        ids = sorted(cast(set[str], _call(self._r.smembers, application_key(application_ref))))
        return sorted(self.get_many(ids), key=lambda r: (r.ingested_at, r.document_id))

    def application_ids(self, application_ref: str) -> set[str]:
        return cast(set[str], _call(self._r.smembers, application_key(application_ref)))

    def all_ids(self) -> set[str]:
        return cast(set[str], _call(self._r.smembers, DOCUMENTS_ALL))

    def registered(self, document_ids: list[str]) -> list[bool]:
        """Which of ``document_ids`` are registered, in one round trip (search hides unregistered chunks)."""
        if not document_ids:
            return []
        return [bool(flag) for flag in _call(self._r.smismember, DOCUMENTS_ALL, document_ids)]

    def generation(self) -> int:
        """The registry's generation: it changes whenever any document is registered or removed."""
        return int(cast(str | None, _call(self._r.get, GENERATION)) or 0)

    def application_generations(self, application_refs: list[str]) -> list[int]:
        """Each application's generation (0 for one never written), in one round trip."""
        if not application_refs:
            return []
        values = cast(list[str | None], _call(self._r.mget, [generation_key(ref) for ref in application_refs]))
        return [int(value or 0) for value in values]

    def application_refs(self) -> list[str]:
        """The references of every application with a registered document, sorted (one pipelined read per
        document: callers cache it under ``generation``)."""
        ids = sorted(self.all_ids())
        pipe = self._r.pipeline(transaction=False)
        for document_id in ids:
            pipe.hget(document_key(document_id), "application_ref")
        return sorted({ref for ref in cast(list[str | None], _call(pipe.execute)) if ref})

    def get_many(self, ids: list[str]) -> list[DocumentRecord]:
        pipe = self._r.pipeline(transaction=False)
        for document_id in ids:
            pipe.hgetall(document_key(document_id))
        return [DocumentRecord.from_hash(row) for row in _call(pipe.execute) if row]

    # -- writes -----------------------------------------------------------------------------------

    def register(self, record: DocumentRecord) -> bool:
        """Write the record and index it, unless ``document_id`` is already registered (then False)."""
        fields = [item for pair in record.to_hash().items() for item in pair]
        return bool(_call(self._register, _record_keys(record), fields))

    def remove(self, record: DocumentRecord) -> bool:
        """Drop the record and its index entries atomically; False if it was already gone."""
        return bool(_call(self._remove, _record_keys(record)))

    # -- claims ---------------------------------------------------------------------------------

    def claim_held(self, document_id: str) -> bool:
        return bool(_call(self._r.exists, claim_key(document_id)))

    @contextlib.contextmanager
    def claim(
        self,
        document_id: str,
        *,
        lease_seconds: float = CLAIM_LEASE_SECONDS,
        wait_seconds: float = CLAIM_WAIT_SECONDS,
    ) -> Iterator[None]:
        """Hold the claim on ``document_id`` for the ``with`` block, waiting while another worker holds it.

        The lease is renewed while the block runs and released when it ends, whatever happened;
        ``IngestionInProgressError`` if the other worker still holds it after ``wait_seconds``. The
        caller re-reads the registry inside the block: the worker it waited for may have finished.
        """
        lock = LeaseLock(self._r, claim_key(document_id), lease_seconds=lease_seconds)
        if not lock.acquire():
            logger.info("documents.claim_wait document_id=%s", document_id)
            if not lock.acquire(wait_seconds=wait_seconds):
                raise IngestionInProgressError(
                    f"Document {document_id} is still being ingested by another worker after {wait_seconds:g} s"
                )
        try:
            yield
        finally:
            lock.release()


def _record_keys(record: DocumentRecord) -> list[str]:
    return [
        document_key(record.document_id),
        application_key(record.application_ref),
        DOCUMENTS_ALL,
        record.document_id,
        GENERATION,
        generation_key(record.application_ref),
    ]


def _call(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    try:
        return fn(*args, **kwargs)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise RegistryUnavailableError(f"Redis is not reachable: {exc}") from exc
