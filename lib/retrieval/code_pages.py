"""The int8 codes of many slices laid side by side in wide pages, so the dense leg takes one product per page
instead of one per slice.

Why: onnxruntime's int8 product runs faster over a page of tens of thousands of columns than over one slice's
two thousand, and each per-slice call adds Python work of its own (decision 0039). A slice's codes, scales, norms and
offsets are copied into a page when a warm-up loads the slice, or else the first time a search needs them. The
slice's ``QuantizedVectors`` then reads its columns there (``QuantizedVectors.moved_to``): nothing is held twice.

Columns come back when their slice is gone (a ``weakref.finalize`` queues them, and the next placement takes
them; a finaliser never takes the lock, which the collecting thread may hold). A page left empty is dropped; one
left under half used has its slices moved into other pages first. A dropped page is left to the collector: a
search still computing over it holds it, and its columns are never written again, so a bound it computed is
never from another slice's codes.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from lib.retrieval.int8_product import int8_scores
from lib.retrieval.quantized import CodedQuery, QuantizedVectors, coded_distances
from lib.retrieval.scratch import Take, fresh

MAX_COLUMNS = 1 << 17
"""The widest page: the product's speed per column levels off around here (decision 0039)."""
MIN_COLUMNS = 1 << 12
"""The narrowest page: a small collection holds a page about its own size, never much more."""


@dataclass(eq=False)
class Page:
    """Columns ``(dims, width)`` of codes and their per-column ``offsets``, ``scales`` and ``norms``; ``free``
    holds the unused ranges as ``(start, width)``, ``live`` the columns slices hold."""

    codes: np.ndarray
    offsets: np.ndarray
    scales: np.ndarray
    norms: np.ndarray
    free: list[tuple[int, int]] = field(default_factory=list)
    live: int = 0

    @classmethod
    def empty(cls, dims: int, width: int) -> Page:
        return cls(
            np.zeros((dims, width), np.int8),
            np.zeros(width, np.int32),
            np.zeros(width, np.float32),
            np.zeros(width, np.float32),
            [(0, width)],
        )

    @property
    def width(self) -> int:
        return int(self.codes.shape[1])

    @property
    def used(self) -> int:
        """The columns up to the end of the last one ever taken (the free range at the end not counted)."""
        if self.free and self.free[-1][0] + self.free[-1][1] == self.width:
            return self.free[-1][0]
        return self.width

    def take(self, rows: int) -> int | None:
        """The start of ``rows`` free columns, now taken (the first range they fit), or ``None``."""
        for at, (start, width) in enumerate(self.free):
            if width >= rows:
                self.free[at : at + 1] = [(start + rows, width - rows)] if width > rows else []
                self.live += rows
                return start
        return None

    def give_back(self, start: int, rows: int) -> None:
        """Columns ``start .. start + rows`` free again, merged with the free ranges beside them."""
        self.live -= rows
        spans = sorted([*self.free, (start, rows)])
        merged: list[tuple[int, int]] = []
        for begin, width in spans:
            if merged and merged[-1][0] + merged[-1][1] == begin:
                merged[-1] = (merged[-1][0], merged[-1][1] + width)
            else:
                merged.append((begin, width))
        self.free = merged


@dataclass(frozen=True)
class Placement:
    """Where a slice's columns are: its ``page`` and first column."""

    page: Page
    start: int
    rows: int


