"""The kb engine's stores, opened together: the registry in Redis, the chunks in ``kb_docs``, and the
search index this process derives from both (``lib.notes.index``), and the ingestion jobs."""

from __future__ import annotations

from dataclasses import dataclass, field

from chromadb.api import ClientAPI
from redis import Redis

from lib.config import Settings
from lib.notes.chunks import NoteChunkStore
from lib.notes.index import NoteIndexCache
from lib.notes.job_store import JobStore
from lib.notes.registry import NoteRegistry
from lib.stores.chroma import open_chroma
from lib.stores.encoders import bind_encoder
from lib.stores.redis_server import redis_client


@dataclass
class NoteStores:
    registry: NoteRegistry
    chunks: NoteChunkStore
    jobs: JobStore
    redis: Redis
    index: NoteIndexCache = field(default_factory=NoteIndexCache, repr=False)


def open_note_stores(
    settings: Settings, *, collection: str | None = None, redis: Redis | None = None, chroma: ClientAPI | None = None
) -> NoteStores:
    """The kb stores; the collection is ``CHROMA_KB_COLLECTION`` unless given here and must hold vectors of
    ``EMBEDDING_ENCODER`` (``EncoderMismatchError``). ``redis`` and ``chroma`` share clients already open."""
    chunks = NoteChunkStore(chroma or open_chroma(settings), collection or settings.kb_collection)
    bind_encoder(chunks, settings.embedding_encoder)
    client = redis or redis_client(settings)
    return NoteStores(registry=NoteRegistry(client), chunks=chunks, jobs=JobStore(client), redis=client)
