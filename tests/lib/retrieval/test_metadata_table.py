"""The metadata table: every row rebuilt exactly as loaded (equal, same value types, keys in the order of the first
row with the same keys), its filter column equal to the one a loop over the dicts makes, and a slice of the corpus
index holding one."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.retrieval.corpus_index import CorpusIndex
from lib.retrieval.metadata_table import MetadataTable

KEYS = ["source", "section_ref", "chunk_index", "page_number", "effective_to", "supports", "cites", "k"]
scalars = st.one_of(
    st.sampled_from([0, 1, 1.0, True, False, 0.0, -0.0, "", "1", "True", None]),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False),
    st.booleans(),
    st.text(max_size=6),
    st.none(),
)
values = st.one_of(scalars, st.lists(scalars, max_size=3))  # Chroma's list values (``cites``)
rows = st.lists(st.dictionaries(st.sampled_from(KEYS), values, max_size=len(KEYS)), max_size=40)


def loop_column(metadatas: list[dict[str, Any]], field: str) -> np.ndarray:
    """The filter column as ``rows_where`` built it before the table, one ``str`` per dict."""
    return np.asarray([str(m.get(field, "")) for m in metadatas])


def typed(row: dict[str, Any]) -> list[tuple[str, object, str]]:
    """A row's keys in order with each value's exact type (a list's, its elements') and representation
    (``-0.0`` is not ``0.0``)."""
    return [(k, [type(e) for e in v] if type(v) is list else type(v), repr(v)) for k, v in row.items()]


def in_first_order(dicts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each dict with its keys in the order of the first dict holding the same keys: what the table promises."""
    first: dict[frozenset[str], tuple[str, ...]] = {}
    return [{k: d[k] for k in first.setdefault(frozenset(d), tuple(d))} for d in dicts]


def assert_round_trip(
    dicts: list[dict[str, Any]], table: MetadataTable, ordered: list[dict[str, Any]] | None = None
) -> None:
    """``ordered``: ``dicts`` in the key order the table gives back (a slice keeps its whole table's order)."""
    assert len(table) == len(dicts) and table == dicts and dicts == table
    dicts = in_first_order(dicts) if ordered is None else ordered
    assert [typed(r) for r in table] == [typed(d) for d in dicts]
    assert [typed(table[i]) for i in range(len(dicts))] == [typed(d) for d in dicts]
    assert [typed(table[i - len(dicts)]) for i in range(len(dicts))] == [typed(d) for d in dicts]
    for i, d in enumerate(dicts):
        assert_read_in_place(d, table, i)


def assert_read_in_place(d: dict[str, Any], table: MetadataTable, i: int) -> None:
    """Row ``i`` read field by field (each from a new view, before any decodes the whole row), then whole."""
    missing = object()
    for key in [*KEYS, "absent"]:
        assert (key in table.row(i)) == (key in d)
        assert typed({key: table.row(i).get(key, missing)}) == typed({key: d.get(key, missing)})
    view = table.row(i)
    assert typed(dict(view)) == typed(d) and list(view) == list(d) and len(view) == len(d)
    assert view == d and d == view and typed({k: view[k] for k in d}) == typed(d)


@settings(max_examples=300, deadline=None)
@given(dicts=rows, data=st.data())
def test_every_row_comes_back_as_loaded_and_every_column_as_the_loop_made_it(
    dicts: list[dict[str, Any]], data: st.DataObject
) -> None:
    # Repeat some rows so values recur (and rows share a shape) as they do within a revision.
    dicts = dicts + data.draw(st.lists(st.sampled_from(dicts), max_size=20)) if dicts else dicts
    table = MetadataTable.from_dicts(dicts)
    assert_round_trip(dicts, table)
    for field in [*KEYS, "absent"]:
        column = table.column(field)
        assert column.dtype.kind == "U" and column.shape == (len(dicts),)
        assert np.array_equal(column, loop_column(dicts, field)) if dicts else len(column) == 0
    start, stop = sorted(data.draw(st.lists(st.integers(0, len(dicts)), min_size=2, max_size=2)))
    assert_round_trip(dicts[start:stop], table[start:stop], in_first_order(dicts)[start:stop])
    assert table == MetadataTable.from_dicts(dicts)
    if dicts:
        changed = [dict(d) for d in dicts]
        changed[-1]["k"] = "changed"  # seven characters: no drawn value
        assert table != changed and table != MetadataTable.from_dicts(dicts[:-1])


def test_each_row_is_a_new_dict_so_a_caller_cannot_change_what_the_table_holds() -> None:
    table = MetadataTable.from_dicts([{"a": 1, "b": "x", "cites": ["NPPF|Para 11"]}, {"b": "x"}])
    row = table[0]
    row["a"], row["c"] = 2, 3
    row["cites"].append("NPPF|Para 12")
    assert table[0] == {"a": 1, "b": "x", "cites": ["NPPF|Para 11"]} and table[0] is not table[0]
    assert next(iter(table))["cites"] is not table[0]["cites"]


