"""What a process searches of the kb: every registered document's live chunks, as one corpus index
(``lib.retrieval.document_index``: vectors as columns, a segmented lexical index, updated per document).

Derived, never written: each process builds it from Redis and Chroma and serves it while the registry's
generation (``kbn:gen``, bumped in the same write as every registration, note update and tag change) is the one
it was built under. A moved generation re-reads the registry's ``live`` map (one HGETALL) and loads from Chroma
only the documents whose live generation changed. The dense leg is exact rather than Chroma's query because the
live chunk set and the tags filter are chosen by the registry, not by Chroma: both legs apply them before
ranking.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

import numpy as np

from lib.notes.chunks import NoteChunkStore, chunk_id
from lib.notes.registry import NoteRegistry
from lib.retrieval import DocumentChunks, DocumentsIndex
from lib.stores.chroma import StoredChunk

logger = logging.getLogger(__name__)

_READ_BATCH = 2000


@dataclass(frozen=True)
class Snapshot:
    """Every live document under one registry generation (``lib.retrieval.document_index``, keyed by id)."""

    generation: int
    index: DocumentsIndex[int]
    complete: bool = True

    @classmethod
    def after(
        cls,
        previous: Snapshot | None,
        generation: int,
        documents: tuple[DocumentChunks[int], ...],
        *,
        complete: bool = True,
    ) -> Snapshot:
        """The snapshot of ``documents`` (ordered by id), only those ``previous`` did not hold tokenised."""
        return cls(generation, DocumentsIndex.after(previous.index if previous else None, documents), complete)

    @property
    def documents(self) -> tuple[DocumentChunks[int], ...]:
        return self.index.documents

    def chunk(self, document_id: int, position: int) -> StoredChunk:
        return self.index.chunk(document_id, position)


class NoteIndexCache:
    """The current ``Snapshot`` of this process, rebuilt when the registry's generation moves. Thread-safe."""

    def __init__(self) -> None:
        self._snapshot: Snapshot | None = None
        self._lock = threading.Lock()

    def snapshot(self, registry: NoteRegistry, chunks: NoteChunkStore) -> Snapshot:
        generation = registry.generation()  # before the rest: a snapshot is never labelled newer than it is
        with self._lock:
            known = self._snapshot
        if known is not None and known.generation == generation and known.complete:
            return known
        live = registry.live()
        held = {d.key: d for d in known.documents} if known is not None else {}
        stale = {i: spec for i, spec in live.items() if i not in held or held[i].version != spec[0]}
        loaded = _load(chunks, stale)
        documents = tuple(loaded[i] if i in stale else held[i] for i in sorted(live) if i in loaded or i not in stale)
        snapshot = Snapshot.after(known, generation, documents, complete=len(loaded) == len(stale))
        if stale:
            logger.info("notes.index_loaded generation=%d documents=%d loaded=%d", generation, len(live), len(stale))
        with self._lock:
            self._snapshot = snapshot
        return snapshot

    def clear(self) -> None:
        with self._lock:
            self._snapshot = None


def _load(chunks: NoteChunkStore, wanted: dict[int, tuple[int, int]]) -> dict[int, DocumentChunks[int]]:
    """The documents of ``wanted`` (id -> (generation, chunk count)) read from Chroma in batches. A document
    whose chunks are not all there (its generation was replaced and removed meanwhile) is left out."""
    ids = [chunk_id(i, generation, n) for i, (generation, count) in sorted(wanted.items()) for n in range(count)]
    found: dict[str, tuple[StoredChunk, np.ndarray]] = {}
    for start in range(0, len(ids), _READ_BATCH):
        page = chunks.collection.get(
            ids=ids[start : start + _READ_BATCH], include=["documents", "metadatas", "embeddings"]
        )
        vectors = page["embeddings"] if page["embeddings"] is not None else []
        for cid, text, meta, vector in zip(
            page["ids"], page["documents"] or [], page["metadatas"] or [], vectors, strict=True
        ):
            found[cid] = (StoredChunk(cid, text or "", dict(meta or {})), np.asarray(vector, dtype=np.float32))
    out: dict[int, DocumentChunks[int]] = {}
    for document_id, (generation, count) in wanted.items():
        rows = [found.get(chunk_id(document_id, generation, n)) for n in range(count)]
        present = [row for row in rows if row is not None]
        if len(present) < count:
            logger.warning("notes.index_generation_gone document_id=%d generation=%d", document_id, generation)
            continue
        vectors = np.asarray([v for _, v in present], dtype=np.float32).reshape(len(present), -1)
        out[document_id] = DocumentChunks(document_id, generation, tuple(c for c, _ in present), vectors)
    return out
