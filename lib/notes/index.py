"""What a process searches: every registered document's live chunks, their vectors and one lexical index.

Derived, never written: each process builds it from Redis and Chroma and serves it while the registry's
generation (``kbn:gen``, bumped in the same write as every registration, note update and tag change) is
the one it was built under. A moved generation re-reads the registry's ``live`` map (one HGETALL) and
loads from Chroma only the documents whose live generation changed, so one new note costs one document's
read and tokenisation, not the collection's.

The lexical leg is a ``lib.retrieval.segments.SegmentedIndex`` keyed by document id (segments of ~256
notes), not a BM25 block per note: a query then costs a few array operations per segment rather than a
Python step per note (at 10,000 notes ~350 ms per query became a few ms), and a changed note rebuilds one
segment from kept tokens. Its ranking is a function of the documents alone, not of how the segments came
to be, so every replica ranks alike.

Why the dense leg is an exact search here rather than Chroma's query: the live chunk set of a note is
chosen by the registry, not by Chroma (during an update both generations are stored), and the tags filter
is a set of ids from Redis; scoring exactly the live vectors of the allowed documents applies both before
ranking, as the lexical leg does, and never lets hidden chunks crowd the candidates out. A matrix-vector
product over tens of thousands of 384-dimensional vectors (kept as columns, ``lib.retrieval.dense``) takes
about a millisecond.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from lib.notes.chunks import NoteChunkStore, chunk_id
from lib.notes.registry import NoteRegistry
from lib.retrieval.dense import stack_columns
from lib.retrieval.segments import SegmentedIndex
from lib.stores.chroma import StoredChunk
from lib.stores.embedding_model import DIMENSIONS

logger = logging.getLogger(__name__)

_READ_BATCH = 2000


@dataclass(frozen=True)
class DocumentIndex:
    """One generation of one document: its chunks in index order and their vectors."""

    document_id: int
    generation: int
    chunks: tuple[StoredChunk, ...]
    vectors: np.ndarray


@dataclass(frozen=True)
class Snapshot:
    """Every live document under one registry generation, ordered by id, and their lexical index."""

    generation: int
    documents: tuple[DocumentIndex, ...]
    lexical: SegmentedIndex[int]
    complete: bool = True

    @classmethod
    def after(
        cls, previous: Snapshot | None, generation: int, documents: tuple[DocumentIndex, ...], *, complete: bool = True
    ) -> Snapshot:
        """The snapshot of ``documents`` (ordered by id), its lexical index updated from ``previous``'s: only the
        documents that are not the very ``DocumentIndex`` ``previous`` held are tokenised, the gone ones dropped."""
        held = {d.document_id: d for d in previous.documents} if previous is not None else {}
        changed = {d.document_id: [c.text for c in d.chunks] for d in documents if held.get(d.document_id) is not d}
        kept = {d.document_id for d in documents}
        lexical = previous.lexical if previous is not None else SegmentedIndex[int]()
        return cls(generation, documents, lexical.updated(changed, [i for i in held if i not in kept]), complete)

    @cached_property
    def columns(self) -> np.ndarray:
        """Every live chunk's vector as a column, documents in order (``lib.retrieval.dense.stack_columns``:
        ``(dims, rows + padding)``); row ``i`` of the snapshot is column ``i``."""
        parts = [d.vectors for d in self.documents if len(d.chunks)]
        if not parts:
            return np.zeros((DIMENSIONS, 0), dtype=np.float32)
        return stack_columns(np.vstack(parts))

    @property
    def rows(self) -> int:
        """How many live chunks the snapshot holds."""
        return len(self.owners)

    @cached_property
    def owners(self) -> np.ndarray:
        """For each row, the position of its document in ``documents``."""
        return np.repeat(np.arange(len(self.documents)), [len(d.chunks) for d in self.documents])

    @cached_property
    def row_ids(self) -> np.ndarray:
        """For each row, its document's id."""
        return np.asarray([d.document_id for d in self.documents], dtype=np.int64)[self.owners]

    @cached_property
    def offsets(self) -> np.ndarray:
        """Where each document's rows start."""
        return np.concatenate([[0], np.cumsum([len(d.chunks) for d in self.documents])]).astype(np.int64)

    @cached_property
    def by_id(self) -> dict[int, DocumentIndex]:
        return {d.document_id: d for d in self.documents}

    def chunk(self, document_id: int, position: int) -> StoredChunk:
        return self.by_id[document_id].chunks[position]

    def chunk_at(self, row: int) -> StoredChunk:
        """The chunk of ``row``."""
        owner = int(self.owners[row])
        return self.documents[owner].chunks[row - int(self.offsets[owner])]


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
        held = {d.document_id: d for d in known.documents} if known is not None else {}
        stale = {i: spec for i, spec in live.items() if i not in held or held[i].generation != spec[0]}
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


def _load(chunks: NoteChunkStore, wanted: dict[int, tuple[int, int]]) -> dict[int, DocumentIndex]:
    """The documents of ``wanted`` (id -> (generation, chunk count)) read from Chroma in batches. A document
    whose chunks are not all there (its generation was replaced and removed meanwhile) is left out."""
    ids = [chunk_id(i, generation, n) for i, (generation, count) in sorted(wanted.items()) for n in range(count)]
    found: dict[str, tuple[StoredChunk, np.ndarray]] = {}
    for start in range(0, len(ids), _READ_BATCH):
        page = chunks.collection.get(ids=ids[start : start + _READ_BATCH], include=["documents", "metadatas",
                                                                                  "embeddings"])  # fmt: skip
        vectors = page["embeddings"] if page["embeddings"] is not None else []
        for cid, text, meta, vector in zip(
            page["ids"], page["documents"] or [], page["metadatas"] or [], vectors, strict=True
        ):
            found[cid] = (StoredChunk(cid, text or "", dict(meta or {})), np.asarray(vector, dtype=np.float32))
    out: dict[int, DocumentIndex] = {}
    for document_id, (generation, count) in wanted.items():
        rows = [found.get(chunk_id(document_id, generation, n)) for n in range(count)]
        present = [row for row in rows if row is not None]
        if len(present) < count:
            logger.warning("notes.index_generation_gone document_id=%d generation=%d", document_id, generation)
            continue
        vectors = np.asarray([v for _, v in present], dtype=np.float32).reshape(len(present), -1)
        out[document_id] = DocumentIndex(document_id, generation, tuple(c for c, _ in present), vectors)
    return out
