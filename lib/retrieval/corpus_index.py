"""The corpus index: one slice of a collection (a policy revision, an application's documents) held in
process memory as loaded from the store, with its dense matrix and its lexical twin, and the exact searches
over several slices at once.

Why in memory: Chroma's where-filtered query costs tens of milliseconds and is approximate; an exact search
over the allowed slices costs about one. A slice is served only under the generation ``stamp`` the caller
read from Redis when it was loaded (``lib.retrieval.index_cache``), so it never answers from content older
than that stamp. How its answers can differ from Chroma's (approximation, ties, rounding, staleness):
``docs/decisions/0001-revision-block-cache.md``.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Callable, Collection, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, TypeVar, cast

import numpy as np

from lib.observability import search_leg
from lib.retrieval.code_pages import CodePages
from lib.retrieval.file_columns import FileTexts
from lib.retrieval.float_rows import FloatRows, float_bounds
from lib.retrieval.lexical import LexicalBlock, TermPostings, bm25_rank
from lib.retrieval.metadata_table import MetadataTable
from lib.retrieval.quantized import CodedQuery, QuantizedVectors, squared_distances
from lib.retrieval.scratch import Scratch, lease
from lib.retrieval.selection import lowest
from lib.stores.chroma import StoredChunk, relevance

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
_FIRST_READ = 32
"""Rows beyond ``n_results`` whose exact vectors the dense leg reads first, by lowest bound: enough that the
``n``-th exact distance rarely leaves another row to read (decision 0037)."""
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


def answer_key(
    query: np.ndarray, n_results: int, indexes: Sequence[CorpusIndex], rows: Rows = None, scope: Hashable = ()
) -> tuple[object, ...]:
    """What a remembered ``exact_search`` answer is filed under: the query vector, ``n_results``, the ``scope``
    that names the row filter ``rows`` and every slice's ``serial``, so it is only reused for the very slices
    that made it."""
    return (query.tobytes(), n_results, scope, *(i.serial for i in indexes))


def lexical_answer_key(
    query: str, n_results: int, indexes: Sequence[CorpusIndex], rows: Rows = None, scope: Hashable = ()
) -> tuple[object, ...]:
    """Like ``answer_key`` for ``lexical_search`` (tagged apart from the dense answers)."""
    return ("lexical", query, n_results, scope, *(i.serial for i in indexes))


HITS = np.dtype([("slice", np.uint32), ("row", np.uint32), ("score", np.float64)])
"""An answer as remembered: per hit, rank order, the position of its slice among the indexes searched, its row
and its score (a squared L2 distance, or a BM25 score): 16 bytes a hit where a chunk costs kilobytes, so the
answers memo keeps these and makes chunks per call."""


@search_leg("dense")
def exact_hits(
    query: np.ndarray,
    n_results: int,
    indexes: Sequence[CorpusIndex],
    rows: Rows = None,
    scope: Hashable = (),
    *,
    pages: CodePages | None = None,
    scratch: Scratch | None = None,
    float_rows: FloatRows | None = None,
) -> np.ndarray:
    """The ``n_results`` rows of ``indexes`` (those ``rows`` allows) nearest to ``query`` by squared L2, as
    ``HITS``, nearest first, ties by id: exact, though the rows are searched by a bound. Each row's bound is no
    greater than its exact distance; the exact distances of about the ``n_results + _FIRST_READ`` lowest bounds
    are computed, then those of every other row whose bound is within the ``n_results``-th exact distance, so no
    row left unread can rank. The bound is the int8 codes' (``QuantizedVectors.lower_bounds``; with ``pages``,
    one product per page, ``lib.retrieval.code_pages``, equal to the last bit), or, with ``float_rows`` and at
    most its ``most_rows`` rows searched (``SMALL_ROWS``), a float32 product over the exact rows held in memory
    (``lib.retrieval.float_rows``); both give the same hits. Python works per slice and per row read, never per
    row searched. ``scope`` names the row filter for the answer memo and is not used here. With ``scratch``, the
    arrays this search works in are borrowed (``lib.retrieval.scratch``)."""
    masks = list(rows) if rows is not None else [None] * len(indexes)
    kept = [
        (p, i, m)
        for p, (i, m) in enumerate(zip(indexes, masks, strict=True))
        if i.ids and i.vectors.dims and (m is None or m.any())
    ]
    if not kept or n_results <= 0:
        return np.zeros(0, HITS)
    starts = np.cumsum([0] + [len(i.ids) for _, i, _ in kept])
    vector = np.asarray(query, dtype=np.float32).reshape(-1)
    held = None
    if float_rows is not None and starts[-1] <= float_rows.most_rows:
        held = float_rows.matrices([(index.serial, index.vectors) for _, index, _ in kept])
    with lease(scratch) as take:
        if held is not None:
            squared_norm = float(vector.astype(np.float64) @ vector.astype(np.float64))
            bounds = np.concatenate(
                [
                    float_bounds(matrix, index.vectors.norms, vector, squared_norm)
                    for matrix, (_, index, _) in zip(held, kept, strict=True)
                ]
            )
            exact = _from_held(held, vector)
        else:
            coded = CodedQuery.of(vector)
            slices = [index.vectors for _, index, _ in kept]
            if pages is not None:
                bounds = pages.lower_bounds(coded, slices, take)
            else:
                bounds = np.concatenate([v.lower_bounds(coded) for v in slices])
            exact = _from_slices(kept, coded.vector)
        for begin, end, (_, _, mask) in zip(starts[:-1].tolist(), starts[1:].tolist(), kept, strict=True):
            if mask is not None:
                bounds[begin:end][~mask] = np.inf
        read = lowest(bounds, n_results + _FIRST_READ, take)
        found = _exact(read, starts, kept, exact)
        if len(found) >= n_results:
            nth = np.partition(np.array([d for d, _, _, _ in found]), n_results - 1)[n_results - 1]
            more = np.flatnonzero(np.less_equal(bounds, nth, out=take(len(bounds), np.bool_)))
            found += _exact(np.setdiff1d(more, read, assume_unique=True), starts, kept, exact)
    ranked = sorted(found)[:n_results]
    return np.array([(at, row, d) for d, _, at, row in ranked], dtype=HITS)


ExactDistances = Callable[[int, list[int]], list[float]]
"""The exact squared distances of some rows (``list[int]``) of the ``int``-th slice kept by a search."""


def _from_slices(kept: Sequence[tuple[int, CorpusIndex, np.ndarray | None]], query: np.ndarray) -> ExactDistances:
    """Exact distances read from each slice's own exact rows (held, or read from its snapshot file)."""
    return lambda owner, rows: kept[owner][1].vectors.distances(rows, query)


