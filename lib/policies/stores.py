"""The stores of policies in time (specs 000/001), opened together: the registry and its resolver in Redis,
the originals in the object store, the chunks in ``policy_docs``, the embedder, and the settings they read."""

from __future__ import annotations

from dataclasses import dataclass

from chromadb.api import ClientAPI
from redis import Redis

from lib.config import Settings
from lib.policies.chunks import PolicyVectorStore
from lib.policies.registry import PolicyRegistry
from lib.policies.resolver import EffectiveDateResolver
from lib.stores.chroma import open_chroma
from lib.stores.embeddings import Embedder, settings_embedder
from lib.stores.encoders import bind_encoder
from lib.stores.objects import ObjectStore, open_object_store
from lib.stores.redis_server import redis_client


@dataclass
class PolicyStores:
    settings: Settings
    registry: PolicyRegistry
    resolver: EffectiveDateResolver
    objects: ObjectStore
    vectors: PolicyVectorStore
    embedder: Embedder


def open_policy_stores(
    settings: Settings,
    *,
    collection: str | None = None,
    redis: Redis | None = None,
    chroma: ClientAPI | None = None,
    objects: ObjectStore | None = None,
    embedder: Embedder | None = None,
) -> PolicyStores:
    """The policy stores; the collection is ``CHROMA_POLICY_COLLECTION`` unless given here and must hold vectors
    of ``EMBEDDING_ENCODER`` (``EncoderMismatchError``). The keyword clients share ones already open."""
    registry = PolicyRegistry(redis or redis_client(settings))
    name = collection or settings.chroma.policy_collection
    vectors = PolicyVectorStore(
        chroma or open_chroma(settings.chroma),
        name,
        cache_bytes=settings.search.cache_mb * 1024 * 1024,
        changed=registry.chunks_changed,
        snapshot_dir=settings.paths.data_dir / "index_snapshots" / name if settings.search.snapshots else None,
    )
    bind_encoder(vectors, settings.embeddings.encoder)
    return PolicyStores(
        settings=settings,
        registry=registry,
        resolver=EffectiveDateResolver(registry),
        objects=objects or open_object_store(settings.objects, create_bucket=True),
        vectors=vectors,
        embedder=embedder or settings_embedder(settings.embeddings),
    )
