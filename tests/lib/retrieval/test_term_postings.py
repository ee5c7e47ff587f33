"""Merged postings kept across searches (``lib.retrieval.lexical.TermPostings``): the lexical leg answers to the last
bit as without them (and in borrowed arrays, ``lib.retrieval.scratch``), never from slices since replaced, and
the memo keeps to its bytes."""

from __future__ import annotations

import numpy as np
import pytest

from lib.retrieval.corpus_index import CorpusIndex
from lib.retrieval.lexical import LexicalBlock, TermPostings, bm25_rank, merged_postings, starts_of
from lib.retrieval.scratch import Scratch
from lib.retrieval.slice_search import lexical_hits

WORDS = [
    "housing",
    "green",
    "belt",
    "flood",
    "risk",
    "heritage",
    "parking",
    "design",
    "density",
    "highways",
    "retail",
    "employment",
]


def texts(rng: np.random.Generator, rows: int) -> list[str]:
    return [" ".join(rng.choice(WORDS, size=int(rng.integers(1, 25)))) for _ in range(rows)]


def test_the_leg_with_the_memo_answers_as_without_it_to_the_last_bit() -> None:
    rng = np.random.default_rng(1)
    blocks = [LexicalBlock.build(texts(rng, int(rows))) for rows in rng.integers(1, 400, 30)]
    masks = [None if rng.random() < 0.4 else rng.random(b.rows) < 0.6 for b in blocks]
    memo = TermPostings(1 << 20)
    scratch = Scratch(smallest=1)  # every array borrowed, and left dirty by the search before
    for _ in range(40):
        query = " ".join(rng.choice([*WORDS, "unknown"], size=int(rng.integers(1, 6))))
        for rows in (None, masks):
            plain = bm25_rank(query, blocks, 25, masks=rows)
            assert bm25_rank(query, blocks, 25, masks=rows, memo=memo, key="these blocks") == plain
            assert bm25_rank(query, blocks, 25, masks=rows, memo=memo, key="these blocks", scratch=scratch) == plain
    assert 0 < memo.nbytes <= 1 << 20 and scratch.kept() > 0


def test_a_replaced_slice_is_never_searched_through_the_memo() -> None:
    rng = np.random.default_rng(2)

    def slice_of(key: str, lines: list[str]) -> CorpusIndex:
        vectors = np.zeros((len(lines), 0), np.float32)
        return CorpusIndex.from_embeddings(
            key, 0, [f"{key}-{i}" for i in range(len(lines))], vectors, lines, [{}] * len(lines)
        )

    first = [slice_of("a", texts(rng, 50)), slice_of("b", texts(rng, 50))]
    memo = TermPostings(1 << 20)
    before = lexical_hits("flood risk", 10, first, postings=memo)
    assert before.hits.tolist() == lexical_hits("flood risk", 10, first).hits.tolist()
    replaced = [first[0], slice_of("b", ["flood flood flood risk"] * 3)]  # the same key, reloaded: a new serial
    after = lexical_hits("flood risk", 10, replaced, postings=memo)
    assert after.hits.tolist() == lexical_hits("flood risk", 10, replaced).hits.tolist()
    assert after.hits.tolist() != before.hits.tolist()


def test_postings_larger_than_the_memo_are_merged_but_not_kept_and_none_can_be_written() -> None:
    blocks = [LexicalBlock.build(["flood"] * 100), LexicalBlock.build(["flood risk"] * 100)]
    starts = starts_of(blocks)
    small = TermPostings(300)
    merged = small.get("flood", blocks, starts, key=1)
    assert np.array_equal(merged.places, merged_postings("flood", blocks, starts).places)
    assert np.array_equal(merged.places, np.arange(200)) and small.nbytes == 0
    kept = TermPostings(1 << 20)
    held = kept.get("risk", blocks, starts, key=1)
    assert kept.get("risk", blocks, starts, key=1) is held and np.array_equal(held.places, np.arange(100, 200))
    with pytest.raises(ValueError, match="read-only"):
        held.places[0] = 5
