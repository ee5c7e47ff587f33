"""What a process keeps of the governance index to answer queries: the records and the corpus index of each
current document's chunks (``lib.retrieval.document_index``), refreshed when the registry's version moves.

The registry's ``version`` is read on every query (one Redis GET); when it moved, the records are re-read and
only the documents whose current generation this process has not loaded yet are read from Chroma, so a
re-ingested document costs its own chunks, not the corpus. Chunks of a generation the record does not name
(a re-chunking not flipped yet, or one whose old chunks are not deleted yet) are never loaded, which is how
the old chunks stay the ones searched until the flip. Every replica reaches the same state from the same
stores, so any replica answers any query.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from typing import Any

import numpy as np

from lib.governance.chunks import GovernanceChunkStore
from lib.governance.in_force import Lifecycle, in_force_ids
from lib.governance.keys import generation_key, search_text
from lib.governance.models import GovernanceRecord
from lib.governance.parsing import header_date
from lib.governance.registry import GovernanceRegistry
from lib.retrieval import DocumentChunks, DocumentsIndex, Selection
from lib.stores.chroma import StoredChunk

_IN_FORCE_DAYS = 256
_VIEWS = 64


ViewKey = tuple[date | None, frozenset[str] | None]
"""A filter: the day asked about (``None`` with ``include_inactive``) and the document types (``None``: all)."""


@dataclass(frozen=True)
class CatalogView:
    """What one filter (a day, document types, inactive or not) lets both legs see, worked out once per
    catalog version: agents mostly ask the same thing (today, every type), so a query does no per-document
    work. ``documents`` indexes ``Catalog.ids``; ``hidden`` marks the chunk rows (the matrix's columns) the
    dense leg must not return (``None``: every row passes) and ``rows`` counts the others; ``lexical`` is
    what the lexical leg may see of ``Catalog.index.lexical``."""

    key: ViewKey
    documents: np.ndarray
    hidden: np.ndarray | None
    rows: int
    lexical: Selection[str]
    shown: np.ndarray | None
    """The allowed chunk rows in order (``None``: every row), for a copy of just them (``Catalog.rows_of``)."""


@dataclass
class Catalog:
    """The index as of one registry version: the records, their lifecycles and the corpus index of every
    current document's chunks (``index``, keyed by id: the column matrix, the rows' owners, the lexical
    index)."""

    version: int
    records: dict[str, GovernanceRecord]
    lifecycles: dict[str, Lifecycle]
    index: DocumentsIndex[str] = field(default_factory=DocumentsIndex[str])
    _in_force: dict[date, frozenset[str]] = field(default_factory=dict, repr=False)
    _views: dict[ViewKey, CatalogView] = field(default_factory=dict, repr=False)
    _kept: dict[ViewKey, np.ndarray] = field(default_factory=dict, repr=False)
    _asked: dict[ViewKey, int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def ids(self) -> list[str]:
        return self.index.keys()

    @property
    def matrix(self) -> np.ndarray:
        return self.index.columns

    @property
    def owners(self) -> np.ndarray:
        return self.index.owners

    def in_force(self, day: date) -> frozenset[str]:
        """The ids in force on ``day`` (remembered for this version: agents mostly ask about today)."""
        known = self._in_force.get(day)
        if known is None:
            if len(self._in_force) >= _IN_FORCE_DAYS:
                self._in_force.clear()
            known = self._in_force[day] = frozenset(in_force_ids(self.lifecycles, day))
        return known

    def view(self, day: date, types: frozenset[str] | None, include_inactive: bool) -> CatalogView:
        """The documents in force on ``day`` (any day with ``include_inactive``) of ``types`` (any: ``None``)."""
        key = (None if include_inactive else day, types)
        known = self._views.get(key)
        if known is None:
            if len(self._views) >= _VIEWS:
                self._views.clear()
            known = self._views[key] = self._view(key, day, types, include_inactive)
        return known

    def _view(self, key: ViewKey, day: date, types: frozenset[str] | None, include_inactive: bool) -> CatalogView:
        live = None if include_inactive else self.in_force(day)
        ids = self.ids
        documents = np.asarray(
            [
                index
                for index, doc_id in enumerate(ids)
                if (live is None or doc_id in live) and (types is None or self.records[doc_id].type_key in types)
            ],
            dtype=np.int64,
        )
        if len(documents) == len(ids):
            return CatalogView(key, documents, None, len(self.owners), self.index.lexical.select(None), None)
        shown = np.zeros(len(ids), dtype=bool)
        shown[documents] = True
        hidden = ~shown[self.owners]
        lexical = self.index.lexical.select([ids[int(i)] for i in documents])
        shown_rows = np.flatnonzero(~hidden)
        return CatalogView(key, documents, hidden, len(shown_rows), lexical, shown_rows)

    def rows_of(self, view: CatalogView) -> np.ndarray | None:
        """A copy of just ``view``'s columns (``DocumentsIndex.columns_of``), or ``None``: the caller scores the
        whole matrix and masks.
        Copies are kept for the filters asked for most often in this version (from their second time), within
        the matrix's own size in all, so the usual filter (in force today) scans only its rows, a stream of
        one-off filters (``as_of`` many days) copies nothing, and filters taking turns do not evict each
        other on every query (a copy replaces only copies asked for less often)."""
        if view.shown is None:
            return None
        with self._lock:
            if len(self._asked) >= _VIEWS and view.key not in self._asked:
                self._asked = {key: n for key, n in self._asked.items() if key in self._kept}
            asked = self._asked[view.key] = self._asked.get(view.key, 0) + 1
            kept = self._kept.get(view.key)
            if kept is not None or asked < 2:
                return kept
            size = view.rows * self.matrix.shape[0] * self.matrix.itemsize
            while self._kept and sum(m.nbytes for m in self._kept.values()) + size > self.matrix.nbytes:
                victim = min(self._kept, key=lambda key: self._asked.get(key, 0))
                if self._asked.get(victim, 0) >= asked:
                    return None
                del self._kept[victim]
            kept = self._kept[view.key] = self.index.columns_of(view.shown)
            return kept


def lifecycle(record: GovernanceRecord) -> Lifecycle:
    return Lifecycle(
        id=record.id,
        status=record.status,
        created=header_date(record.created),
        supported_until=header_date(record.supported_until),
        superseded_by=tuple(record.superseded_by),
        replaces=tuple(record.replaces),
    )


class CatalogCache:
    """One per process and collection (held by ``GovernanceStores``); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None
        self._blocks: dict[str, DocumentChunks[str]] = {}
        """Each loaded document by its generation key (``generation_key``)."""
        self._index: DocumentsIndex[str] | None = None

    def current(self, registry: GovernanceRegistry, chunks: GovernanceChunkStore) -> Catalog:
        version = registry.version()
        catalog = self._catalog
        if catalog is not None and catalog.version == version:
            return catalog
        with self._lock:
            if self._catalog is not None and self._catalog.version == version:
                return self._catalog
            version, records = registry.snapshot()
            self._catalog = self._build(version, records, chunks)
            return self._catalog

    def _build(self, version: int, records: dict[str, GovernanceRecord], store: GovernanceChunkStore) -> Catalog:
        """The catalog of ``records``: only generations not loaded yet are read, only documents whose generation
        changed are tokenised again (``DocumentsIndex.after``)."""
        keys = {doc_id: generation_key(doc_id, r.generation) for doc_id, r in records.items()}
        owner = {key: doc_id for doc_id, key in keys.items()}
        missing = [key for key in keys.values() if key not in self._blocks]
        loaded: dict[str, list[tuple[StoredChunk, np.ndarray]]] = {key: [] for key in missing}
        for chunk, vector in store.generation_chunks(missing):
            loaded[str(chunk.metadata.get("doc_gen"))].append((chunk, vector))
        wanted = set(keys.values())
        self._blocks = {key: block for key, block in self._blocks.items() if key in wanted}
        for key, rows in loaded.items():
            rows.sort(key=lambda row: int(row[0].metadata.get("chunk_index", 0)))
            if rows:
                vectors = np.vstack([vector for _, vector in rows]).astype(np.float32)
                self._blocks[key] = DocumentChunks(owner[key], key, tuple(chunk for chunk, _ in rows), vectors)
        documents = [self._blocks[keys[doc_id]] for doc_id in sorted(keys) if keys[doc_id] in self._blocks]
        self._index = DocumentsIndex.after(self._index, documents, _search_text)
        return Catalog(version, records, {doc_id: lifecycle(r) for doc_id, r in records.items()}, self._index)


def _search_text(metadata: Mapping[str, Any], text: str) -> str:
    return search_text(dict(metadata), text)
