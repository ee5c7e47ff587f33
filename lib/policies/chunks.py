"""ChromaDB: the ``policy_docs`` collection of policy chunks, their citation metadata and the fast search.

Chunk metadata follows spec 000's appendix (dates as YYYYMMDD integers, ``99991231`` = in force) plus
``chapter``, ``page_numbers`` and ``revision_ref`` (``{source}:{revision_id}``). Searches filter on
``revision_ref`` values resolved from the registry (``lib.policies.temporal``), never on the date metadata
alone: that metadata is kept in step with the registry for readers and audits, but a registry date edit
can never make a search return a chunk of the wrong revision.

Searching (``PolicyVectorStore.search``, ``lexical_search``) answers from the corpus index
(``lib.retrieval.corpus``): one slice per revision, served only while the registry shows the stamp it was loaded
under (``revision_stamp``: ``chunk_count``, ``ingested_at`` and ``chunks_generation``, read on every search
with the registry snapshot) and only if its load returned exactly ``chunk_count`` chunks (a revision mid-write
is never held). Every write here (upsert, delete, metadata sync) ends by telling ``changed``, which moves the
revisions' ``chunks_generation`` (``docs/decisions/0028-write-stamps.md``). Where the slices cannot serve
(over budget, counts that disagree) the dense leg is Chroma's filtered query and the lexical leg indexes the
texts Chroma returns for that one query.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.types import Metadata

from lib.dates import to_int
from lib.models import Chunk
from lib.policies.models import Policy, Revision
from lib.retrieval import (
    DEFAULT_CACHE_BYTES,
    CorpusIndex,
    CorpusIndexes,
    IndexSnapshots,
    LexicalAnswer,
    dense_relevances,
    lexical_search,
    lexical_text,
)
from lib.stores.chroma import ChunkCollection, StoredChunk, relevance, where_all, where_in
from lib.text.printed_pages import stored, stored_list

logger = logging.getLogger(__name__)

POLICY_COLLECTION = "policy_docs"
_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9.\-]+")


def section_id_part(section_ref: str) -> str:
    return _UNSAFE_ID_CHARS.sub("_", section_ref).strip("_") or "section"


def chunk_id(source: str, revision_id: str, section_ref: str, chunk_index: int) -> str:
    """``{source}__{revision_id}__{section_ref}__{chunk_index:03d}`` (spec 000 FR-005), deterministic."""
    return f"{source}__{revision_id}__{section_id_part(section_ref)}__{chunk_index:03d}"


def revision_ref(source: str, revision_id: str) -> str:
    """The ``revision_ref`` metadata value of a revision's chunks (not a Redis key)."""
    return f"{source}:{revision_id}"


def revision_filter(revision_refs: Sequence[str]) -> dict[str, Any]:
    """The where-clause that restricts a query to chunks of the given revisions."""
    return where_in("revision_ref", revision_refs)


def chunk_metadata(chunk: Chunk, policy: Policy, revision: Revision) -> dict[str, str | int]:
    return {
        "source": policy.source,
        "source_title": policy.title,
        "revision_id": revision.revision_id,
        "revision_ref": revision_ref(policy.source, revision.revision_id),
        "version_label": revision.version_label,
        "effective_from": to_int(revision.effective_from),
        "effective_to": to_int(revision.effective_to),
        "section_ref": chunk.section_ref,
        "chapter": chunk.chapter,
        "page_number": chunk.page_number,
        "page_numbers": ",".join(str(p) for p in chunk.page_numbers),
        "chunk_index": chunk.chunk_index,
        "char_count": len(chunk.text),
    }


def section_metadata(chunk: Chunk) -> dict[str, str | int]:
    """What a chunk carries of its section for listing a revision's sections (issue 22): kind, title, the
    page printed where it starts and on each of its pages (``lib.text.printed_pages.stored``: "" where none is
    printed), the policy a paragraph supports ("" for none), last page."""
    return {
        "section_kind": chunk.kind,
        "section_title": chunk.title,
        "printed_page": stored(chunk.printed_page),
        "printed_pages": stored_list(chunk.printed_pages),
        "supports": chunk.supports or "",
        "last_page": chunk.last_page or chunk.page_number,
    }


