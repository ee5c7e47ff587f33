"""The composition root: each domain's stores over clients they share, opened from the settings.

Flows, the MCP servers, the REST API and the CLI call ``open_stores`` once at start-up and hand each domain
its own stores (``stores.policies``, ``stores.documents``, ``stores.notes``, ``stores.governance``). A domain is
opened on first use, so a process opens only what it serves; every domain shares one Redis client, one Chroma
client, one object store and one embedder. Nothing in a domain package imports this module.
"""

from __future__ import annotations

import threading

from chromadb.api import ClientAPI
from redis import Redis

from lib.config import Settings, load_settings
from lib.documents.stores import DocumentStores, open_document_stores
from lib.governance.stores import GovernanceStores, open_governance_stores
from lib.notes.stores import NoteStores, open_note_stores
from lib.paths import ensure_file_roots
from lib.policies.stores import PolicyStores, open_policy_stores
from lib.retrieval import pin_single_blas_thread
from lib.stores.chroma import open_chroma
from lib.stores.embeddings import Embedder, settings_embedder
from lib.stores.objects import ObjectStore, open_object_store
from lib.stores.redis_server import redis_client


class Stores:
    """Every domain's stores, each opened on first use over the shared clients (thread-safe). Stores given
    here are used as they are; ``policy_collection`` and ``document_collection`` name the collections of
    those opened here (default: the settings')."""

    def __init__(
        self,
        settings: Settings,
        *,
        redis: Redis | None = None,
        chroma: ClientAPI | None = None,
        objects: ObjectStore | None = None,
        embedder: Embedder | None = None,
        policies: PolicyStores | None = None,
        documents: DocumentStores | None = None,
        notes: NoteStores | None = None,
        governance: GovernanceStores | None = None,
        policy_collection: str | None = None,
        document_collection: str | None = None,
    ) -> None:
        self.settings = settings
        self._lock = threading.RLock()
        self._redis, self._chroma, self._objects, self._embedder = redis, chroma, objects, embedder
        self._policies, self._documents, self._notes, self._governance = policies, documents, notes, governance
        self._policy_collection, self._document_collection = policy_collection, document_collection

    @property
    def redis(self) -> Redis:
        with self._lock:
            if self._redis is None:
                self._redis = redis_client(self.settings)
            return self._redis

    @property
    def chroma(self) -> ClientAPI:
        with self._lock:
            if self._chroma is None:
                self._chroma = open_chroma(self.settings.chroma)
            return self._chroma

    @property
    def objects(self) -> ObjectStore:
        with self._lock:
            if self._objects is None:
                self._objects = open_object_store(self.settings.objects, create_bucket=True)
            return self._objects

    @property
    def embedder(self) -> Embedder:
        with self._lock:
            if self._embedder is None:
                self._embedder = settings_embedder(self.settings.embeddings)
            return self._embedder

    @property
    def policies(self) -> PolicyStores:
        """Policies in time (specs 000/001)."""
        with self._lock:
            if self._policies is None:
                self._policies = open_policy_stores(
                    self.settings,
                    collection=self._policy_collection,
                    redis=self.redis,
                    chroma=self.chroma,
                    objects=self.objects,
                    embedder=self.embedder,
                )
            return self._policies

    @property
    def documents(self) -> DocumentStores:
        """Application documents (spec 003)."""
        with self._lock:
            if self._documents is None:
                self._documents = open_document_stores(
                    self.settings,
                    collection=self._document_collection,
                    redis=self.redis,
                    chroma=self.chroma,
                    objects=self.objects,
                    embedder=self.embedder,
                )
            return self._documents

    @property
    def notes(self) -> NoteStores:
        """The kb engine's notes and files (spec 002)."""
        with self._lock:
            if self._notes is None:
                self._notes = open_note_stores(
                    self.settings, redis=self.redis, chroma=self.chroma, objects=self.objects, embedder=self.embedder
                )
            return self._notes

    @property
    def governance(self) -> GovernanceStores:
        """Governance documents (spec 004)."""
        with self._lock:
            if self._governance is None:
                self._governance = open_governance_stores(
                    self.settings, redis=self.redis, chroma=self.chroma, embedder=self.embedder
                )
            return self._governance


def open_stores(
    settings: Settings | None = None, *, policy_collection: str | None = None, document_collection: str | None = None
) -> Stores:
    """The stores of ``settings`` (default: the environment's), each domain opened on first use. Pins the
    process's BLAS to one thread when called from the main thread (``lib.retrieval.blas``) and creates the
    default inbox."""
    settings = settings or load_settings()
    pin_single_blas_thread()
    ensure_file_roots(settings)
    return Stores(settings, policy_collection=policy_collection, document_collection=document_collection)
