"""The governance registry in Redis: which documents are indexed, their metadata, chain links and content hash.

Keys, all under ``gov:{collection}:`` so two collections (two deployments, two tests) never meet::

    doc:{id}     hash    GovernanceRecord (lists as JSON)
    text:{id}    string  the document's whole text as ingested
    docs         set     every registered id
    gen          int     the last chunk generation handed out (``allocate_generation``)
    version      int     bumped by every write, in the same transaction: readers that keep something
                         derived from the registry (the search catalog) compare it to know it is stale
    state        hash    last_updated (ISO timestamp of the last write)
    ingest       lock    held by a corpus ingestion while it writes, and by the audit's repair

The registry decides what a search sees: a document's chunks count only in the generation its record
names, so writing a record is the moment a re-chunked document flips from its old chunks to its new ones.

The client must be built with ``decode_responses=True`` (``lib.stores.redis_server.redis_client``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime

import redis

from lib.errors import RegistryUnavailableError
from lib.governance.models import GovernanceRecord
from lib.stores.locks import LeaseLock

_LISTS = ("relates_to", "superseded_by", "replaces")

_FORGET_HASH = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'content_hash', '')
redis.call('INCR', KEYS[2])
redis.call('HSET', KEYS[3], 'last_updated', ARGV[1])
return 1
"""
"""KEYS: the record, version, state; ARGV: now. Touches the registry as every write does."""


def _encode(record: GovernanceRecord) -> dict[str, str]:
    fields: dict[str, str] = {}
    for key, value in record.model_dump().items():
        if key in _LISTS:
            fields[key] = json.dumps(value)
        elif value is not None:
            fields[key] = str(value)
    return fields


def _decode(fields: dict[str, str]) -> GovernanceRecord:
    data: dict[str, object] = dict(fields)
    for key in _LISTS:
        data[key] = json.loads(fields.get(key) or "[]")
    return GovernanceRecord.model_validate(data)


class GovernanceRegistry:
    def __init__(self, client: redis.Redis, collection: str) -> None:
        self.client = client
        self.prefix = f"gov:{collection}:"

    def _key(self, name: str) -> str:
        return self.prefix + name

    def version(self) -> int:
        try:
            return int(self.client.get(self._key("version")) or 0)
        except redis.RedisError as exc:
            raise RegistryUnavailableError(f"Redis is unavailable: {exc}") from exc

    def allocate_generation(self) -> int:
        """A chunk generation never handed out before in this collection."""
        return int(self.client.incr(self._key("gen")))

    def ids(self) -> list[str]:
        return sorted(self.client.smembers(self._key("docs")))  # type: ignore[arg-type]

    def records(self, ids: Iterable[str] | None = None) -> dict[str, GovernanceRecord]:
        """The records of ``ids`` (every registered one without it), in one pipelined round trip."""
        wanted = self.ids() if ids is None else list(ids)
        try:
            with self.client.pipeline(transaction=False) as pipe:
                for doc_id in wanted:
                    pipe.hgetall(self._key(f"doc:{doc_id}"))
                replies = pipe.execute()
        except redis.RedisError as exc:
            raise RegistryUnavailableError(f"Redis is unavailable: {exc}") from exc
        return {doc_id: _decode(fields) for doc_id, fields in zip(wanted, replies, strict=True) if fields}

    def snapshot(self) -> tuple[int, dict[str, GovernanceRecord]]:
        """The version and every record as of that version (re-read if a write landed in between)."""
        while True:
            before = self.version()
            records = self.records()
            if self.version() == before:
                return before, records

    def get(self, doc_id: str) -> GovernanceRecord | None:
        return self.records([doc_id]).get(doc_id)

    def text(self, doc_id: str) -> str | None:
        value = self.client.get(self._key(f"text:{doc_id}"))
        return None if value is None else str(value)

    def put(self, record: GovernanceRecord, text: str) -> None:
        """Register or replace ``record`` with its text, in one transaction (the generation flip)."""
        with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(self._key(f"doc:{record.id}"))
            pipe.hset(self._key(f"doc:{record.id}"), mapping=_encode(record))  # type: ignore[arg-type]
            pipe.set(self._key(f"text:{record.id}"), text)
            pipe.sadd(self._key("docs"), record.id)
            self._touch(pipe)
            pipe.execute()

    def forget_hash(self, doc_id: str) -> bool:
        """Clear a record's content hash, so the next ingestion of its file re-chunks it; False if unregistered."""
        keys = [self._key(f"doc:{doc_id}"), self._key("version"), self._key("state")]
        return bool(self.client.eval(_FORGET_HASH, 3, *keys, datetime.now(UTC).isoformat()))

    def ingest_lock(self) -> LeaseLock:
        """The lock a corpus ingestion holds while it writes (one at a time per collection)."""
        return LeaseLock(self.client, self._key("ingest"))

    def remove(self, doc_id: str) -> None:
        with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(self._key(f"doc:{doc_id}"), self._key(f"text:{doc_id}"))
            pipe.srem(self._key("docs"), doc_id)
            self._touch(pipe)
            pipe.execute()

    def last_updated(self) -> datetime | None:
        value = self.client.hget(self._key("state"), "last_updated")
        return None if value is None else datetime.fromisoformat(str(value))

    def _touch(self, pipe: redis.client.Pipeline) -> None:
        pipe.incr(self._key("version"))
        pipe.hset(self._key("state"), "last_updated", datetime.now(UTC).isoformat())
