"""The kb engine's documents and tags in Redis: what exists, which chunk generation is live, what carries a tag.

Keys::

    kbn:doc_seq             int    document ids, allocated by INCR (never reused; a failed ingestion leaves a gap)
    kbn:doc:{id}            hash   NoteDocument without its tags
    kbn:doctags:{id}        set    the document's tags
    kbn:tag:{tag}           set    ids of the documents carrying ``tag``
    kbn:src:{source_path}   set    ids of the documents with that source path
    kbn:live                hash   id -> "{generation}:{chunk_count}": every registered document and its live chunks
    kbn:docgen:{id}         int    the document's last chunk generation (INCR; the live one is in its record)
    kbn:gen                 int    generation of the whole registry, +1 on every write that changes a search
    kbn:count:{kind}        int    registered notes / files
    kbn:chunks              int    live chunks over all documents

A document exists once its record is written, in one MULTI with its tags, its ``live`` entry and the
generation bump, and only after its chunks are stored: a search never meets a document without chunks,
and a failed ingestion leaves nothing registered. Searches read ``kbn:gen`` first and reload what they
derived from the rest only when it moved (``lib.notes.index``), so tags added or removed here filter the
next search of every replica.

The client must decode responses (``lib.stores.redis_server.redis_client``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any, TypeVar, cast

import redis

from lib.errors import DocumentNotFoundError, InvalidArgumentError, StoreUnavailableError
from lib.notes.models import DocumentKind, NoteDocument

SEQUENCE = "kbn:doc_seq"
LIVE = "kbn:live"
GENERATION = "kbn:gen"
CHUNKS = "kbn:chunks"
MAX_TAGS = 64
MAX_TAG_CHARS = 200
MAX_SOURCE_PATH_CHARS = 1000

_T = TypeVar("_T")

_TAGS = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local add = ARGV[2] == 'add'
for i = 3, #ARGV do
  if add then
    redis.call('SADD', KEYS[2], ARGV[i])
    redis.call('SADD', KEYS[i + 1], ARGV[1])
  else
    redis.call('SREM', KEYS[2], ARGV[i])
    redis.call('SREM', KEYS[i + 1], ARGV[1])
  end
end
redis.call('INCR', KEYS[3])
return 1
"""
"""KEYS: doc, doctags, generation, then one tag set per tag; ARGV: id, 'add'|'remove', the tags."""

_FLIP = """
local current = redis.call('HGET', KEYS[1], 'generation')
if not current then return -1 end
if current ~= ARGV[2] then return 0 end
local old = tonumber(redis.call('HGET', KEYS[1], 'chunk_count') or '0')
redis.call('HSET', KEYS[1], 'generation', ARGV[3], 'chunk_count', ARGV[4], 'updated_at', ARGV[5])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3] .. ':' .. ARGV[4])
redis.call('INCRBY', KEYS[4], tonumber(ARGV[4]) - old)
redis.call('INCR', KEYS[3])
return 1
"""
"""KEYS: doc, live, generation, chunks; ARGV: id, expected generation, new generation, chunk count, updated_at."""


def doc_key(document_id: int) -> str:
    return f"kbn:doc:{document_id}"


def doctags_key(document_id: int) -> str:
    return f"kbn:doctags:{document_id}"


def tag_key(tag: str) -> str:
    return f"kbn:tag:{tag}"


def source_key(source_path: str) -> str:
    return f"kbn:src:{source_path}"


def count_key(kind: DocumentKind) -> str:
    return f"kbn:count:{kind}"


def check_tags(tags: Sequence[str]) -> list[str]:
    """Tags stripped and deduplicated in order; each 1..200 printable characters, at most 64 of them."""
    if isinstance(tags, str) or not all(isinstance(t, str) for t in tags):
        raise InvalidArgumentError("tags must be a list of strings")
    cleaned = list(dict.fromkeys(t.strip() for t in tags))
    if len(cleaned) > MAX_TAGS:
        raise InvalidArgumentError(f"at most {MAX_TAGS} tags are allowed, got {len(cleaned)}")
    for tag in cleaned:
        if not tag or len(tag) > MAX_TAG_CHARS or not tag.isprintable():
            raise InvalidArgumentError(f"each tag must be 1 to {MAX_TAG_CHARS} printable characters, got {tag!r}")
    return cleaned


def check_source_path(source_path: str | None) -> str | None:
    if source_path is None:
        return None
    path = source_path.strip()
    if not path or len(path) > MAX_SOURCE_PATH_CHARS or not path.isprintable():
        raise InvalidArgumentError(f"source_path must be 1 to {MAX_SOURCE_PATH_CHARS} printable characters")
    return path


