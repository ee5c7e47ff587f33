"""A slice's chunk metadata held as dictionary-encoded columns instead of one dict per chunk.

Why: a metadata dict per held chunk (about 20 keys, each value a Python object) was most of what a held chunk
cost (decision 0036). Most values repeat across a slice's chunks (the revision, the chapter, the section), so
each key keeps its distinct values once and a compact code per row (``uint16`` while the distinct values fit,
else ``uint32``; code 0: the key is absent in that row). Each row's set of keys is encoded the same way, so
``table[row]`` rebuilds a new dict equal to the original, with values of the same types (``1``, ``1.0`` and
``True`` are kept apart) and keys in the order of the first row that had the same keys (keeping each row's own
order was nine tenths of the table, decision 0036). Values
are Chroma's metadata values: str, int, float, bool, None, and lists of them (e.g. ``cites``), a list copied on
every read so no caller can change what the table holds; anything else unhashable is refused.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import cached_property
from typing import Any, cast, overload

import numpy as np

_NARROW_MAX = int(np.iinfo(np.uint16).max)
_ABSENT = object()
"""What code 0 of every field's column stands for: the key is not in that row."""


def _value_key(value: object) -> tuple[object, ...]:
    """What makes two values one distinct value: their type and value; a float by its exact bits (``-0.0`` is
    not ``0.0``); a list by its elements' keys."""
    if type(value) is float:
        return (float, value.hex())
    if type(value) is list:
        return (list, *map(_value_key, value))
    return (type(value), value)


class _Distinct:
    """Distinct values in first-seen order, each given its code (from ``first`` on)."""

    def __init__(self, first: int) -> None:
        self.codes: dict[object, int] = {}
        self.values: list[object] = [_ABSENT] * first

    def code(self, key: object, value: object) -> int:
        found = self.codes.get(key)
        if found is None:
            found = self.codes[key] = len(self.values)
            self.values.append(value)
        return found


@dataclass(frozen=True)
class _Layout:
    """What a table's rows share: each field's distinct values, each row shape's keys, and where each column's
    code sits in a row's codes (its ``uint16`` codes, then its ``uint32`` ones)."""

    fields: dict[str, tuple[int, tuple[object, ...]]]
    """Field -> (position of its code in a row's codes, its distinct values, index 0 meaning absent)."""
    shapes: tuple[tuple[tuple[str, int, tuple[object, ...]], ...], ...]
    """Per row shape (a set of keys, in the order of its first row), each key with its code's position and its
    distinct values."""
    copied: frozenset[int]
    """The shapes holding a key with list values, whose rows copy each list."""
    shape_at: int
    """Position of the row-shape code in a row's codes."""


