"""The composition root: every store and service ``lib`` offers, built once from the settings.

Flows, the MCP service, the REST API and the CLI each call ``open_kb`` once at start-up and pass the
result down; nothing in ``lib`` builds its own clients.
"""

from __future__ import annotations

from dataclasses import dataclass

from lib.config import Settings, load_settings
from lib.embeddings import Embedder
from lib.objectstore import ObjectStore, open_object_store
from lib.redis_server import redis_client
from lib.registry import PolicyRegistry
from lib.temporal import EffectiveDateResolver
from lib.vectorstore import POLICY_COLLECTION, PolicyVectorStore, open_chroma


@dataclass
class KnowledgeBase:
    settings: Settings
    registry: PolicyRegistry
    resolver: EffectiveDateResolver
    objects: ObjectStore
    vectors: PolicyVectorStore
    embedder: Embedder


def open_kb(settings: Settings | None = None, *, policy_collection: str = POLICY_COLLECTION) -> KnowledgeBase:
    settings = settings or load_settings()
    registry = PolicyRegistry(redis_client(settings))
    return KnowledgeBase(
        settings=settings,
        registry=registry,
        resolver=EffectiveDateResolver(registry),
        objects=open_object_store(settings, create_bucket=True),
        vectors=PolicyVectorStore(open_chroma(settings), policy_collection),
        embedder=Embedder(batch_size=settings.embedding_batch_size),
    )
