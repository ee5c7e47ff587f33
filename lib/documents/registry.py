"""The registry of application documents in Redis: what is ingested, and who is ingesting what right now.

Keys (a Redis hash and index sets, as the policy registry does; not spec 003's Chroma collection of
placeholder embeddings)::

    appdoc:{document_id}          hash   DocumentRecord: spec 003 FR-008 registry fields and a few counts
    appdocs:{application_ref}     set    document ids of one application
    appdocs_all                   set    every document id
    appdoc_claim:{document_id}    string token of the worker ingesting that document (PX expiry)

``document_id`` is ``{sanitized_ref}_{sha256[:6]}`` (spec 003 FR-008), so the same file for the same
application always maps to the same id. A registration is written only if the hash does not exist yet
(one Lua script: hash and both sets, or nothing), so a second writer can never overwrite the first.

A *claim* serialises ingestions of one document across threads, processes and machines: ``SET NX PX``
with a random token; the holder refreshes the expiry while it works, and a worker that dies stops
refreshing, so its claim lapses after ``CLAIM_TTL_MS`` instead of blocking the document forever.
"""

from __future__ import annotations

import contextlib
import logging
import re
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any, TypeVar

import redis
from pydantic import BaseModel, Field

from lib.errors import IngestionInProgressError, InvalidArgumentError, RegistryUnavailableError

logger = logging.getLogger(__name__)

DOCUMENTS_ALL = "appdocs_all"
CLAIM_TTL_MS = 30_000
"""A claim lapses this long after its holder last refreshed it (it refreshes every third of it)."""
CLAIM_POLL_SECONDS = 0.1
CLAIM_WAIT_SECONDS = 3600.0
"""How long a second ingestion of the same document waits for the first before giving up."""
MAX_APPLICATION_REF_CHARS = 100

_UNSAFE = re.compile(r"[^A-Za-z0-9]+")
_T = TypeVar("_T")

