"""Searching several slices (``CorpusIndex``) at once: the exact dense leg (``exact_hits``) and the lexical leg
(``lexical_hits``), their answers as ``HITS`` (16 bytes a hit, what the answers memo keeps) and the chunks those
name (``chunks_of``).

Why exact: Chroma's where-filtered query costs tens of milliseconds and is approximate; an exact search over the
allowed slices costs about one, with the same hits on every replica (decision 0037 for the bound that chooses the
rows read, decision 0001 for how the answers can differ from Chroma's).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Sequence
from dataclasses import dataclass
from functools import partial

import numpy as np

from lib.observability import search_leg
from lib.retrieval.code_pages import CodePages
from lib.retrieval.corpus_index import CorpusIndex, HeldChunk, Rows
from lib.retrieval.float_rows import FloatRows, float_bounds
from lib.retrieval.lexical import TermPostings, bm25_rank
from lib.retrieval.quantized import CodedQuery, squared_distances
from lib.retrieval.scratch import Scratch, lease
from lib.retrieval.selection import lowest
from lib.stores.chroma import StoredChunk, relevance

_FIRST_READ = 32
"""Rows beyond ``n_results`` whose exact vectors the dense leg reads first, by lowest bound: enough that the
``n``-th exact distance rarely leaves another row to read (decision 0037)."""


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
