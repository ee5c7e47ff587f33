"""BM25 with row masks: a masked search is the search over blocks built from the allowed rows alone."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lib.retrieval.lexical import LexicalBlock, bm25_rank, bm25_search
from lib.retrieval.tokens import tokenize

WORDS = ["highways", "flood", "risk", "heritage", "para", "116", "5-2", "cycle", "parking", "green", "belt", "the"]
texts = st.lists(st.sampled_from(WORDS), max_size=8).map(" ".join)
corpora = st.lists(st.lists(texts, max_size=6), min_size=1, max_size=4)


@settings(max_examples=150, deadline=None)
@given(corpus=corpora, data=st.data())
def test_a_masked_search_equals_the_search_over_blocks_built_from_the_allowed_rows_only(
    corpus: list[list[str]], data: st.DataObject
) -> None:
    masks = [np.asarray(data.draw(st.lists(st.booleans(), min_size=len(b), max_size=len(b))), bool) for b in corpus]
    query = " ".join(data.draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4)))
    k = data.draw(st.integers(min_value=0, max_value=12))
    allowed_rows = [np.flatnonzero(mask) for mask in masks]
    full = [LexicalBlock.build(b) for b in corpus]
    alone = [LexicalBlock.build([b[r] for r in rows]) for b, rows in zip(corpus, allowed_rows, strict=True)]

    masked = bm25_rank(query, full, k, masks=masks)
    truth = bm25_rank(query, alone, k)

    assert [(h.block_index, h.row) for h in masked.hits] == [
        (h.block_index, int(allowed_rows[h.block_index][h.row])) for h in truth.hits
    ]
    assert np.allclose([h.score for h in masked.hits], [h.score for h in truth.hits], rtol=0, atol=1e-9)
    assert masked.ceiling == pytest.approx(truth.ceiling, abs=1e-9)


def test_no_masks_and_all_true_masks_are_the_plain_search() -> None:
    blocks = [LexicalBlock.build(["Flood risk on highways.", "Para 116."]), LexicalBlock.build(["Flood zones."])]
    plain = bm25_search("flood para 116", blocks, 10)
    assert bm25_search("flood para 116", blocks, 10, masks=[None, None]) == plain
    assert bm25_search("flood para 116", blocks, 10, masks=[np.ones(2, bool), np.ones(1, bool)]) == plain


def test_a_masked_out_row_is_never_returned_and_shifts_no_statistic() -> None:
    blocks = [LexicalBlock.build(["Flood risk.", "Flood flood flood.", "Heritage."])]
    hits = bm25_search("flood", blocks, 10, masks=[np.array([True, False, True])])
    assert [(h.block_index, h.row) for h in hits] == [(0, 0)]
    assert hits[0].score == bm25_search("flood", [LexicalBlock.build(["Flood risk.", "Heritage."])], 10)[0].score
    assert bm25_search("flood", blocks, 10, masks=[np.zeros(3, bool)]) == []


def test_masks_must_match_the_blocks() -> None:
    blocks = [LexicalBlock.build(["Flood risk.", "Heritage."])]
    with pytest.raises(ValueError, match="masks for"):
        bm25_search("flood", blocks, 10, masks=[])
    with pytest.raises(ValueError, match="shape"):
        bm25_search("flood", blocks, 10, masks=[np.ones(3, bool)])


def test_a_block_from_tokens_is_the_block_from_texts() -> None:
    texts = ["Flood risk on highways.", "Para 116 of Table 5-2.", ""]
    built, from_tokens = LexicalBlock.build(texts), LexicalBlock.from_tokens([tokenize(t) for t in texts])
    assert built.vocabulary == from_tokens.vocabulary and built.total_length == from_tokens.total_length
    pairs = zip(built.postings("flood"), from_tokens.postings("flood"), strict=True)
    assert all(np.array_equal(a, b) for a, b in pairs)
    for name in ("indptr", "rows_of", "counts", "lengths", "doc_freqs"):
        assert np.array_equal(getattr(built, name), getattr(from_tokens, name)), name


def test_rows_past_65535_take_wide_row_numbers_and_a_huge_count_is_held_at_the_narrow_maximum() -> None:
    flood, green, heritage = (tokenize(word) for word in ("flood", "green", "heritage"))
    tokens = [flood if row % 1000 == 0 else green for row in range(70_001)]
    tokens[70_000] = flood + heritage
    block = LexicalBlock.from_tokens(tokens)
    assert block.rows_of.dtype == np.uint32 and block.counts.dtype == np.uint16
    assert bm25_search("heritage", [block], 1)[0].row == 70_000
    assert [h.row for h in bm25_search("flood", [block], 100)][-1] == 70_000
    narrow = LexicalBlock.from_tokens([flood * 70_000, green])
    assert narrow.rows_of.dtype == np.uint16 and narrow.postings(flood[0])[1].tolist() == [65_535]
