"""The stores of governance documents (spec 004), opened together: the registry in Redis, the chunks in
``governance_docs``, the catalog this process derives from both (``lib.governance.catalog``), the embedder
and the settings."""

from __future__ import annotations

from dataclasses import dataclass, field

from chromadb.api import ClientAPI
from redis import Redis

from lib.config import Settings
from lib.governance.catalog import CatalogCache
from lib.governance.chunks import GovernanceChunkStore
from lib.governance.registry import GovernanceRegistry
from lib.stores.chroma import open_chroma
from lib.stores.embeddings import Embedder, settings_embedder
from lib.stores.encoders import bind_encoder
from lib.stores.redis_server import redis_client


@dataclass
class GovernanceStores:
    settings: Settings
    registry: GovernanceRegistry
    chunks: GovernanceChunkStore
    embedder: Embedder
    catalog: CatalogCache = field(default_factory=CatalogCache, repr=False)


def open_governance_stores(
    settings: Settings,
    *,
    collection: str | None = None,
    redis: Redis | None = None,
    chroma: ClientAPI | None = None,
    embedder: Embedder | None = None,
) -> GovernanceStores:
    """The governance stores; the collection is ``CHROMA_GOVERNANCE_COLLECTION`` unless given here, and names
    the registry's keys too. A collection of another encoder than ``EMBEDDING_ENCODER`` is refused."""
    name = collection or settings.chroma.governance_collection
    chunks = GovernanceChunkStore(chroma or open_chroma(settings.chroma), name)
    bind_encoder(chunks, settings.embeddings.encoder)
    return GovernanceStores(
        settings=settings,
        registry=GovernanceRegistry(redis or redis_client(settings), name),
        chunks=chunks,
        embedder=embedder or settings_embedder(settings.embeddings),
    )