class MetadataTable(Sequence[dict[str, Any]]):
    """An immutable sequence of metadata dicts, held as one code column per key plus one for each row's set of
    keys. Built once per slice load (``from_dicts``); ``table[row]`` is a new dict each time."""

    def __init__(self, layout: _Layout, narrow: np.ndarray, wide: np.ndarray) -> None:
        self._layout = layout
        self._narrow = narrow
        """``(rows, n)`` uint16 codes of the columns with at most 65,535 distinct values."""
        self._wide = wide
        """``(rows, m)`` uint32 codes of the others."""

    @classmethod
    def from_dicts(cls, rows: Iterable[Mapping[str, Any]]) -> MetadataTable:
        """The table of ``rows`` (a load's list of metadata dicts)."""
        codes: dict[str, list[int]] = {}
        distinct: dict[str, _Distinct] = {}
        shapes = _Distinct(0)
        shape_codes: list[int] = []
        for count, row in enumerate(rows):
            shape = tuple(row)
            shape_codes.append(shapes.code(frozenset(shape), shape))
            for key, value in row.items():
                if key not in codes:
                    codes[key], distinct[key] = [0] * count, _Distinct(1)
                try:
                    codes[key].append(distinct[key].code(_value_key(value), value))
                except TypeError as error:
                    raise TypeError(f"metadata {key!r} holds an unhashable {type(value).__name__}") from error
            if len(shape) < len(codes):
                for column in codes.values():
                    if len(column) == count:
                        column.append(0)
        names = list(codes)
        columns = [codes[n] for n in names] + [shape_codes]
        counts = [len(distinct[n].values) for n in names] + [len(shapes.values)]
        wide = [c > _NARROW_MAX + 1 for c in counts]
        order = [j for j, w in enumerate(wide) if not w] + [j for j, w in enumerate(wide) if w]
        at = {j: position for position, j in enumerate(order)}
        fields = {n: (at[j], tuple(distinct[n].values)) for j, n in enumerate(names)}
        layout = _layout(fields, cast(list[tuple[str, ...]], shapes.values), at[len(names)])
        rows_count = len(shape_codes)
        narrow = _matrix([c for c, w in zip(columns, wide, strict=True) if not w], rows_count, np.uint16)
        return cls(layout, narrow, _matrix([c for c, w in zip(columns, wide, strict=True) if w], rows_count, np.uint32))

    def state(self) -> dict[str, Any]:
        """The table as JSON-able parts and two code arrays, for ``from_state`` (``lib.retrieval.index_snapshot``):
        JSON keeps every metadata value's type (``1``, ``1.0``, ``True``, ``None``, lists)."""
        layout = self._layout
        fields = [[name, at, list(values[1:])] for name, (at, values) in layout.fields.items()]
        shapes = [[key for key, _, _ in plan] for plan in layout.shapes]
        return {
            "layout": {"fields": fields, "shapes": shapes, "shape_at": layout.shape_at},
            "narrow": self._narrow,
            "wide": self._wide,
        }

    @classmethod
    def from_state(cls, state: Mapping[str, Any]) -> MetadataTable:
        """The table ``state()`` gave; ``ValueError`` when its parts disagree."""
        layout, narrow, wide = state["layout"], np.asarray(state["narrow"]), np.asarray(state["wide"])
        fields = {str(name): (int(at), (_ABSENT, *values)) for name, at, values in layout["fields"]}
        if narrow.dtype != np.uint16 or wide.dtype != np.uint32 or len(narrow) != len(wide):
            raise ValueError("metadata codes of the wrong types or lengths")
        positions = sorted([at for at, _ in fields.values()] + [int(layout["shape_at"])])
        if positions != list(range(narrow.shape[1] + wide.shape[1])):
            raise ValueError("metadata columns that do not match their codes")
        shapes = [tuple(str(key) for key in shape) for shape in layout["shapes"]]
        table = cls(_layout(fields, shapes, int(layout["shape_at"])), narrow, wide)
        for name, (at, values) in [*fields.items(), ("", (int(layout["shape_at"]), shapes))]:
            column = narrow[:, at] if at < narrow.shape[1] else wide[:, at - narrow.shape[1]]
            if len(column) and int(column.max()) >= len(values):
                raise ValueError(f"metadata codes past the values of {name or 'the row shapes'}")
        return table

    def __len__(self) -> int:
        return len(self._narrow)

    @overload
    def __getitem__(self, row: int) -> dict[str, Any]: ...

    @overload
    def __getitem__(self, row: slice) -> MetadataTable: ...

    def __getitem__(self, row: int | slice) -> dict[str, Any] | MetadataTable:
        if isinstance(row, slice):
            return MetadataTable(self._layout, self._narrow[row], self._wide[row])
        return self._row(self.codes(row))

    def __iter__(self) -> Iterator[dict[str, Any]]:
        for codes in np.hstack([self._narrow, self._wide.astype(np.uint32)]).tolist():
            yield self._row(codes)

    def row(self, row: int) -> RowMetadata:
        """Row ``row`` read in place: a field is decoded when asked for, the whole row once when iterated."""
        return RowMetadata(self, row)

    def codes(self, row: int) -> list[int]:
        """Row ``row``'s codes: its ``uint16`` codes, then its ``uint32`` ones."""
        codes = self._narrow[row].tolist()
        return codes + self._wide[row].tolist() if self._wide.shape[1] else codes

    def _row(self, codes: list[int]) -> dict[str, Any]:
        layout = self._layout
        shape = codes[layout.shape_at]
        if shape in layout.copied:
            return {key: _fresh(values[codes[at]]) for key, at, values in layout.shapes[shape]}
        return {key: values[codes[at]] for key, at, values in layout.shapes[shape]}

    def __eq__(self, other: object) -> bool:
        """Equal to a table or a sequence holding equal dicts, row by row."""
        if other is self:
            return True
        if not isinstance(other, MetadataTable | list | tuple):
            return NotImplemented
        return len(other) == len(self) and all(a == b for a, b in zip(self, other, strict=True))

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"MetadataTable(rows={len(self)}, fields={list(self._layout.fields)})"

    def column(self, field: str) -> np.ndarray:
        """``str(value)`` of ``field`` per row (``""`` where the row lacks it), as a numpy string array: what a
        row filter compares with (``CorpusIndex.rows_where``); one lookup of the codes, no Python per row."""
        found = self._layout.fields.get(field)
        if found is None:
            return np.full(len(self), "", dtype="<U1")
        at, values = found
        strings = np.asarray(["", *(str(v) for v in values[1:])])
        codes = self._narrow[:, at] if at < self._narrow.shape[1] else self._wide[:, at - self._narrow.shape[1]]
        return strings[codes]

    def values(self, fields: Sequence[str]) -> list[tuple[Any, ...]]:
        """Per row, ``tuple(map(self.row(row).get, fields))`` (``None`` where the row lacks a field), from the code
        columns at once: one decoding per row and field for a whole slice, not per search."""
        columns: list[list[Any]] = []
        for field in fields:
            found = self._layout.fields.get(field)
            if found is None:
                columns.append([None] * len(self))
                continue
            at, values = found
            codes = self._narrow[:, at] if at < self._narrow.shape[1] else self._wide[:, at - self._narrow.shape[1]]
            columns.append([_fresh(values[code]) if code else None for code in codes.tolist()])
        return list(zip(*columns, strict=True)) if columns else [()] * len(self)

    @cached_property
    def nbytes(self) -> int:
        """The codes, and an estimate of the shared parts (``sys.getsizeof``): each key, its tuple of distinct
        values and each value, and each row shape's tuple of keys (with where each key's code sits)."""
        fields = self._layout.fields.items()
        shared = sum(sys.getsizeof(f) + sys.getsizeof(v) + sum(map(_size, v[1:])) for f, (_, v) in fields)
        shared += sum(sys.getsizeof(s) + sum(map(sys.getsizeof, s)) for s in self._layout.shapes)
        return self._narrow.nbytes + self._wide.nbytes + shared


