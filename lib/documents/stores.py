"""The stores of application documents (spec 003), opened together: the registry in Redis (with the ingestion
claim), the chunks in ``application_docs``, the originals in the object store, the embedder, the settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from chromadb.api import ClientAPI
from redis import Redis

from lib.config import Settings
from lib.documents.chunks import DocumentChunkStore
from lib.documents.index import ApplicationIndexes
from lib.documents.registry import DocumentRegistry
from lib.stores.chroma import open_chroma
from lib.stores.embeddings import Embedder, settings_embedder
from lib.stores.encoders import bind_encoder
from lib.stores.objects import ObjectStore, open_object_store
from lib.stores.redis_server import redis_client


@dataclass
class DocumentStores:
    settings: Settings
    registry: DocumentRegistry
    chunks: DocumentChunkStore
    objects: ObjectStore
    embedder: Embedder
    index: ApplicationIndexes = field(init=False, repr=False)
    """The corpus index this process derives from the chunks and the registry (``lib.documents.index``)."""

    def __post_init__(self) -> None:
        self.index = ApplicationIndexes(self.chunks, self.registry.application_ids)


def open_document_stores(
    settings: Settings,
    *,
    collection: str | None = None,
    redis: Redis | None = None,
    chroma: ClientAPI | None = None,
    objects: ObjectStore | None = None,
    embedder: Embedder | None = None,
) -> DocumentStores:
    """The application-document stores; the collection is ``CHROMA_DOCUMENT_COLLECTION`` unless given here and
    must hold vectors of ``EMBEDDING_ENCODER`` (``EncoderMismatchError``). The keyword clients share ones
    already open."""
    name = collection or settings.chroma.document_collection
    chunks = DocumentChunkStore(chroma or open_chroma(settings.chroma), name)
    bind_encoder(chunks, settings.embeddings.encoder)
    return DocumentStores(
        settings=settings,
        registry=DocumentRegistry(redis or redis_client(settings)),
        chunks=chunks,
        objects=objects or open_object_store(settings.objects, create_bucket=True),
        embedder=embedder or settings_embedder(settings.embeddings),
    )
