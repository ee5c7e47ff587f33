"""The corpus index of application documents: one slice per application (``lib.retrieval.corpus``), its
registered chunks with their vectors, and what the lexical leg indexes for each (``document_lexical_text``).

A slice is served while the application's generation in the registry (``DocumentRegistry.application_generations``,
bumped by every registration and removal in the same script that writes the record) is the one it was loaded
under: a document ingested or deleted by another process is seen on the next query. A slice is loaded in the
order generation, registered ids, chunks, so it never holds a chunk whose document was not registered under
the generation it carries (chunks are written before a registration and removed after an unregistration).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Hashable, Mapping
from pathlib import PurePath
from typing import Any

import numpy as np

from lib.retrieval import CorpusIndex, CorpusIndexes, lexical_text
from lib.stores.chroma import ChunkCollection

logger = logging.getLogger(__name__)

DEFAULT_CACHE_BYTES = 128 * 1024 * 1024

Registered = Callable[[str], set[str]]
"""An application's registered document ids, read from the registry now."""


def document_lexical_text(metadata: Mapping[str, Any], text: str) -> str:
    """What the lexical leg indexes for an application document's chunk: the name of its file without the
    extension, underscores read as spaces (``Flood_Risk_Assessment.pdf`` -> ``Flood Risk Assessment``), then
    its text, so every chunk answers to the document's title as every chunk of a policy to its chapter."""
    name = PurePath(str(metadata.get("source_file", ""))).stem.replace("_", " ")
    return lexical_text((name,), text)


class ApplicationIndexes:
    """The slices of ``application_docs`` this process holds, one per application, keyed by its reference."""

    def __init__(self, chunks: ChunkCollection, registered: Registered, cache_bytes: int = DEFAULT_CACHE_BYTES):
        self._chunks = chunks
        self._registered = registered
        self.indexes = CorpusIndexes(self.load, verify=self._unchanged, cache_bytes=cache_bytes)
        self._refs: tuple[int, list[str]] | None = None
        self._lock = threading.Lock()

    def held(self, stamps: Mapping[str, Hashable]) -> list[CorpusIndex]:
        """The slice of every application of ``stamps`` (reference -> generation), in order: held ones, else
        loaded (and kept within the budget; a slice over it is loaded again for this query alone)."""
        return [self.indexes.loader.get(key, stamp) or self.load(key, stamp) for key, stamp in stamps.items()]

    def application_refs(self, generation: int, read: Callable[[], list[str]]) -> list[str]:
        """Every application's reference, read again only when the registry's ``generation`` moved."""
        with self._lock:
            known = self._refs
        if known is not None and known[0] == generation:
            return known[1]
        refs = read()
        with self._lock:
            self._refs = (generation, refs)
        return refs

    def load(self, application_ref: str, stamp: Hashable) -> CorpusIndex:
        """The slice of ``application_ref`` from Chroma: the chunks of its documents registered now (read after
        the generation ``stamp``, so never older than it says), in id order, with their vectors."""
        registered = self._registered(application_ref)
        result: Any = (
            self._chunks.collection.get(
                where={"application_ref": application_ref}, include=["embeddings", "documents", "metadatas"]
            )
            if registered
            else {"ids": [], "documents": [], "metadatas": [], "embeddings": []}
        )
        vectors = result["embeddings"] if result["embeddings"] is not None else []
        rows = sorted(
            (cid, text or "", dict(meta or {}), vector)
            for cid, text, meta, vector in zip(
                result["ids"], result["documents"] or [], result["metadatas"] or [], vectors, strict=True
            )
            if (meta or {}).get("document_id") in registered
        )
        logger.info(
            "documents.index_loaded application_ref=%s generation=%s chunks=%d", application_ref, stamp, len(rows)
        )
        return CorpusIndex.from_embeddings(
            application_ref,
            stamp,
            [r[0] for r in rows],
            np.asarray([r[3] for r in rows], dtype=np.float32) if rows else np.zeros((0, 0), np.float32),
            [r[1] for r in rows],
            [r[2] for r in rows],
            document_lexical_text,
        )

    def _unchanged(self, index: CorpusIndex) -> bool:
        """Whether Chroma and the registry still give exactly ``index``'s rows (no vectors read)."""
        registered = self._registered(index.key)
        found: Any = self._chunks.collection.get(
            where={"application_ref": index.key}, include=["documents", "metadatas"]
        )
        rows = [
            (cid, text or "", dict(meta or {}))
            for cid, text, meta in zip(found["ids"], found["documents"] or [], found["metadatas"] or [], strict=True)
            if (meta or {}).get("document_id") in registered
        ]
        return index.holds([r[0] for r in rows], [r[1] for r in rows], [r[2] for r in rows])
