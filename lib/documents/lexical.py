"""The lexical leg of application-document search: BM25 blocks derived from what is stored, per application.

A block holds one application's registered chunks as read from ``application_docs`` (texts, the spec's
metadata) and, per document type, a ``lib.retrieval.LexicalBlock`` over their texts, each under its
document's title (``document_lexical_text``: the file's name, the one heading the spec's metadata holds).
A search names the applications its ``application_ref`` filter allows (all of them without one) and the types its
``document_types`` filter allows, and BM25 runs over exactly those type blocks: IDF and average length
come from the chunks that pass the filters, never from others.

Consistency across processes: nothing here is written anywhere; each process derives its blocks from
Redis and Chroma. A block is served while the application's generation in the registry
(``DocumentRegistry.application_generations``, bumped by every registration and removal in the same
script that writes the record) is the one it was built under, and never more than ``MAX_AGE_S`` after it
was loaded (like the policy blocks), so a document ingested or deleted by another process is seen on the
next query, and one written behind the registry's back within 30 s. A block is loaded in the order
generation, registered ids, chunks, so it never holds a chunk whose document was not registered under
the generation it carries. Replicas holding blocks of the same generation rank alike.

Cost: loading an application reads its chunks once (about 1 ms per hundred chunks) and tokenises them;
one ingestion invalidates only its application's block.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any

from cachetools import TTLCache

from lib.retrieval.heading import lexical_text
from lib.retrieval.lexical import LexicalBlock, bm25_rank
from lib.stores.chroma import ChunkCollection, StoredChunk

MAX_AGE_S = 30.0
DEFAULT_CACHE_BYTES = 128 * 1024 * 1024
_CHUNK_OVERHEAD_BYTES = 1024
"""About what a cached chunk costs beyond its text: id, metadata dict, postings."""
_SERIALS = itertools.count()


@dataclass(frozen=True)
class TypeBlock:
    """The chunks of one document type within one application, in load order, and their BM25 index."""

    chunks: tuple[StoredChunk, ...]
    lexical: LexicalBlock


@dataclass(frozen=True)
class ApplicationBlock:
    application_ref: str
    generation: int
    types: dict[str, TypeBlock]
    serial: int = field(default_factory=lambda: next(_SERIALS))

    @property
    def nbytes(self) -> int:
        return sum(
            block.lexical.nbytes + sum(len(c.text) + _CHUNK_OVERHEAD_BYTES for c in block.chunks)
            for block in self.types.values()
        )

    @classmethod
    def build(cls, application_ref: str, generation: int, chunks: Sequence[StoredChunk]) -> ApplicationBlock:
        by_type: dict[str, list[StoredChunk]] = defaultdict(list)
        for chunk in sorted(chunks, key=lambda c: c.id):
            by_type[str(chunk.metadata.get("document_type", ""))].append(chunk)
        types = {
            name: TypeBlock(
                tuple(group), LexicalBlock.build([document_lexical_text(c.metadata, c.text) for c in group])
            )
            for name, group in sorted(by_type.items())
        }
        return cls(application_ref, generation, types)


def document_lexical_text(metadata: Mapping[str, Any], text: str) -> str:
    """What the lexical leg indexes for an application document's chunk: the name of its file without the
    extension, underscores read as spaces (``Flood_Risk_Assessment.pdf`` -> ``Flood Risk Assessment``), then
    its text (``lib.retrieval.heading.lexical_text``), so every chunk answers to the document's title as
    every chunk of a policy answers to its chapter."""
    name = PurePath(str(metadata.get("source_file", ""))).stem.replace("_", " ")
    return lexical_text((name,), text)


def load_application_block(
    chunks: ChunkCollection, application_ref: str, generation: int, registered: set[str]
) -> ApplicationBlock:
    """The block of ``application_ref`` from Chroma: its chunks whose document is in ``registered`` (the
    application's ids, read after ``generation``)."""
    stored = chunks.chunks({"application_ref": application_ref}) if registered else []
    return ApplicationBlock.build(
        application_ref, generation, [c for c in stored if c.metadata.get("document_id") in registered]
    )


class ApplicationBlockCache:
    """Blocks by application, each served while its generation holds and for at most ``max_age_s``; least
    recently used blocks leave first once ``max_bytes`` is reached. Thread-safe; a block too large for the
    budget is used for its query and not kept."""

    def __init__(
        self,
        max_bytes: int = DEFAULT_CACHE_BYTES,
        max_age_s: float = MAX_AGE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._blocks: TTLCache[str, ApplicationBlock] = TTLCache(
            maxsize=max_bytes, ttl=max_age_s, timer=clock, getsizeof=lambda block: max(1, block.nbytes)
        )
        self._refs: tuple[int, list[str]] | None = None
        self._lock = threading.Lock()

    def get(self, application_ref: str, generation: int) -> ApplicationBlock | None:
        with self._lock:
            block = self._blocks.get(application_ref)
        return block if block is not None and block.generation == generation else None

    def put(self, block: ApplicationBlock) -> None:
        with self._lock:
            try:
                self._blocks[block.application_ref] = block
            except ValueError:  # larger than the whole budget
                self._blocks.pop(block.application_ref, None)

    def application_refs(self, generation: int, read: Callable[[], list[str]]) -> list[str]:
        """Every application's reference, read again only when the registry's ``generation`` changed."""
        with self._lock:
            known = self._refs
        if known is not None and known[0] == generation:
            return known[1]
        refs = read()
        with self._lock:
            self._refs = (generation, refs)
        return refs

    def clear(self) -> None:
        with self._lock:
            self._blocks.clear()
            self._refs = None


@dataclass(frozen=True)
class LexicalHits:
    """The lexical leg's best chunks with their BM25 scores, and ``ceiling``, the least upper bound of any
    score for the query over the blocks searched (so ``score / ceiling`` is in 0..1)."""

    hits: list[tuple[StoredChunk, float]]
    ceiling: float


def lexical_search(
    query: str, blocks: Sequence[ApplicationBlock], document_types: Sequence[str] | None, k: int
) -> LexicalHits:
    """BM25 over the type blocks of ``blocks`` that ``document_types`` allows (all without it), best first."""
    allowed = set(document_types) if document_types else None
    searched = [
        block.types[name]
        for block in sorted(blocks, key=lambda b: b.application_ref)
        for name in sorted(block.types)
        if allowed is None or name in allowed
    ]
    found, ceiling = bm25_rank(query, [block.lexical for block in searched], k)
    return LexicalHits([(searched[hit.block_index].chunks[hit.row], hit.score) for hit in found], ceiling)
