"""The corpus index: one slice of a collection (a policy revision, an application's documents) held in
process memory as loaded from the store, with its dense matrix and its lexical twin; searching several at once
is ``lib.retrieval.slice_search``.

Why in memory: Chroma's where-filtered query costs tens of milliseconds and is approximate; an exact search
over the allowed slices costs about one. A slice is served only under the generation ``stamp`` the caller
read from Redis when it was loaded (``lib.retrieval.index_cache``), so it never answers from content older
than that stamp. How its answers can differ from Chroma's (approximation, ties, rounding, staleness):
``docs/decisions/0001-revision-block-cache.md``.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, TypeVar, cast

import numpy as np

from lib.retrieval.file_columns import FileTexts
from lib.retrieval.lexical import LexicalBlock
from lib.retrieval.metadata_table import MetadataTable
from lib.retrieval.quantized import QuantizedVectors
from lib.stores.chroma import StoredChunk

T = TypeVar("T")

LEXICAL_BYTES_PER_CHAR = 2
"""At most what the lexical twin costs per character of text, before it is built (built: its own ``nbytes``,
~0.5 a character on planning text)."""
ROW_BYTES = 384 + 12 + 384 * 4 + 64 + 800 + 256 + 400
"""About what one chunk held in memory costs: codes, scale, norm and offset, exact vector, id, text (800
characters), metadata and postings (as measured: decision 0037)."""
SNAPSHOT_ROW_BYTES = 384 + 12 + 8 + 64 + 256 + 400
"""The same for a chunk read from its slice's snapshot, whose exact vector and text stay in the file."""
_ID_BYTES = 64
_SERIALS = itertools.count()

Stamp = Hashable
"""What the caller's source of truth (Redis) said about a slice when it was loaded: served only while equal."""
LexicalText = Callable[[Mapping[str, Any], str], str]
"""What the lexical leg indexes for a chunk, from its metadata and text (each domain names its headings)."""
Rows = Sequence[np.ndarray | None] | None
"""Per slice searched, a boolean mask of the rows a search may see (``None``: every row)."""


def plain_text(metadata: Mapping[str, Any], text: str) -> str:
    """The chunk's text alone, for a slice without heading context."""
    return text


@dataclass(frozen=True)
class CorpusIndex:
    """One slice's chunks as loaded, the stamp they were loaded under, and a ``serial`` unique to this load
    (what remembered answers are filed under)."""

    key: str
    stamp: Stamp
    ids: list[str]
    vectors: QuantizedVectors
    """The dense leg's vectors as int8 codes with error bounds, and the exact rows behind them (held, or read from
    the slice's snapshot file): ``lib.retrieval.quantized``, decision 0037."""
    texts: Sequence[str]
    """A list, or ``FileTexts`` read from the slice's snapshot file when asked (``lib.retrieval.file_columns``)."""
    metadatas: MetadataTable
    """Each chunk's metadata as dictionary-encoded columns (a list of dicts given is encoded on construction):
    ``metadatas[row]`` is a new dict each time."""
    lexical_text: LexicalText = field(default=plain_text, compare=False, repr=False)
    serial: int = field(default_factory=lambda: next(_SERIALS))
    _columns: dict[str, np.ndarray] = field(default_factory=dict, compare=False, repr=False)
    _derived: dict[Hashable, Any] = field(default_factory=dict, compare=False, repr=False)

    def __post_init__(self) -> None:
        if not isinstance(self.metadatas, MetadataTable):
            object.__setattr__(self, "metadatas", MetadataTable.from_dicts(self.metadatas))

    @classmethod
    def from_embeddings(
        cls,
        key: str,
        stamp: Stamp,
        ids: list[str],
        embeddings: np.ndarray,
        texts: list[str],
        metadatas: Sequence[Mapping[str, Any]],
        lexical_text: LexicalText = plain_text,
    ) -> CorpusIndex:
        matrix = np.asarray(embeddings, dtype=np.float32).reshape(len(ids), -1) if ids else np.zeros((0, 0), np.float32)
        return cls(key, stamp, ids, QuantizedVectors.of(matrix), texts, _table(metadatas), lexical_text)

    @classmethod
    def from_texts(
        cls,
        key: str,
        stamp: Stamp,
        ids: list[str],
        texts: list[str],
        metadatas: Sequence[Mapping[str, Any]],
        lexical_text: LexicalText = plain_text,
    ) -> CorpusIndex:
        """A slice for the lexical leg only (no vectors): ``vectors`` is empty and never searched."""
        return cls(key, stamp, ids, QuantizedVectors.empty(len(ids)), texts, _table(metadatas), lexical_text)

    def indexed_texts(self) -> list[str]:
        """Each chunk as the lexical twin indexes it (heading context, then text)."""
        return [self.lexical_text(m, t) for t, m in zip(self.texts, self.metadatas, strict=True)]

    @cached_property
    def digest(self) -> str:
        """``index_digest`` of the chunks as indexed: what the consistency audit compares with the store."""
        return index_digest(self.ids, self.indexed_texts())

    @cached_property
    def lexical(self) -> LexicalBlock:
        """The BM25 twin. Built by the loader before any search sees the slice (tokenising a revision would
        otherwise be paid by a search: docs/performance.md › Stack load); two threads may both build it, with
        equal results."""
        return LexicalBlock.build(self.indexed_texts())

    def derived(self, name: Hashable, build: Callable[[], T]) -> T:
        """What ``build`` makes of this slice, made once and kept with it (so it follows the slice's stamp and
        goes when the slice does): e.g. the reading ``verify_quote`` searches. Two threads may both build it."""
        if name not in self._derived:
            self._derived[name] = build()
        return cast(T, self._derived[name])

    def embedding(self, row: int) -> np.ndarray:
        return self.vectors.vector(row)

    def holds(self, ids: Sequence[str], texts: Sequence[str], metadatas: Sequence[Mapping[str, Any]]) -> bool:
        """Whether these rows (any order) are exactly the slice's: same ids, texts and metadata."""
        if len(ids) != len(self.ids):
            return False
        held = dict(zip(self.ids, zip(self.texts, self.metadatas, strict=True), strict=True))
        return all(held.get(i) == (t, m) for i, t, m in zip(ids, texts, metadatas, strict=True))

    def rows_where(self, field_name: str, allowed: frozenset[str] | None) -> np.ndarray | None:
        """The mask of rows whose metadata ``field_name`` is one of ``allowed`` (``None``: every row), from a
        column of that field's values made once per slice from the metadata's codes, so a filter costs one
        ``np.isin``."""
        if allowed is None:
            return None
        column = self._columns.get(field_name)
        if column is None:
            column = self._columns[field_name] = self.metadatas.column(field_name)
        return np.isin(column, list(allowed)) if len(column) else np.zeros(0, dtype=bool)

    @property
    def nbytes(self) -> int:
        """What this slice holds, about: its postings measured once built (the loader builds them before the
        cache sizes it), else estimated from its text."""
        if isinstance(self.texts, FileTexts):
            texts, chars = self.texts.nbytes, self.texts.encoded_size
        else:
            chars = sum(len(t) for t in self.texts)
            texts = chars
        built = self.__dict__.get("lexical")
        postings = built.nbytes if isinstance(built, LexicalBlock) else chars * LEXICAL_BYTES_PER_CHAR
        return self.vectors.nbytes + texts + postings + _ID_BYTES * len(self.ids) + self.metadatas.nbytes

    def chunk(self, row: int, distance: float | None = None) -> StoredChunk:
        """Row ``row`` as a chunk; its text and metadata are read when first asked for (``HeldChunk``)."""
        return HeldChunk(self.ids[row], None, distance, index=self, row=row)

    def documents(self, fields: tuple[str, ...]) -> list[tuple[Any, ...]]:
        """Per row, its metadata's values of ``fields`` (``None`` where it lacks one): what a ranking collapsed
        per document compares (``lib.retrieval.ranking.rank_chunks``), made once per slice and fields rather
        than decoded per candidate per search."""
        column = self._derived.get(("documents", fields))
        return (
            column if column is not None else self.derived(("documents", fields), lambda: self.metadatas.values(fields))
        )