def test_a_row_read_in_place_decodes_one_field_refuses_absent_keys_and_copies_lists() -> None:
    table = MetadataTable.from_dicts([{"a": 1, "cites": ["NPPF|Para 11"]}, {"b": "x"}])
    view = table.row(0)
    view["cites"].append("NPPF|Para 12")
    assert view["cites"] == ["NPPF|Para 11"] and view["a"] == 1 and view.get("b") is None
    for key in ("b", "unknown"):
        try:
            view[key]
        except KeyError as error:
            assert error.args == (key,)
        else:
            raise AssertionError(f"{key!r} is not in the row")
    assert dict(table.row(1)) == {"b": "x"} and repr(table.row(1)) == "{'b': 'x'}"


def test_bool_int_and_float_stay_apart_in_values_and_in_the_column() -> None:
    dicts = [{"v": True}, {"v": 1}, {"v": 1.0}, {"v": False}, {"v": 0}, {"v": 0.0}, {"v": None}, {}]
    table = MetadataTable.from_dicts(dicts)
    assert [type(r.get("v")) for r in table] == [bool, int, float, bool, int, float, type(None), type(None)]
    assert table.column("v").tolist() == ["True", "1", "1.0", "False", "0", "0.0", "None", ""]


def test_more_than_65535_distinct_values_take_wide_codes_and_still_come_back() -> None:
    count = 70_000
    dicts = [{"chunk_index": i, "source": "NPPF", "page": i % 7} for i in range(count)]
    dicts[5] = {"page": 5, "source": "NPPF"}  # a row lacking the wide key, keys in another order
    table = MetadataTable.from_dicts(dicts)
    assert_round_trip(dicts, table)
    assert np.array_equal(table.column("chunk_index"), loop_column(dicts, "chunk_index"))
    assert table[-1] == {"chunk_index": count - 1, "source": "NPPF", "page": (count - 1) % 7}
    assert [m.dtype for m in (table._narrow, table._wide)] == [np.uint16, np.uint32] and table._wide.shape[1] == 1
    narrow_only = MetadataTable.from_dicts([{"chunk_index": i} for i in range(65_535)])  # codes 1..65,535
    assert narrow_only._wide.shape[1] == 0 and narrow_only[-1] == {"chunk_index": 65_534}


def test_the_table_costs_less_than_the_dicts_it_replaces() -> None:
    dicts = [
        {
            "source": "NPPF",
            "revision_ref": "NPPF:r1",
            "section_ref": f"Para {i // 3}",
            "chunk_index": i,
            "page_number": i // 10,
            "effective_to": 0,
        }
        for i in range(3000)
    ]
    table = MetadataTable.from_dicts(dicts)
    assert table.nbytes < 100 * len(dicts)
    assert table.nbytes > 2 * 6 * len(dicts)  # every row's six codes are counted
    # Chroma gives each row's keys in an order of its own: the rows still share one shape, so the table costs
    # the same (a shape per row cost ~1,350 bytes a row on a real 2,000-chunk revision).
    rng = random.Random(27)
    shuffled = [dict(rng.sample(list(d.items()), len(d))) for d in dicts]
    assert len({tuple(d) for d in shuffled}) > 100
    mixed = MetadataTable.from_dicts(shuffled)
    assert mixed == dicts and mixed.nbytes == table.nbytes
    assert [list(row) for row in mixed] == [list(shuffled[0])] * len(dicts)


def test_a_slice_holds_a_table_and_filters_and_compares_rows_by_it() -> None:
    dicts = [
        {"document_type": kind, "document_id": f"d{i}", "chunk_index": i}
        for i, kind in enumerate(["plan", "report", "plan", "letter"])
    ]
    ids, texts = [f"c{i}" for i in range(4)], ["flood", "green belt", "flood zones", "access"]
    index = CorpusIndex.from_texts("a", 0, ids, texts, dicts)
    direct = CorpusIndex("a", 0, ids, np.zeros((0, 4), np.float32), texts, dicts)
    assert isinstance(index.metadatas, MetadataTable) and isinstance(direct.metadatas, MetadataTable)
    assert index.metadatas == direct.metadatas == dicts
    mask = index.rows_where("document_type", frozenset({"plan", "letter"}))
    assert mask is not None and mask.tolist() == [True, False, True, True]
    assert index.chunk(1).metadata == dicts[1] and index.chunk(1).metadata is not index.chunk(1).metadata
    assert index.holds(ids[::-1], texts[::-1], dicts[::-1]) and not index.holds(ids, texts, [*dicts[:3], {}])
