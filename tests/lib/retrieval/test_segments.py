"""The segmented lexical index: BM25 over exactly the allowed documents, the same whatever the segmentation
or the history of updates, and an update that rebuilds only the segments it touches."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.retrieval.lexical import LexicalBlock, bm25_rank
from lib.retrieval.segments import SegmentedIndex, SegmentHit

ROOT = Path(__file__).resolve().parents[3]
WORDS = ["highways", "flood", "risk", "heritage", "para", "116", "5-2", "cycle", "parking", "green", "belt", "the"]
chunk_texts = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)
documents = st.dictionaries(st.integers(0, 60), st.lists(chunk_texts, max_size=3), max_size=25)
queries = st.lists(st.sampled_from(WORDS), min_size=1, max_size=3).map(" ".join)


def reference(docs: dict[int, list[str]], query: str, k: int, allowed: set[int] | None) -> list[SegmentHit[int]]:
    """One block of the allowed documents' chunks, in (key, position) order: BM25 over exactly those."""
    rows = [
        (key, pos, text)
        for key in sorted(docs)
        if allowed is None or key in allowed
        for pos, text in enumerate(docs[key])
    ]
    hits = bm25_rank(query, [LexicalBlock.build([text for _, _, text in rows])], k).hits
    return [SegmentHit(rows[h.row][0], rows[h.row][1], h.score) for h in hits]


@settings(max_examples=120, deadline=None)
@given(docs=documents, query=queries, data=st.data())
def test_ranking_is_bm25_over_the_allowed_documents_whatever_the_segment_size(
    docs: dict[int, list[str]], query: str, data: st.DataObject
) -> None:
    allowed = data.draw(st.none() | st.sets(st.sampled_from(sorted(docs))) if docs else st.none())
    k = data.draw(st.integers(0, 15))
    expected = reference(docs, query, k, allowed)
    for size in (1, 3, 256):
        index = SegmentedIndex.build(docs, size=size)
        assert index.rank(query, k, allowed).hits == expected
        assert index.rank(query, k, index.select(allowed)).hits == expected


def test_a_selection_ranks_only_in_the_index_it_was_made_from() -> None:
    index = SegmentedIndex.build({1: ["flood risk"], 2: ["green belt"]})
    newer = index.updated({3: ["flood zone"]})
    with pytest.raises(ValueError, match="index it was made from"):
        newer.rank("flood", 5, index.select({1}))


@settings(max_examples=60, deadline=None)
@given(
    steps=st.lists(st.tuples(st.integers(0, 40), st.none() | st.lists(chunk_texts, max_size=3)), max_size=40),
    query=queries,
)
def test_any_history_of_updates_ranks_exactly_as_an_index_built_at_once(
    steps: list[tuple[int, list[str] | None]], query: str
) -> None:
    """Segments split and merge along the way (size 2); the hits and scores are equal bit for bit."""
    index: SegmentedIndex[int] = SegmentedIndex(size=2)
    docs: dict[int, list[str]] = {}
    for key, texts in steps:
        if texts is None:
            index = index.updated({}, [key])
            docs.pop(key, None)
        else:
            index = index.updated({key: texts})
            docs[key] = texts
        firsts = [s.keys[0] for s in index.segments]
        assert index.keys() == sorted(docs) and firsts == sorted(firsts)
    assert index.rank(query, 10).hits == SegmentedIndex.build(docs, size=256).rank(query, 10).hits
    assert index.rank(query, 10).hits == reference(docs, query, 10, None)


def test_an_update_rebuilds_only_the_segment_it_falls_in_and_reuses_its_neighbours_tokens() -> None:
    docs = {f"doc{i:04d}": [f"note {i} about flood risk", "cycle parking"] for i in range(1000)}
    index = SegmentedIndex.build(docs, size=100)
    assert [len(s.keys) for s in index.segments] == [100] * 10 and len(index) == 1000 and index.rows == 2000
    after = index.updated({"doc0450": ["heritage assets"], "doc0451x": ["para 116"]}, ["doc0452"])
    changed = [i for i, (a, b) in enumerate(zip(index.segments, after.segments, strict=True)) if a is not b]
    assert changed == [4]
    assert after.segments[4].tokens[0] is index.segments[4].tokens[0]
    assert [h.key for h in after.rank("heritage para", 5).hits] == ["doc0450", "doc0451x"]
    unchanged = after.updated({}, ["unknown", "doc0452"])
    assert all(a is b for a, b in zip(unchanged.segments, after.segments, strict=True))


def test_removals_merge_small_segments_and_emptying_the_index_leaves_nothing() -> None:
    index = SegmentedIndex.build({i: [f"flood {i}"] for i in range(40)}, size=10)
    assert len(index.segments) == 4
    index = index.updated({}, range(10, 19))
    assert len(index.segments) == 3 and all(len(s.keys) >= 2 for s in index.segments)
    index = index.updated({}, range(40))
    assert len(index) == 0 and index.rank("flood", 5).hits == [] and index.rank("flood", 5).ceiling == 0.0


def test_a_filter_outside_every_document_finds_nothing_and_keys_cannot_be_both_changed_and_removed() -> None:
    index = SegmentedIndex.build({1: ["flood risk"], 2: ["flood zones"]})
    assert index.rank("flood", 5, set()).hits == [] and index.rank("flood", 5, {3}).hits == []
    assert [h.key for h in index.rank("flood", 5, {2}).hits] == [2]
    with pytest.raises(ValueError, match="both changed and removed"):
        index.updated({1: ["x"]}, [1])


def test_the_ranking_is_the_same_in_another_process() -> None:
    script = (
        "from lib.retrieval.segments import SegmentedIndex\n"
        "docs = {i: [f'note {i} on flood risk and highways', 'para %d' % (i % 7)] for i in range(300, 0, -1)}\n"
        "print([tuple(h) for h in SegmentedIndex.build(docs, size=16).rank('flood para 3 highways', 20).hits])\n"
    )
    there = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, cwd=ROOT)
    docs = {i: [f"note {i} on flood risk and highways", f"para {i % 7}"] for i in range(1, 301)}
    here = [tuple(h) for h in SegmentedIndex.build(docs, size=64).rank("flood para 3 highways", 20).hits]
    assert there.stdout == f"{here}\n"
    assert np.isfinite([h[2] for h in here]).all()


def test_new_keys_past_a_full_last_segment_start_a_tail_and_leave_every_segment_shared() -> None:
    index = SegmentedIndex.build({i: [f"flood {i}"] for i in range(1, 31)}, size=10)
    grown = index.updated({31: ["flood 31"]})
    assert [len(s.keys) for s in grown.segments] == [10, 10, 10, 1]
    assert all(a is b for a, b in zip(index.segments, grown.segments[:3], strict=True))
    grown = grown.updated({32: ["flood 32"]})
    assert [len(s.keys) for s in grown.segments] == [10, 10, 10, 2]
    assert grown.rank("flood 32", 1).hits[0].key == 32