class HeldChunk(StoredChunk):
    """A held slice's chunk whose text and metadata are read from the slice when first asked for, then kept: a
    hybrid search makes ~200 candidate chunks and returns ten, and each text of a slice read from its snapshot is
    a ``pread``. The slice stays referenced (an open snapshot file stays open), so the text is the one searched.
    Equal to the ``StoredChunk`` it stands for; ``dataclasses.replace`` works (it passes ``text`` and
    ``metadata`` itself)."""

    def __init__(
        self,
        id: str,
        metadata: Mapping[str, Any] | None,
        distance: float | None = None,
        text: str | None = None,
        *,
        index: CorpusIndex | None = None,
        row: int = 0,
    ) -> None:
        fields = vars(self)  # frozen: set in place, in one call (a search makes about two hundred)
        fields.update(id=id, distance=distance, _index=index, _row=row)
        if metadata is not None:
            fields["metadata"] = metadata
        if text is not None:
            fields["text"] = text

    def __getattr__(self, name: str) -> Any:
        """``text`` or ``metadata``, read once (only called for attributes not yet set)."""
        if name == "text":
            value: Any = self._index.texts[self._row]
        elif name == "metadata":
            value = self._index.metadatas.row(self._row)
        else:
            raise AttributeError(name)
        object.__setattr__(self, name, value)
        return value

    def document(self, fields: tuple[str, ...]) -> tuple[Any, ...]:
        """``tuple(map(self.metadata.get, fields))``, from the slice's column of them (``CorpusIndex.documents``)."""
        return self._index.documents(fields)[self._row]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, StoredChunk):
            return NotImplemented
        return (self.id, self.text, self.metadata, self.distance) == (
            other.id,
            other.text,
            other.metadata,
            other.distance,
        )

    __hash__ = StoredChunk.__hash__


def _table(metadatas: Sequence[Mapping[str, Any]]) -> MetadataTable:
    return metadatas if isinstance(metadatas, MetadataTable) else MetadataTable.from_dicts(metadatas)


def index_digest(ids: Sequence[str], texts: Sequence[str]) -> str:
    """SHA-256 over ``(id, text)`` pairs in id order: equal exactly when the chunks are, in any order."""
    digest = hashlib.sha256()
    for chunk_id, text in sorted(zip(ids, texts, strict=True)):
        digest.update(f"{len(chunk_id)}:{chunk_id}{len(text)}:{text}".encode())
    return digest.hexdigest()