class CodePages:
    """The pages of one collection's slices in this process (thread-safe)."""

    def __init__(self, max_columns: int = MAX_COLUMNS, min_columns: int = MIN_COLUMNS) -> None:
        self.max_columns = max_columns
        self.min_columns = min_columns
        self._pages: dict[int, list[Page]] = {}  # by dims
        self._members: dict[int, _Member] = {}  # by token, one per slice placed
        self._tokens: dict[int, int] = {}  # id(vectors) -> token
        self._gone: deque[int] = deque()  # tokens of slices collected since: their columns are free
        self._serial = itertools.count()
        self._lock = threading.Lock()

    def columns(self) -> tuple[int, int, int]:
        """``(pages, live columns, allocated columns)``."""
        with self._lock:
            self._reclaim()
            pages = [page for per_dims in self._pages.values() for page in per_dims]
            return len(pages), sum(p.live for p in pages), sum(p.width for p in pages)

    def lower_bounds(self, query: CodedQuery, slices: Sequence[QuantizedVectors], take: Take = fresh) -> np.ndarray:
        """``QuantizedVectors.lower_bounds`` of ``slices``, laid end to end in their order (equal to the last
        bit), from one product per page they are placed in; a slice not yet placed is placed first. The page's
        products and distances, and the bounds, are arrays ``take`` gives (``lib.retrieval.scratch``)."""
        placements = self.place(slices)
        bounds = take(sum(where.rows for where in placements), np.float32)
        on_page: dict[int, list[int]] = {}
        for at, where in enumerate(placements):
            on_page.setdefault(id(where.page), []).append(at)
        widest = max((where.page.width for where in placements), default=0)
        products_of, distances_of, norms_of = take(widest, np.int32), take(widest, np.float32), take(widest, np.float32)
        starts = np.cumsum([0] + [where.rows for where in placements]).tolist()
        for members in on_page.values():
            page = placements[members[0]].page
            products = int8_scores(query.codes, page.codes, page.offsets, out=products_of[: page.width])
            distances = coded_distances(
                products, page.scales, page.norms, query, distances_of[: page.width], norms_of[: page.width]
            )
            for at in members:
                where, begin = placements[at], starts[at]
                np.add(
                    distances[where.start : where.start + where.rows],
                    slices[at].margin_term(query),
                    out=bounds[begin : begin + where.rows],
                )
        return bounds

    def place(self, slices: Sequence[QuantizedVectors]) -> list[Placement]:
        """Where each of ``slices`` is, placing those that are not yet."""
        with self._lock:
            self._reclaim()
            return [self._placement(vectors) for vectors in slices]

    def _placement(self, vectors: QuantizedVectors) -> Placement:
        token = self._tokens.get(id(vectors))
        if token is not None:
            member = self._members[token]
            if member.vectors() is vectors:
                return member.where
            self._free(token)  # a collected slice whose id was given to this one before its columns came back
        token = next(self._serial)
        where = self._put(vectors)
        self._members[token] = _Member(where, weakref.ref(vectors), id(vectors))
        self._tokens[id(vectors)] = token
        weakref.finalize(vectors, self._gone.append, token)
        return where

    def _put(self, vectors: QuantizedVectors) -> Placement:
        """Copy ``vectors`` into free columns (a new page if none fit) and point it at them."""
        rows, pages = vectors.rows, self._pages.setdefault(vectors.dims, [])
        for page in pages:
            start = page.take(rows)
            if start is not None:
                break
        else:
            live = sum(p.live for p in pages)
            page = Page.empty(vectors.dims, max(rows, min(self.max_columns, max(self.min_columns, live))))
            pages.append(page)
            start = page.take(rows)
            assert start is not None
        end = start + rows
        page.codes[:, start:end] = vectors.codes
        page.offsets[start:end] = vectors.offsets
        page.scales[start:end] = vectors.scales
        page.norms[start:end] = vectors.norms
        vectors.moved_to(
            page.codes[:, start:end], page.offsets[start:end], page.scales[start:end], page.norms[start:end]
        )
        return Placement(page, start, rows)

    def _free(self, token: int) -> Page | None:
        member = self._members.pop(token, None)
        if member is None:
            return None
        if self._tokens.get(member.key) == token:
            del self._tokens[member.key]
        member.where.page.give_back(member.where.start, member.where.rows)
        return member.where.page

    def _reclaim(self) -> None:
        """Free the columns of every slice collected since; drop a page left empty, and move the slices out of one
        left under half used."""
        emptied = {}
        while self._gone:
            page = self._free(self._gone.popleft())
            if page is not None:
                emptied[id(page)] = page
        for page in emptied.values():
            if page.live == 0 or page.live * 2 < page.used:
                self._retire(page)

    def _retire(self, page: Page) -> None:
        """Move the slices still in ``page`` to other pages and drop it (searches holding it keep it alive; its
        columns are never written again)."""
        pages = self._pages.get(int(page.codes.shape[0]), [])
        if page in pages:
            pages.remove(page)
        for token, member in list(self._members.items()):
            vectors = member.vectors()
            if member.where.page is page and vectors is not None:
                self._members[token] = _Member(self._put(vectors), member.vectors, member.key)


@dataclass(frozen=True)
class _Member:
    """A slice placed: where, the slice (weakly) and its ``id`` then."""

    where: Placement
    vectors: weakref.ref[QuantizedVectors]
    key: int