class NoteRegistry:
    """All Redis access for kb documents. Thread-safe (the client pools connections)."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._tags = client.register_script(_TAGS)
        self._flip = client.register_script(_FLIP)

    # -- reads ------------------------------------------------------------------------------------

    def generation(self) -> int:
        return int(cast(str | None, _call(self._r.get, GENERATION)) or 0)

    def live(self) -> dict[int, tuple[int, int]]:
        """Every registered document: id -> (live generation, chunk count)."""
        raw = cast(dict[str, str], _call(self._r.hgetall, LIVE))
        out: dict[int, tuple[int, int]] = {}
        for key, value in raw.items():
            generation, count = value.split(":", 1)
            out[int(key)] = (int(generation), int(count))
        return out

    def tagged(self, tags: Sequence[str]) -> set[int]:
        """Ids of the documents carrying every one of ``tags`` (one SINTER)."""
        return {int(i) for i in cast(set[str], _call(self._r.sinter, [tag_key(t) for t in tags]))}

    def get(self, document_id: int) -> NoteDocument | None:
        return next(iter(self.get_many([document_id])), None)

    def require(self, document_id: int) -> NoteDocument:
        document = self.get(document_id)
        if document is None:
            raise DocumentNotFoundError(f"Document not found: {document_id}", document_id=document_id)
        return document

    def get_many(self, ids: Sequence[int]) -> list[NoteDocument]:
        """The documents of ``ids`` that exist, in the order given (two reads per document, one round trip)."""
        pipe = self._r.pipeline(transaction=False)
        for document_id in ids:
            pipe.hgetall(doc_key(document_id))
            pipe.smembers(doctags_key(document_id))
        replies = _call(pipe.execute)
        documents = []
        for data, tags in zip(replies[::2], replies[1::2], strict=True):
            if data:
                documents.append(_from_hash(data, tags))
        return documents

    def by_source_path(self, source_path: str) -> list[NoteDocument]:
        ids = sorted(int(i) for i in cast(set[str], _call(self._r.smembers, source_key(source_path))))
        return self.get_many(ids)

    def counts(self) -> dict[str, int]:
        """documents, chunks, notes, files."""
        pipe = self._r.pipeline(transaction=False)
        pipe.hlen(LIVE)
        pipe.get(CHUNKS)
        pipe.get(count_key("note"))
        pipe.get(count_key("file"))
        documents, chunks, notes, files = _call(pipe.execute)
        return {
            "documents": int(documents),
            "chunks": int(chunks or 0),
            "notes": int(notes or 0),
            "files": int(files or 0),
        }

    # -- writes -----------------------------------------------------------------------------------

    def allocate_id(self) -> int:
        """A new document id (INCR): allocated before the chunks are written, since their ids name it."""
        return int(_call(self._r.incr, SEQUENCE))

    def register(self, document: NoteDocument) -> None:
        """Write the document, its tags, its source path and its live chunks in one MULTI, bumping the
        generation: a search sees all of it or none of it."""
        i = document.document_id
        pipe = self._r.pipeline(transaction=True)
        pipe.hset(doc_key(i), mapping=_to_hash(document))
        if document.tags:
            pipe.sadd(doctags_key(i), *document.tags)
        for tag in document.tags:
            pipe.sadd(tag_key(tag), i)
        if document.source_path:
            pipe.sadd(source_key(document.source_path), i)
        pipe.hset(LIVE, str(i), f"{document.generation}:{document.chunk_count}")
        pipe.incr(count_key(document.kind))
        pipe.incrby(CHUNKS, document.chunk_count)
        pipe.incr(GENERATION)
        _call(pipe.execute)

    def flip(self, document_id: int, expected: int, generation: int, chunk_count: int, updated_at: datetime) -> bool:
        """Make ``generation`` the live chunk set of a document whose live generation is ``expected``;
        False when another writer moved it first. ``DocumentNotFoundError`` if the document is gone."""
        keys = [doc_key(document_id), LIVE, GENERATION, CHUNKS]
        args = [document_id, expected, generation, chunk_count, updated_at.isoformat()]
        flipped = int(cast(int, _call(self._flip, keys, args)))
        if flipped < 0:
            raise DocumentNotFoundError(f"Document not found: {document_id}", document_id=document_id)
        return flipped == 1

    def change_tags(self, document_id: int, tags: Sequence[str], *, add: bool) -> NoteDocument:
        """Add (or remove) ``tags`` on a document atomically with the generation bump; the document after."""
        tags = check_tags(tags)
        keys = [doc_key(document_id), doctags_key(document_id), GENERATION, *(tag_key(t) for t in tags)]
        if not _call(self._tags, keys, [document_id, "add" if add else "remove", *tags]):
            raise DocumentNotFoundError(f"Document not found: {document_id}", document_id=document_id)
        return self.require(document_id)

    def next_generation(self, document_id: int) -> int:
        """A chunk generation never used by this document before (``kbn:docgen:{id}``, INCR)."""
        return int(_call(self._r.incr, f"kbn:docgen:{document_id}"))


def _to_hash(document: NoteDocument) -> dict[Any, str]:
    data = document.model_dump(mode="json", exclude={"tags"})
    return {key: str(value) for key, value in data.items() if value is not None}


def _from_hash(data: dict[str, str], tags: set[str]) -> NoteDocument:
    fields = {k: v for k, v in data.items() if k in NoteDocument.model_fields}
    return NoteDocument.model_validate({**fields, "tags": sorted(tags)})


def _call(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    try:
        return fn(*args, **kwargs)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise StoreUnavailableError(f"Redis is not reachable: {exc}") from exc