def policy_lexical_text(metadata: Mapping[str, Any], text: str) -> str:
    """What the lexical leg indexes for a policy chunk: its citation (``section_ref``, e.g. ``Para 116``), a
    policy's name (``Policy LP28``: ``Services and Facilities Within the Community``) and its ``chapter`` before
    its text, so every chunk of a long paragraph answers to the paragraph's number, every chunk of a policy to
    its name and every chunk of a chapter to its heading, not only the first, which starts with them."""
    name = str(metadata.get("section_title", "")) if metadata.get("section_kind") == "policy" else ""
    return lexical_text((str(metadata.get("section_ref", "")), name, str(metadata.get("chapter", ""))), text)


def revision_stamp(revision: Revision) -> Hashable:
    """What must be unchanged for a cached block to still be the revision's chunks: the count its ingestion
    recorded, when, and how many writes or deletions of its chunks the registry has seen since."""
    ingested_at = revision.ingested_at.isoformat() if revision.ingested_at else ""
    return revision.chunk_count, ingested_at, revision.chunks_generation


def revision_count(stamp: Hashable) -> int:
    """The ``chunk_count`` a ``revision_stamp`` carries."""
    count, _, _ = cast(tuple[int, str, int], stamp)
    return count


def chunk_revisions(metadatas: Iterable[Mapping[str, Any]]) -> set[tuple[str, str]]:
    """The (source, revision_id) of every revision the chunks of ``metadatas`` belong to."""
    return {(str(m["source"]), str(m["revision_id"])) for m in metadatas if m and "revision_id" in m}


ChunksChanged = Callable[[set[tuple[str, str]]], None]
"""Told, after a write, every (source, revision_id) whose chunks it wrote or deleted
(``PolicyRegistry.chunks_changed``)."""