_REGISTER = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('SADD', KEYS[2], KEYS[4])
redis.call('SADD', KEYS[3], KEYS[4])
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
"""
"""Redis does not roll a script back when a command in it fails, so the writes that could fail on a damaged
key (the index sets) come first and the record, which makes the document exist, comes last."""
_REFRESH = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end return 0"
_RELEASE = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0"


def document_key(document_id: str) -> str:
    return f"appdoc:{document_id}"


def application_key(application_ref: str) -> str:
    return f"appdocs:{application_ref}"


def claim_key(document_id: str) -> str:
    return f"appdoc_claim:{document_id}"


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


class DocumentRecord(BaseModel):
    """One ingested document. ``file_path`` is the object-store key of the original; ``source_file`` its name."""

    document_id: str
    application_ref: str
    file_path: str
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
        return cls.model_validate({**data, "contains_drawings": data.get("contains_drawings") == "true"})


class DocumentRegistry:
    """All Redis access for application documents. Thread-safe (the redis client pools connections)."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._register = client.register_script(_REGISTER)
        self._refresh = client.register_script(_REFRESH)
        self._release = client.register_script(_RELEASE)

    # -- reads ------------------------------------------------------------------------------------

    def get(self, document_id: str) -> DocumentRecord | None:
        data = _call(self._r.hgetall, document_key(document_id))
        return DocumentRecord.from_hash(data) if data else None

    def list_application(self, application_ref: str) -> list[DocumentRecord]:
        """One application's documents, oldest first (then by id, for a stable order)."""
        ids = sorted(_call(self._r.smembers, application_key(application_ref)))
        return sorted(self.get_many(ids), key=lambda r: (r.ingested_at, r.document_id))

    def all_ids(self) -> set[str]:
        return set(_call(self._r.smembers, DOCUMENTS_ALL))

    def registered(self, document_ids: list[str]) -> list[bool]:
        """Which of ``document_ids`` are registered, in one round trip (search hides unregistered chunks)."""
        if not document_ids:
            return []
        return [bool(flag) for flag in _call(self._r.smismember, DOCUMENTS_ALL, document_ids)]

    def get_many(self, ids: list[str]) -> list[DocumentRecord]:
        pipe = self._r.pipeline(transaction=False)
        for document_id in ids:
            pipe.hgetall(document_key(document_id))
        return [DocumentRecord.from_hash(row) for row in _call(pipe.execute) if row]

    # -- writes -----------------------------------------------------------------------------------

    def register(self, record: DocumentRecord) -> bool:
        """Write the record and index it, unless ``document_id`` is already registered (then False)."""
        fields = [item for pair in record.to_hash().items() for item in pair]
        keys = [
            document_key(record.document_id),
            application_key(record.application_ref),
            DOCUMENTS_ALL,
            record.document_id,
        ]
        return bool(_call(self._register, keys, fields))

    def remove(self, record: DocumentRecord) -> bool:
        """Drop the record and its index entries atomically; False if it was already gone."""
        pipe = self._r.pipeline(transaction=True)
        pipe.delete(document_key(record.document_id))
        pipe.srem(application_key(record.application_ref), record.document_id)
        pipe.srem(DOCUMENTS_ALL, record.document_id)
        deleted, _, _ = _call(pipe.execute)
        return bool(deleted)

    # -- claims -----------------------------------------------------------------------------------

    def try_claim(self, document_id: str, ttl_ms: int = CLAIM_TTL_MS) -> str | None:
        """Take the ingestion claim on ``document_id``; its token, or None when another worker holds it."""
        token = uuid.uuid4().hex
        taken = _call(self._r.set, claim_key(document_id), token, nx=True, px=ttl_ms)
        return token if taken else None

    def refresh_claim(self, document_id: str, token: str, ttl_ms: int = CLAIM_TTL_MS) -> bool:
        return bool(_call(self._refresh, [claim_key(document_id)], [token, ttl_ms]))

    def release_claim(self, document_id: str, token: str) -> bool:
        return bool(_call(self._release, [claim_key(document_id)], [token]))

    def claim_held(self, document_id: str) -> bool:
        return bool(_call(self._r.exists, claim_key(document_id)))

    @contextlib.contextmanager
    def claim(
        self,
        document_id: str,
        *,
        ttl_ms: int = CLAIM_TTL_MS,
        wait_seconds: float = CLAIM_WAIT_SECONDS,
        poll_seconds: float = CLAIM_POLL_SECONDS,
    ) -> Iterator[None]:
        """Hold the claim on ``document_id`` for the ``with`` block, waiting while another worker holds it.

        A background thread keeps the claim alive; leaving the block releases it, whatever happened.
        The caller re-reads the registry inside the block: the worker it waited for may have finished.
        """
        deadline = time.monotonic() + wait_seconds
        token = self.try_claim(document_id, ttl_ms)
        if token is None:
            logger.info("documents.claim_wait document_id=%s", document_id)
        while token is None:
            if time.monotonic() >= deadline:
                raise IngestionInProgressError(
                    f"Document {document_id} is still being ingested by another worker after {wait_seconds:g} s"
                )
            time.sleep(poll_seconds)
            token = self.try_claim(document_id, ttl_ms)
        stop = threading.Event()
        keeper = threading.Thread(
            target=self._keep_alive, args=(document_id, token, ttl_ms, stop), name="claim-keeper", daemon=True
        )
        keeper.start()
        try:
            yield
        finally:
            stop.set()
            keeper.join()
            with contextlib.suppress(RegistryUnavailableError):  # it lapses by itself
                self.release_claim(document_id, token)

    def _keep_alive(self, document_id: str, token: str, ttl_ms: int, stop: threading.Event) -> None:
        while not stop.wait(ttl_ms / 3000):
            try:
                if not self.refresh_claim(document_id, token, ttl_ms):
                    logger.warning("documents.claim_lost document_id=%s", document_id)
                    return
            except RegistryUnavailableError:
                logger.warning("documents.claim_refresh_failed document_id=%s", document_id)


def _call(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    try:
        return fn(*args, **kwargs)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise RegistryUnavailableError(f"Redis is not reachable: {exc}") from exc