def _layout(
    fields: dict[str, tuple[int, tuple[object, ...]]], keys: Sequence[tuple[str, ...]], shape_at: int
) -> _Layout:
    """The layout of ``fields`` (each with its code's position and distinct values) and the row shapes ``keys``."""
    lists = {n for n, (_, values) in fields.items() if any(type(v) is list for v in values)}
    copied = frozenset(j for j, shape in enumerate(keys) if lists.intersection(shape))
    plans = tuple(tuple((k, *fields[k]) for k in shape) for shape in keys)
    return _Layout(fields=fields, shapes=plans, copied=copied, shape_at=shape_at)


def _size(value: object) -> int:
    return sys.getsizeof(value) + (sum(map(sys.getsizeof, value)) if type(value) is list else 0)


def _fresh(value: object) -> object:
    return list(value) if type(value) is list else value


def _matrix(columns: list[list[int]], rows: int, dtype: type[np.unsignedinteger[Any]]) -> np.ndarray:
    """``columns`` as one ``(rows, len(columns))`` C-ordered code matrix, so a row's codes are adjacent."""
    if not columns:
        return np.zeros((rows, 0), dtype)
    return np.ascontiguousarray(np.array(columns, dtype=dtype).T)


class RowMetadata(Mapping[str, Any]):
    """One row of a ``MetadataTable`` as a read-only mapping, decoded as it is read: a search ranks a hundred
    candidates by two or three fields each and returns ten, so most rows never need all their fields. A field
    read alone costs one code lookup (the row's codes are read once); iterating (``dict(...)``, ``==``,
    ``items()``) decodes the whole row once. Equal to the dict it stands for."""

    __slots__ = ("_codes", "_row", "_table", "_whole")

    def __init__(self, table: MetadataTable, row: int) -> None:
        self._table = table
        self._row = row
        self._codes: list[int] | None = None
        self._whole: dict[str, Any] | None = None

    def _row_codes(self) -> list[int]:
        if self._codes is None:
            self._codes = self._table.codes(self._row)
        return self._codes

    def _dict(self) -> dict[str, Any]:
        if self._whole is None:
            self._whole = self._table._row(self._row_codes())
        return self._whole

    def get(self, key: str, default: Any = None) -> Any:
        """Field ``key``, or ``default`` when the row lacks it (a list copied); the row's codes are read from the
        table once."""
        if self._whole is not None:
            return self._whole.get(key, default)
        codes = self._codes
        if codes is None:
            codes = self._codes = self._table.codes(self._row)
        found = self._table._layout.fields.get(key)
        if found is None:
            return default
        at, values = found
        code = codes[at]
        if not code:
            return default
        value = values[code]
        return list(value) if type(value) is list else value

    def __getitem__(self, key: str) -> Any:
        value = self.get(key, _ABSENT)
        if value is _ABSENT:
            raise KeyError(key)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._dict())

    def __len__(self) -> int:
        return len(self._dict())

    def __repr__(self) -> str:
        return repr(self._dict())
