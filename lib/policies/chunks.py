"""ChromaDB: the ``policy_docs`` collection of policy chunks, their citation metadata and the fast search.

Chunk metadata follows spec 000's appendix (dates as YYYYMMDD integers, ``99991231`` = in force) plus
``chapter``, ``page_numbers`` and ``revision_ref`` (``{source}:{revision_id}``). Searches filter on
``revision_ref`` values resolved from the registry (``lib.policies.temporal``), never on the date metadata
alone: that metadata is kept in step with the registry for readers and audits, but a registry date edit
can never make a search return a chunk of the wrong revision.

Searching (``PolicyVectorStore.search``) answers from process memory: the chunks of each allowed revision
are held as one block (``lib.stores.block_cache``, where the cases in which its answer can differ from
Chroma's are listed) and searched exactly. A revision's block is used only while the registry shows the
``chunk_count`` and ``ingested_at`` it was loaded under, and only if that load returned exactly
``chunk_count`` chunks (a revision mid-write is never cached). Every write of a revision's chunks goes
through ``lib.policies.ingest`` (ingestion, reindex, the audit's re-ingest repair), which ends by recording
a new ``ingested_at``; removal takes the revision out of the registry first. So the registry stamp, read
on every search (``PolicyRegistry.snapshot``), says when a block is out of date, in every replica, without
asking Chroma. Where the blocks cannot serve (over budget, counts that disagree) the search runs as
Chroma's filtered query instead. A block is also reloaded once it is 30 s old, which bounds how late a
change made behind the pipeline's back is seen; one in use is reloaded in the background a little before,
and a missing block is loaded once however many searches want it (``lib.stores.block_loader``). The last
answers are remembered per query vector and searched blocks (``PolicyVectorStore.answers``, a
``cachetools`` memo), the lexical leg's per query text.

The lexical leg (``PolicyVectorStore.lexical_search``, BM25) runs over the same blocks' lexical twins, so
both legs see the same revisions' chunks as loaded. Where the blocks cannot serve, it reads the allowed
revisions' texts from Chroma and indexes them for that one query, per revision, which ranks exactly as the
blocks would but costs the tokenisation of every chunk read (about 0.1 s per 1,000 chunks).
``tests/mcp_service/test_search_fast_path.py`` checks the fast search against Chroma's on the real NPPF.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from cachetools import LRUCache, cached
from chromadb.api import ClientAPI
from chromadb.api.types import Metadata

from lib.dates import to_int
from lib.models import Chunk
from lib.policies.models import Policy, Revision
from lib.stores.block_cache import (
    DEFAULT_CACHE_BYTES,
    DEFAULT_MAX_AGE_S,
    LexicalAnswer,
    RevisionBlock,
    RevisionBlockCache,
    Stamp,
    answer_key,
    exact_search,
    lexical_answer_key,
    lexical_search,
)
from lib.stores.block_loader import BlockLoader
from lib.stores.chroma import ChunkCollection, StoredChunk, where_all, where_in

logger = logging.getLogger(__name__)

POLICY_COLLECTION = "policy_docs"
ANSWERS_REMEMBERED = 1024
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


def revision_stamp(revision: Revision) -> Stamp:
    """What must be unchanged for a cached block to still be the revision's chunks."""
    return revision.chunk_count, revision.ingested_at.isoformat() if revision.ingested_at else ""