def _from_held(matrices: Sequence[np.ndarray], query: np.ndarray) -> ExactDistances:
    """Exact distances of rows of matrices held in memory (``FloatRows``), computed as the slices compute them."""
    return lambda owner, rows: squared_distances(matrices[owner][np.asarray(rows, dtype=np.int64)], query)


def _exact(
    positions: np.ndarray,
    starts: np.ndarray,
    kept: Sequence[tuple[int, CorpusIndex, np.ndarray | None]],
    distances: ExactDistances,
) -> list[tuple[float, str, int, int]]:
    """``(exact distance, id, slice, row)`` of the rows at ``positions`` of the slices ``kept`` laid end to end
    (``starts``: where each begins), reading each slice's exact rows once."""
    owners = np.searchsorted(starts, positions, side="right") - 1
    out: list[tuple[float, str, int, int]] = []
    for owner in np.unique(owners).tolist():
        at, index, _ = kept[owner]
        rows = (positions[owners == owner] - starts[owner]).tolist()
        out += [(d, index.ids[r], at, r) for d, r in zip(distances(owner, rows), rows, strict=True)]
    return out


def chunks_of(hits: np.ndarray, indexes: Sequence[CorpusIndex], *, distances: bool = True) -> list[StoredChunk]:
    """The chunks ``hits`` name in ``indexes`` (the very slices searched), each with its distance when
    ``distances``."""
    made: list[StoredChunk] = []
    new = object.__new__
    for at, row, d in zip(hits["slice"].tolist(), hits["row"].tolist(), hits["score"].tolist(), strict=True):
        index = indexes[at]
        chunk = new(HeldChunk)  # ``index.chunk(row, d)`` without its calls: a search makes about two hundred
        vars(chunk).update(id=index.ids[row], distance=d if distances else None, _index=index, _row=row)
        made.append(chunk)
    return made


