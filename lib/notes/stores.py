"""The kb engine's stores (spec 002), opened together: the registry in Redis, the chunks in ``kb_docs``, the
search index this process derives from both (``lib.notes.index``), the ingestion jobs, the staged uploads'
object store, the embedder and the settings."""

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
from lib.stores.embeddings import Embedder, settings_embedder
from lib.stores.encoders import bind_encoder
from lib.stores.objects import ObjectStore, open_object_store
from lib.stores.redis_server import redis_client


@dataclass
class NoteStores:
    settings: Settings
    registry: NoteRegistry
    chunks: NoteChunkStore
    jobs: JobStore
    redis: Redis
    objects: ObjectStore
    embedder: Embedder
    index: NoteIndexCache = field(default_factory=NoteIndexCache, repr=False)


def open_note_stores(
    settings: Settings,
    *,
    collection: str | None = None,
    redis: Redis | None = None,
    chroma: ClientAPI | None = None,
    objects: ObjectStore | None = None,
    embedder: Embedder | None = None,
) -> NoteStores:
    """The kb stores; the collection is ``CHROMA_KB_COLLECTION`` unless given here and must hold vectors of
    ``EMBEDDING_ENCODER`` (``EncoderMismatchError``). The keyword clients share ones already open."""
    chunks = NoteChunkStore(chroma or open_chroma(settings.chroma), collection or settings.chroma.kb_collection)
    bind_encoder(chunks, settings.embeddings.encoder)
    client = redis or redis_client(settings)
    return NoteStores(
        settings=settings,
        registry=NoteRegistry(client),
        chunks=chunks,
        jobs=JobStore(client),
        redis=client,
        objects=objects or open_object_store(settings.objects, create_bucket=True),
        embedder=embedder or settings_embedder(settings.embeddings),
    )
