"""The composition root: every store and service ``lib`` offers, built once from the settings.

Flows, the MCP service, the REST API and the CLI each call ``open_kb`` once at start-up and pass the
result down; nothing in ``lib`` builds its own clients.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chromadb.api import ClientAPI
from redis import Redis

from lib.config import Settings, load_settings
from lib.documents.chunks import DocumentChunkStore
from lib.documents.registry import DocumentRegistry
from lib.governance.chunks import GovernanceChunkStore
from lib.governance.registry import GovernanceRegistry
from lib.notes.stores import NoteStores, open_note_stores
from lib.paths import ensure_file_roots
from lib.policies.chunks import PolicyVectorStore
from lib.policies.registry import PolicyRegistry
from lib.policies.resolver import EffectiveDateResolver
from lib.retrieval.blas import pin_single_blas_thread
from lib.stores.chroma import open_chroma
from lib.stores.embeddings import Embedder, settings_embedder
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
class GovernanceStores:
    """Governance documents (spec 004): the registry in Redis and the chunks in ``governance_docs``."""

    registry: GovernanceRegistry
    chunks: GovernanceChunkStore


def open_governance_stores(
    settings: Settings, *, collection: str | None = None, redis: Redis | None = None, chroma: ClientAPI | None = None
) -> GovernanceStores:
    """The governance stores; the collection is ``CHROMA_GOVERNANCE_COLLECTION`` unless given here, and names
    the registry's keys too. A collection of another encoder than ``EMBEDDING_ENCODER`` is refused."""
    name = collection or settings.governance_collection
    chunks = GovernanceChunkStore(chroma or open_chroma(settings), name)
    bind_encoder(chunks, settings.embedding_encoder)
    return GovernanceStores(registry=GovernanceRegistry(redis or redis_client(settings), name), chunks=chunks)


@dataclass
class KnowledgeBase:
    settings: Settings
    registry: PolicyRegistry
    resolver: EffectiveDateResolver
    objects: ObjectStore
    vectors: PolicyVectorStore
    embedder: Embedder
    document_stores: DocumentStores | None = field(default=None, repr=False)
    note_stores: NoteStores | None = field(default=None, repr=False)
    governance_stores: GovernanceStores | None = field(default=None, repr=False)

    @property
    def documents(self) -> DocumentStores:
        """The application-document stores, opened from the settings on first use when not given."""
        if self.document_stores is None:
            self.document_stores = open_document_stores(self.settings)
        return self.document_stores

    @property
    def notes(self) -> NoteStores:
        """The kb engine's stores (spec 002), opened from the settings on first use when not given."""
        if self.note_stores is None:
            self.note_stores = open_note_stores(self.settings)
        return self.note_stores

    @property
    def governance(self) -> GovernanceStores:
        """The governance stores, opened from the settings on first use when not given."""
        if self.governance_stores is None:
            self.governance_stores = open_governance_stores(self.settings)
        return self.governance_stores


def open_kb(
    settings: Settings | None = None, *, policy_collection: str | None = None, document_collection: str | None = None
) -> KnowledgeBase:
    """Open every store. The collections are ``CHROMA_POLICY_COLLECTION`` and ``CHROMA_DOCUMENT_COLLECTION``
    unless given here; each must hold vectors of ``EMBEDDING_ENCODER`` (``EncoderMismatchError``). Pins
    the process's BLAS to one thread when called from the main thread (``lib.retrieval.blas``)."""
    settings = settings or load_settings()
    pin_single_blas_thread()
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
        embedder=settings_embedder(settings),
        document_stores=open_document_stores(settings, collection=document_collection, redis=client, chroma=chroma),
    )