class PolicyVectorStore(ChunkCollection):
    """The ``policy_docs`` collection, with the revision-block cache of the fast search."""

    def __init__(
        self,
        client: ClientAPI,
        collection_name: str = POLICY_COLLECTION,
        *,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        clock: Callable[[], float] = time.monotonic,
        changed: ChunksChanged | None = None,
        snapshot_dir: Path | None = None,
    ) -> None:
        """``clock`` (monotonic seconds) ages the cached blocks; tests inject their own. ``changed`` is told of
        every write (``PolicyStores`` passes the registry's ``chunks_changed``, which moves the revisions'
        stamps, so no replica serves an index of chunks that are gone or rewritten). ``snapshot_dir``: where
        loaded blocks are kept on disk for the next start (``lib.retrieval.index_snapshot``); none if unset."""
        super().__init__(client, collection_name)
        self._changed = changed
        self.indexes = CorpusIndexes(
            self._load_block,
            verify=self._block_unchanged,
            cache_bytes=cache_bytes,
            clock=clock,
            snapshots=None if snapshot_dir is None else IndexSnapshots(snapshot_dir, policy_lexical_text),
        )
        """One slice per revision (``lib.retrieval.corpus``); ``cache``, ``loader`` and ``answers`` are its parts."""
        self.cache = self.indexes.cache
        self.loader = self.indexes.loader
        self.answers = self.indexes.answers
        self.exact_searches = 0
        self.fallback_searches = 0
        """How many searches the cache answered and how many went to Chroma (approximate under concurrency;
        for health reports and tests). Counted per leg: a hybrid search counts twice."""

    # -- writes: each one ends by telling ``changed`` which revisions it touched ---------------------

    def upsert(
        self,
        ids: Sequence[str],
        texts: Sequence[str],
        embeddings: Sequence[Sequence[float]],
        metadatas: Sequence[Metadata],
    ) -> None:
        super().upsert(ids, texts, embeddings, metadatas)
        self._tell(chunk_revisions(metadatas))

    def delete_ids(self, ids: Sequence[str]) -> int:
        """Delete ``ids``, reading first which revisions they belong to (writes are rare; searches are not)."""
        touched: set[tuple[str, str]] = set()
        for start in range(0, len(ids), self.max_batch):
            batch = list(ids[start : start + self.max_batch])
            stored = self.collection.get(ids=batch, include=["metadatas"])["metadatas"] or []
            touched |= chunk_revisions(m for m in stored)
        removed = super().delete_ids(ids)
        self._tell(touched)
        return removed

    def _tell(self, revisions: set[tuple[str, str]]) -> None:
        if revisions and self._changed is not None:
            self._changed(revisions)

    def delete_revision(self, source: str, revision_id: str) -> int:
        """Delete every chunk of a revision; 0 when it has none (spec 000 FR-006)."""
        removed = self.delete_ids(self.revision_chunk_ids(source, revision_id))
        logger.info("vectorstore.revision_deleted source=%s revision_id=%s chunks=%d", source, revision_id, removed)
        return removed

    def sync_revision_metadata(self, policy: Policy, revision: Revision) -> int:
        """Rewrite the dates, label and title carried by a revision's chunks after a registry change."""
        ids = self.revision_chunk_ids(policy.source, revision.revision_id)
        patch: Metadata = {
            "effective_from": to_int(revision.effective_from),
            "effective_to": to_int(revision.effective_to),
            "version_label": revision.version_label,
            "source_title": policy.title,
        }
        for start in range(0, len(ids), self.max_batch):
            batch = ids[start : start + self.max_batch]
            self.collection.update(ids=batch, metadatas=[patch] * len(batch))
        if ids:
            self._tell({(policy.source, revision.revision_id)})
        return len(ids)

    # -- reads ------------------------------------------------------------------------------------

    def revision_chunk_ids(self, source: str, revision_id: str) -> list[str]:
        return self.ids({"revision_ref": revision_ref(source, revision_id)})

    def count_revision(self, source: str, revision_id: str) -> int:
        return len(self.revision_chunk_ids(source, revision_id))

    def section_chunks(self, source: str, revision_id: str, section_ref: str) -> list[StoredChunk]:
        """Every chunk of one section of one revision, in document order (exact metadata lookup)."""
        return self._revision_chunks(source, revision_id, "section_ref", section_ref)

    def chapter_chunks(self, source: str, revision_id: str, chapter: str) -> list[StoredChunk]:
        """Every chunk whose ``chapter`` is ``chapter`` (its intro, paragraphs, footnotes), in document order."""
        return self._revision_chunks(source, revision_id, "chapter", chapter)

    def _revision_chunks(self, source: str, revision_id: str, field: str, value: str) -> list[StoredChunk]:
        return self.chunks(where_all({"revision_ref": revision_ref(source, revision_id)}, {field: value}))

    # -- search -----------------------------------------------------------------------------------

    def search(
        self,
        embedding: Sequence[float] | np.ndarray,
        n_results: int,
        revisions: Mapping[str, Revision],
        held: Sequence[CorpusIndex] | None = None,
    ) -> list[StoredChunk]:
        """The ``n_results`` chunks nearest to ``embedding`` among the chunks of ``revisions``
        (``{revision_ref: Revision}``): what ``query(..., revision_filter(revisions))`` returns, faster. ``held``:
        what ``held_blocks(revisions)`` returned for this search, so every leg of one search reads the same
        slices, resolved once (decision 0038)."""
        if not revisions:
            return []
        query = np.asarray(embedding, dtype=np.float32).reshape(-1)
        blocks = held if held is not None else self.held_blocks(revisions)
        if blocks is not None:
            self.exact_searches += 1
            return list(self.indexes.dense(query, n_results, blocks))
        self.fallback_searches += 1
        return self.query(query, n_results, revision_filter(sorted(revisions)))

    def dense_relevances(
        self,
        embedding: Sequence[float] | np.ndarray,
        ids: Collection[str],
        revisions: Mapping[str, Revision],
        held: Sequence[CorpusIndex] | None = None,
    ) -> dict[str, float]:
        """``max(0, 1 - L2 distance / 2)`` of each chunk of ``ids`` (chunks of ``revisions``) to ``embedding``:
        from the held slices (``held``: as ``search``), else from the vectors Chroma stores for just those ids."""
        if not ids:
            return {}
        query = np.asarray(embedding, dtype=np.float32).reshape(-1)
        blocks = held if held is not None else self.held_blocks(revisions)
        if blocks is not None:
            return dense_relevances(query, ids, blocks)
        stored = self.collection.get(ids=list(ids), include=["embeddings"])
        vectors = stored["embeddings"] if stored["embeddings"] is not None else []
        return {
            str(chunk_id): relevance(float(np.sum((np.asarray(vector, dtype=np.float32) - query) ** 2)))
            for chunk_id, vector in zip(stored["ids"], vectors, strict=True)
        }

    def lexical_search(
        self, query: str, n_results: int, revisions: Mapping[str, Revision], held: Sequence[CorpusIndex] | None = None
    ) -> LexicalAnswer:
        """The ``n_results`` chunks of ``revisions`` best for ``query`` by BM25 over exactly those revisions'
        chunks (``lib.retrieval.lexical``); from the cached blocks (``held``: as ``search``), else from the texts
        Chroma returns."""
        if not revisions:
            return LexicalAnswer([], 0.0)
        blocks = held if held is not None else self.held_blocks(revisions)
        if blocks is not None:
            self.exact_searches += 1
            return self.indexes.lexical(query, n_results, blocks)
        self.fallback_searches += 1
        return lexical_search(query, n_results, self._read_blocks(revisions))

    def _read_blocks(self, revisions: Mapping[str, Revision]) -> list[CorpusIndex]:
        """Uncached blocks of ``revisions`` (texts and metadata only, no embeddings), grouped in their order."""
        rows: dict[str, tuple[list[str], list[str], list[Mapping[str, Any]]]] = {key: ([], [], []) for key in revisions}
        for chunk in self.chunks(revision_filter(sorted(revisions))):
            group = rows.get(str(chunk.metadata.get("revision_ref")))
            if group is not None:
                group[0].append(chunk.id)
                group[1].append(chunk.text)
                group[2].append(chunk.metadata)
        return [
            CorpusIndex.from_texts(key, revision_stamp(revisions[key]), ids, texts, metas, policy_lexical_text)
            for key, (ids, texts, metas) in rows.items()
        ]

    def prune_snapshots(self, keys: Collection[str]) -> int:
        """Delete the on-disk snapshots of every revision not in ``keys`` (all the registry holds); how many."""
        snapshots = self.indexes.snapshots
        return 0 if snapshots is None else snapshots.prune(keys)

    def warm(self, revisions: Mapping[str, Revision]) -> int:
        """Load the blocks of ``revisions`` into the cache now, their codes placed in the pages the dense leg
        reads; returns how many are cached."""
        held = self.held_blocks(revisions) or []
        self.indexes.place(held)
        return len(held)

    def held_blocks(self, revisions: Mapping[str, Revision]) -> list[CorpusIndex] | None:
        """Every revision's slice, loading what is missing; ``None`` if they cannot all be held at once
        (over budget, or a revision whose stored chunks do not match its ``chunk_count``)."""
        stamps = {key: revision_stamp(revision) for key, revision in revisions.items()}
        return self.indexes.held(stamps, sum(r.chunk_count for r in revisions.values()))

    def _block_unchanged(self, block: CorpusIndex) -> bool:
        """Whether Chroma still holds exactly ``block``'s chunks (ids, texts, metadata; vectors are not read)."""
        result = self.collection.get(where={"revision_ref": block.key}, include=["documents", "metadatas"])
        return block.holds(
            list(result["ids"]), [t or "" for t in result["documents"] or []], list(result["metadatas"] or [])
        )

    def _load_block(self, key: str, stamp: Hashable) -> CorpusIndex | None:
        result = self.collection.get(where={"revision_ref": key}, include=["embeddings", "documents", "metadatas"])
        ids = list(result["ids"])
        count = revision_count(stamp)
        if len(ids) != count:
            logger.info("vectorstore.block_not_cached revision_ref=%s stored=%d registry=%d", key, len(ids), count)
            return None
        return CorpusIndex.from_embeddings(
            key,
            stamp,
            ids,
            np.asarray(result["embeddings"] if ids else np.zeros((0, 0)), dtype=np.float32),
            texts=[t or "" for t in result["documents"] or []],
            metadatas=[dict(m or {}) for m in result["metadatas"] or []],
            lexical_text=policy_lexical_text,
        )
