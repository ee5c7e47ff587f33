"""What a process keeps of the governance index to answer queries: the records, each current document's
chunks and vectors, and one lexical index of them all, refreshed when the registry's version moves.

The registry's ``version`` is read on every query (one Redis GET); when it moved, the records are re-read and
only the documents whose current generation this process has not loaded yet are read from Chroma, so a
re-ingested document costs its own chunks, not the corpus. Chunks of a generation the record does not name
(a re-chunking not flipped yet, or one whose old chunks are not deleted yet) are never loaded, which is how
the old chunks stay the ones searched until the flip. Every replica reaches the same state from the same
stores, so any replica answers any query.

The lexical leg is a ``lib.retrieval.segments.SegmentedIndex`` keyed by document id rather than a BM25 block
per document: a query costs a few array operations per segment of ~256 documents instead of a Python step
per document, and a re-ingested document re-tokenises itself and rebuilds its segment only. Its ranking
depends on the documents alone, not on the order they were loaded in.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING

import numpy as np

from lib.governance.in_force import Lifecycle, in_force_ids
from lib.governance.keys import generation_key, search_text
from lib.governance.models import GovernanceRecord
from lib.governance.parsing import header_date
from lib.governance.registry import GovernanceRegistry
from lib.retrieval.dense import stack_columns
from lib.retrieval.segments import SegmentedIndex, Selection
from lib.stores.chroma import StoredChunk
from lib.stores.embedding_model import DIMENSIONS

if TYPE_CHECKING:
    from lib.governance.chunks import GovernanceChunkStore


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
    what the lexical leg may see of ``Catalog.lexical``."""

    key: ViewKey
    documents: np.ndarray
    hidden: np.ndarray | None
    rows: int
    lexical: Selection[str]
    shown: np.ndarray | None
    """The allowed chunk rows in order (``None``: every row), for a copy of just them (``Catalog.rows_of``)."""


@dataclass(frozen=True)
class DocumentBlock:
    """One generation of one document: its chunks in order and their vectors."""

    key: str
    chunks: list[StoredChunk]
    vectors: np.ndarray


@dataclass
class Catalog:
    """The index as of one registry version. ``matrix`` stacks every block's vectors as columns
    (``lib.retrieval.dense.stack_columns``: columns past ``len(owners)`` are zeros); a chunk's row number is
    its column; ``owners[row]`` is the index in ``ids`` of the document that row belongs to and ``offsets[i]``
    where document ``ids[i]`` starts; ``lexical`` holds the chunks of exactly the documents of ``ids``, keyed
    by id."""

    version: int
    records: dict[str, GovernanceRecord]
    lifecycles: dict[str, Lifecycle]
    ids: list[str] = field(default_factory=list)
    blocks: list[DocumentBlock] = field(default_factory=list)
    matrix: np.ndarray = field(default_factory=lambda: np.zeros((DIMENSIONS, 0), np.float32))
    owners: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    offsets: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    lexical: SegmentedIndex[str] = field(default_factory=SegmentedIndex[str])
    position: dict[str, int] = field(default_factory=dict)
    """Index in ``ids`` of each id."""
    _in_force: dict[date, frozenset[str]] = field(default_factory=dict, repr=False)
    _views: dict[ViewKey, CatalogView] = field(default_factory=dict, repr=False)
    _kept: dict[ViewKey, np.ndarray] = field(default_factory=dict, repr=False)
    _asked: dict[ViewKey, int] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

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
        documents = np.asarray(
            [
                index
                for index, doc_id in enumerate(self.ids)
                if (live is None or doc_id in live) and (types is None or self.records[doc_id].type_key in types)
            ],
            dtype=np.int64,
        )
        if len(documents) == len(self.ids):
            return CatalogView(key, documents, None, len(self.owners), self.lexical.select(None), None)
        shown = np.zeros(len(self.ids), dtype=bool)
        shown[documents] = True
        hidden = ~shown[self.owners]
        lexical = self.lexical.select([self.ids[int(i)] for i in documents])
        shown_rows = np.flatnonzero(~hidden)
        return CatalogView(key, documents, hidden, len(shown_rows), lexical, shown_rows)

    def rows_of(self, view: CatalogView) -> np.ndarray | None:
        """A copy of just ``view``'s columns (``stack_columns``), or ``None``: the caller scores the whole matrix
        and masks.
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
            kept = self._kept[view.key] = stack_columns(self.matrix[:, view.shown].T)
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
    """One per process and collection (held by the ``GovernanceChunkStore``'s owner); thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._catalog: Catalog | None = None
        self._blocks: dict[str, DocumentBlock] = {}
        self._lexical: SegmentedIndex[str] = SegmentedIndex()
        self._lexical_blocks: dict[str, str] = {}
        """For each document in ``_lexical``, the block (generation key) it was indexed from."""

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
        keys = {doc_id: generation_key(doc_id, r.generation) for doc_id, r in records.items()}
        missing = [key for key in keys.values() if key not in self._blocks]
        loaded: dict[str, list[tuple[StoredChunk, np.ndarray]]] = {key: [] for key in missing}
        for chunk, vector in store.generation_chunks(missing):
            loaded[str(chunk.metadata.get("doc_gen"))].append((chunk, vector))
        wanted = set(keys.values())
        self._blocks = {key: block for key, block in self._blocks.items() if key in wanted}
        for key, rows in loaded.items():
            rows.sort(key=lambda row: int(row[0].metadata.get("chunk_index", 0)))
            if rows:
                self._blocks[key] = DocumentBlock(
                    key=key,
                    chunks=[chunk for chunk, _ in rows],
                    vectors=np.vstack([vector for _, vector in rows]).astype(np.float32),
                )
        catalog = Catalog(version, records, {doc_id: lifecycle(r) for doc_id, r in records.items()})
        catalog.ids = [doc_id for doc_id in sorted(keys) if keys[doc_id] in self._blocks]
        catalog.position = {doc_id: index for index, doc_id in enumerate(catalog.ids)}
        catalog.blocks = [self._blocks[keys[doc_id]] for doc_id in catalog.ids]
        catalog.lexical = self._lexical_index(catalog.ids, keys)
        if catalog.blocks:
            catalog.matrix = stack_columns(np.vstack([block.vectors for block in catalog.blocks]))
            sizes = np.asarray([len(block.chunks) for block in catalog.blocks], dtype=np.int64)
            catalog.owners = np.repeat(np.arange(len(catalog.blocks), dtype=np.int64), sizes)
            catalog.offsets = np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.int64)
        return catalog

    def _lexical_index(self, ids: list[str], keys: dict[str, str]) -> SegmentedIndex[str]:
        """The lexical index of the documents ``ids`` at their generations ``keys``, updated from the last one:
        only documents whose generation changed are tokenised."""
        changed = {
            doc_id: [search_text(c.metadata, c.text) for c in self._blocks[keys[doc_id]].chunks]
            for doc_id in ids
            if self._lexical_blocks.get(doc_id) != keys[doc_id]
        }
        kept = set(ids)
        removed = [doc_id for doc_id in self._lexical_blocks if doc_id not in kept]
        self._lexical = self._lexical.updated(changed, removed)
        self._lexical_blocks = {doc_id: keys[doc_id] for doc_id in ids}
        return self._lexical