class PolicyVectorStore(ChunkCollection):
    """The ``policy_docs`` collection, with the revision-block cache of the fast search."""

    def __init__(
        self,
        client: ClientAPI,
        collection_name: str = POLICY_COLLECTION,
        *,
        cache_bytes: int = DEFAULT_CACHE_BYTES,
        cache_max_age_s: float = DEFAULT_MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        """``clock`` (monotonic seconds) ages the cached blocks; tests inject their own."""
        super().__init__(client, collection_name)
        self.cache = RevisionBlockCache(cache_bytes, max_age_s=cache_max_age_s, clock=clock)
        self.loader = BlockLoader(self.cache, self._load_block, verify=self._block_unchanged, clock=clock)
        """Loads each missing block once however many searches want it, and refreshes blocks in use before
        they expire (``lib.stores.block_loader``)."""
        self.answers: LRUCache[tuple[object, ...], list[StoredChunk] | LexicalAnswer] = LRUCache(
            ANSWERS_REMEMBERED if cache_bytes else 0
        )
        """The last answers of the exact search, filed by ``answer_key``. Kept because they measurably pay: on
        ``benchmarks/query_latency.py``'s 21k chunks, with its 20 questions asked again at random dates, in
        process, ``search_policy`` p50 / p95 without and with them: dated 1.17 / 1.44 -> 0.19 / 0.25 ms (1 thread),
        4.85 / 9.01 -> 0.97 / 2.68 ms (4 threads); undated 4.46 / 5.58 -> 0.30 / 0.54 ms (1 thread). Over MCP the
        service's CPU per dated call went from 2.99 to 2.09 ms (undated 5.55 to 2.26). A review agent asks the
        same checklist of every application, and every date in a revision's range resolves to the same blocks."""
        lock = threading.Lock()
        self._remembered_search = cached(self.answers, key=answer_key, lock=lock)(exact_search)
        self._remembered_lexical = cached(self.answers, key=lexical_answer_key, lock=lock)(lexical_search)
        self.exact_searches = 0
        self.fallback_searches = 0
        """How many searches the cache answered and how many went to Chroma (approximate under concurrency;
        for health reports and tests). Counted per leg: a hybrid search counts twice."""

    # -- writes -----------------------------------------------------------------------------------

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
        self, embedding: Sequence[float] | np.ndarray, n_results: int, revisions: Mapping[str, Revision]
    ) -> list[StoredChunk]:
        """The ``n_results`` chunks nearest to ``embedding`` among the chunks of ``revisions``
        (``{revision_ref: Revision}``): what ``query(..., revision_filter(revisions))`` returns, faster."""
        if not revisions:
            return []
        query = np.asarray(embedding, dtype=np.float32).reshape(-1)
        blocks = self._cached_blocks(revisions)
        if blocks is not None:
            self.exact_searches += 1
            return list(self._remembered_search(query, n_results, blocks))
        self.fallback_searches += 1
        return self.query(query, n_results, revision_filter(sorted(revisions)))

    def lexical_search(self, query: str, n_results: int, revisions: Mapping[str, Revision]) -> LexicalAnswer:
        """The ``n_results`` chunks of ``revisions`` best for ``query`` by BM25 over exactly those revisions'
        chunks (``lib.retrieval.lexical``); from the cached blocks, else from the texts Chroma returns."""
        if not revisions:
            return LexicalAnswer([], 0.0)
        blocks = self._cached_blocks(revisions)
        if blocks is not None:
            self.exact_searches += 1
            return self._remembered_lexical(query, n_results, blocks)
        self.fallback_searches += 1
        return lexical_search(query, n_results, self._read_blocks(revisions))

    def _read_blocks(self, revisions: Mapping[str, Revision]) -> list[RevisionBlock]:
        """Uncached blocks of ``revisions`` (texts and metadata only, no embeddings), grouped in their order."""
        rows: dict[str, tuple[list[str], list[str], list[dict[str, Any]]]] = {key: ([], [], []) for key in revisions}
        for chunk in self.chunks(revision_filter(sorted(revisions))):
            group = rows.get(str(chunk.metadata.get("revision_ref")))
            if group is not None:
                group[0].append(chunk.id)
                group[1].append(chunk.text)
                group[2].append(chunk.metadata)
        return [
            RevisionBlock.from_texts(key, revision_stamp(revisions[key]), ids, texts, metas)
            for key, (ids, texts, metas) in rows.items()
        ]

    def warm(self, revisions: Mapping[str, Revision]) -> int:
        """Load the blocks of ``revisions`` into the cache now; returns how many are cached."""
        return len(self._cached_blocks(revisions) or [])

    def _cached_blocks(self, revisions: Mapping[str, Revision]) -> list[RevisionBlock] | None:
        """Every revision's block, loading what is missing; ``None`` if they cannot all be cached at once
        (over budget, or a revision whose stored chunks do not match its ``chunk_count``)."""
        if not self.cache.fits(sum(r.chunk_count for r in revisions.values())):
            return None
        blocks = []
        for key, revision in revisions.items():
            block = self.loader.get(key, revision_stamp(revision))
            if block is None:
                return None
            blocks.append(block)
        return blocks

    def _block_unchanged(self, block: RevisionBlock) -> bool:
        """Whether Chroma still holds exactly ``block``'s chunks (ids, texts, metadata; vectors are not read)."""
        result = self.collection.get(where={"revision_ref": block.key}, include=["documents", "metadatas"])
        return block.holds(
            list(result["ids"]), [t or "" for t in result["documents"] or []], list(result["metadatas"] or [])
        )

    def _load_block(self, key: str, stamp: Stamp) -> RevisionBlock | None:
        result = self.collection.get(where={"revision_ref": key}, include=["embeddings", "documents", "metadatas"])
        ids = list(result["ids"])
        if len(ids) != stamp[0]:
            logger.info("vectorstore.block_not_cached revision_ref=%s stored=%d registry=%d", key, len(ids), stamp[0])
            return None
        return RevisionBlock.from_embeddings(
            key, stamp, ids, np.asarray(result["embeddings"] if ids else np.zeros((0, 0)), dtype=np.float32),
            texts=[t or "" for t in result["documents"] or []],
            metadatas=[dict(m or {}) for m in result["metadatas"] or []],
        )  # fmt: skip