def exact_search(
    query: np.ndarray, n_results: int, indexes: Sequence[CorpusIndex], rows: Rows = None, scope: Hashable = ()
) -> list[StoredChunk]:
    """``exact_hits`` as chunks, each carrying its distance."""
    return chunks_of(exact_hits(query, n_results, indexes, rows, scope), indexes)


def _rows_by_id(index: CorpusIndex) -> dict[str, int]:
    return {chunk_id: row for row, chunk_id in enumerate(index.ids)}


def dense_relevances(query: np.ndarray, ids: Collection[str], indexes: Sequence[CorpusIndex]) -> dict[str, float]:
    """``max(0, 1 - L2 distance / 2)`` between ``query`` and each chunk of ``ids`` that ``indexes`` hold, from the
    held vectors (nothing re-embedded): the relevance of a hit the dense leg did not list, such as a lexical hit
    of a hybrid search (spec 000 FR-001's ``relevance_score``), computed as ``exact_search`` computes its own."""
    query = np.asarray(query, dtype=np.float32).reshape(-1)
    wanted = set(ids)
    found: dict[str, float] = {}
    for index in indexes:
        rows = index.derived("rows_by_id", partial(_rows_by_id, index))
        named = sorted(wanted & rows.keys())
        if named and index.vectors.dims:
            distances = index.vectors.distances([rows[i] for i in named], query)
            found.update((i, relevance(d)) for i, d in zip(named, distances, strict=True))
    return found


@dataclass(frozen=True)
class LexicalAnswer:
    """The lexical leg's best chunks with their BM25 scores, and ``ceiling``, the least upper bound of any
    score for that query over the rows searched (``lib.retrieval.lexical.LexicalRanking.ceiling``)."""

    hits: list[tuple[StoredChunk, float]]
    ceiling: float


@dataclass(frozen=True)
class LexicalHits:
    """A ``LexicalAnswer`` as remembered: its hits as ``HITS`` (BM25 scores), and its ceiling."""

    hits: np.ndarray
    ceiling: float

    def answer(self, indexes: Sequence[CorpusIndex]) -> LexicalAnswer:
        """The answer, its chunks made from ``indexes`` (the very slices searched)."""
        chunks = chunks_of(self.hits, indexes, distances=False)
        return LexicalAnswer(list(zip(chunks, self.hits["score"].tolist(), strict=True)), self.ceiling)


def lexical_hits(
    query: str,
    n_results: int,
    indexes: Sequence[CorpusIndex],
    rows: Rows = None,
    scope: Hashable = (),
    *,
    postings: TermPostings | None = None,
    scratch: Scratch | None = None,
) -> LexicalHits:
    """The ``n_results`` rows of ``indexes`` (those ``rows`` allows) best for ``query`` by BM25, with IDF over
    exactly those rows; best first, ties in slice then row order; rows holding no query term never come. With
    ``postings``, each term's postings over these very slices (their serials) are merged once and kept; with
    ``scratch``, the arrays the scoring works in are borrowed."""
    key = tuple(i.serial for i in indexes)
    blocks = [i.lexical for i in indexes]
    hits, ceiling = bm25_rank(query, blocks, n_results, masks=rows, memo=postings, key=key, scratch=scratch)
    return LexicalHits(np.array([(h.block_index, h.row, h.score) for h in hits], dtype=HITS), ceiling)


def lexical_search(
    query: str, n_results: int, indexes: Sequence[CorpusIndex], rows: Rows = None, scope: Hashable = ()
) -> LexicalAnswer:
    """``lexical_hits`` as chunks with their scores."""
    return lexical_hits(query, n_results, indexes, rows, scope).answer(indexes)
