"""The composition root: every store and service ``lib`` offers, built once from the settings.

Flows, the MCP service, the REST API and the CLI each call ``open_kb`` once at start-up and pass the
result down; nothing in ``lib`` builds its own clients.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from chromadb.api import ClientAPI
from redis import Redis

from lib.config import Settings, load_settings
from lib.documents.chunks import DocumentChunkStore
from lib.documents.registry import DocumentRegistry
from lib.paths import ensure_file_roots
from lib.policies.chunks import PolicyVectorStore
from lib.policies.registry import PolicyRegistry
from lib.policies.resolver import EffectiveDateResolver
from lib.stores.chroma import open_chroma
from lib.stores.embeddings import Embedder
from lib.stores.encoders import bind_encoder
from lib.stores.objects import ObjectStore, open_object_store
from lib.stores.redis_server import redis_client


@dataclass
class DocumentStores:
    """Application documents (spec 003): the registry in Redis and the chunks in ``application_docs``."""

    registry: DocumentRegistry
    chunks: DocumentChunkStore


def open_document_stores(
    settings: Settings,
    *,
    collection: str | None = None,
    redis: Redis | None = None,
    chroma: ClientAPI | None = None,
) -> DocumentStores:
    """The application-document stores; the collection is ``CHROMA_DOCUMENT_COLLECTION`` unless given here.
    ``redis`` and ``chroma`` share clients already open for the policy stores. A collection whose vectors
    come from another encoder than ``EMBEDDING_ENCODER`` is refused (``EncoderMismatchError``)."""
    chunks = DocumentChunkStore(chroma or open_chroma(settings), collection or settings.document_collection)
    bind_encoder(chunks, settings.embedding_encoder)
    return DocumentStores(registry=DocumentRegistry(redis or redis_client(settings)), chunks=chunks)


@dataclass
class KnowledgeBase:
    settings: Settings
    registry: PolicyRegistry
    resolver: EffectiveDateResolver
    objects: ObjectStore
    vectors: PolicyVectorStore
    embedder: Embedder
    document_stores: DocumentStores | None = field(default=None, repr=False)

    @property
    def documents(self) -> DocumentStores:
        """The application-document stores, opened from the settings on first use when not given."""
        if self.document_stores is None:
            self.document_stores = open_document_stores(self.settings)
        return self.document_stores


def open_kb(
    settings: Settings | None = None, *, policy_collection: str | None = None, document_collection: str | None = None
) -> KnowledgeBase:
    """Open every store. The collections are ``CHROMA_POLICY_COLLECTION`` and ``CHROMA_DOCUMENT_COLLECTION``
    unless given here; each must hold vectors of ``EMBEDDING_ENCODER`` (``EncoderMismatchError``)."""
    settings = settings or load_settings()
    ensure_file_roots(settings)
    client = redis_client(settings)
    chroma = open_chroma(settings)
    registry = PolicyRegistry(client)
    vectors = PolicyVectorStore(
        chroma, policy_collection or settings.policy_collection, cache_bytes=settings.search_cache_mb * 1024 * 1024
    )
    bind_encoder(vectors, settings.embedding_encoder)
    return KnowledgeBase(
        settings=settings,
        registry=registry,
        resolver=EffectiveDateResolver(registry),
        objects=open_object_store(settings, create_bucket=True),
        vectors=vectors,
        embedder=Embedder(
            batch_size=settings.embedding_batch_size,
            onnx_dir=settings.data_dir / "models" if settings.onnx_query_embeddings else None,
            encoder=settings.embedding_encoder,
            int8_dir=settings.data_dir / "models",
            workers=os.cpu_count() or 1,
        ),
        document_stores=open_document_stores(settings, collection=document_collection, redis=client, chroma=chroma),
    )
