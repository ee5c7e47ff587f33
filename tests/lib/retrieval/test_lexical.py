"""BM25 over blocks: IDF and average length over exactly the union searched, ties, zero scores."""

from __future__ import annotations

import math

import numpy as np

from lib.retrieval.lexical import K1, B, LexicalBlock, LexicalHit, bm25_rank, bm25_search
from lib.retrieval.tokens import tokenize


def reference_bm25(query: str, corpus: list[str], k1: float = K1, b: float = B) -> list[float]:
    """Lucene's BM25 written out for one flat corpus, term by term."""
    docs = [tokenize(t) for t in corpus]
    avgdl = sum(len(d) for d in docs) / len(docs)
    scores = []
    for doc in docs:
        score = 0.0
        for term in dict.fromkeys(tokenize(query)):
            df = sum(term in d for d in docs)
            tf = doc.count(term)
            if tf:
                idf = math.log(1 + (len(docs) - df + 0.5) / (df + 0.5))
                score += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * len(doc) / avgdl))
        scores.append(score)
    return scores


A = ["Development should be refused on highways grounds.", "Cycle parking near entrances.", "Green belt land."]
C = ["Highways and highways again: highways safety.", "Para 116 of the framework.", "Flood risk."]


def test_scores_over_several_blocks_equal_bm25_over_their_union() -> None:
    blocks = [LexicalBlock.build(A), LexicalBlock.build(C)]
    query = "highways safety para 116"
    truth = reference_bm25(query, A + C)
    hits = bm25_search(query, blocks, 10)
    assert [(h.block_index, h.row) for h in hits] == [
        divmod(i, 3) for i in sorted(range(6), key=lambda i: -truth[i]) if truth[i] > 0
    ]
    assert np.allclose([h.score for h in hits], sorted((s for s in truth if s > 0), reverse=True))


def test_idf_is_over_the_blocks_searched_only_so_a_filtered_out_block_changes_nothing() -> None:
    """The filter applies before ranking: searching A alone equals BM25 over A alone, whatever C holds."""
    alone = bm25_search("highways grounds", [LexicalBlock.build(A)], 10)
    assert [h.score for h in alone] == [reference_bm25("highways grounds", A)[0]]
    both = bm25_search("highways grounds", [LexicalBlock.build(A), LexicalBlock.build(C)], 10)
    in_union = next(h.score for h in both if (h.block_index, h.row) == (0, 0))
    assert in_union == reference_bm25("highways grounds", A + C)[0] != alone[0].score


def test_rows_without_a_query_term_are_never_returned_and_an_unknown_query_returns_nothing() -> None:
    blocks = [LexicalBlock.build(A), LexicalBlock.build(C)]
    assert {(h.block_index, h.row) for h in bm25_search("flood", blocks, 10)} == {(1, 2)}
    assert bm25_search("unheard-of words", blocks, 10) == []
    assert bm25_search("the and of", blocks, 10) == []
    assert bm25_search("flood", [LexicalBlock.build([]), LexicalBlock.build(["", "  "])], 10) == []
    assert bm25_search("flood", blocks, 0) == []
    assert all(h.score > 0 for h in bm25_search("highways land cycle flood", blocks, 10))


def test_equal_scores_are_ordered_by_block_then_row_and_k_cuts_through_a_tie_in_that_order() -> None:
    same = ["Heritage assets are irreplaceable."] * 3
    blocks = [LexicalBlock.build(["Nothing here.", *same]), LexicalBlock.build(same)]
    hits = bm25_search("heritage", blocks, 10)
    assert [(h.block_index, h.row) for h in hits] == [(0, 1), (0, 2), (0, 3), (1, 0), (1, 1), (1, 2)]
    assert len({h.score for h in hits}) == 1
    assert bm25_search("heritage", blocks, 4) == hits[:4]
    assert all(isinstance(h, LexicalHit) for h in hits)


def test_a_repeated_query_word_counts_once() -> None:
    blocks = [LexicalBlock.build(A + C)]
    assert bm25_search("highways highways grounds", blocks, 5) == bm25_search("highways grounds", blocks, 5)


def test_the_ceiling_bounds_every_score_and_a_block_knows_its_size() -> None:
    blocks = [LexicalBlock.build(A), LexicalBlock.build(C)]
    ceiling = bm25_rank("highways para 116", blocks, 10).ceiling
    assert all(0 < h.score < ceiling for h in bm25_search("highways para 116", blocks, 10))
    assert bm25_rank("nothing known", blocks, 10).ceiling == 0.0
    block = blocks[1]
    assert block.rows == 3 and block.doc_freqs[block.vocabulary["highway"]] == 1
    rows, counts = block.postings("highway")
    assert rows.tolist() == [0] and counts.tolist() == [3] and block.nbytes > 0
    assert [a.size for a in block.postings("unknown")] == [0, 0]


def test_many_blocks_with_masks_rank_as_bm25_over_the_allowed_rows_of_their_union() -> None:
    """Thousands of rows over many blocks (every block's postings scored in one pass, the best taken by a sampled
    threshold) and a small vocabulary, so scores tie often: the order is the reference's, ties by block then row,
    and a masked-out row shifts nothing."""
    rng = np.random.default_rng(11)
    words = ["highway", "safety", "heritage", "flood", "parking", "green", "belt", "design", "housing", "retail"]
    blocks_texts = [
        [" ".join(rng.choice(words, size=int(rng.integers(1, 9)))) for _ in range(int(rng.integers(20, 200)))]
        for _ in range(30)
    ]
    masks = [None if at % 3 else rng.random(len(texts)) < 0.6 for at, texts in enumerate(blocks_texts)]
    allowed = [
        (at, row, text)
        for at, texts in enumerate(blocks_texts)
        for row, text in enumerate(texts)
        if masks[at] is None or masks[at][row]
    ]
    query = "highway safety heritage parking"
    truth = reference_bm25_fast(query, [text for _, _, text in allowed])
    expected = sorted(((-s, at, row) for (at, row, _), s in zip(allowed, truth, strict=True) if s > 0))[:25]
    hits = bm25_search(query, [LexicalBlock.build(t) for t in blocks_texts], 25, masks=masks)
    assert [(h.block_index, h.row) for h in hits] == [(at, row) for _, at, row in expected]
    assert np.allclose([h.score for h in hits], [-s for s, _, _ in expected], rtol=1e-12, atol=0)


def reference_bm25_fast(query: str, corpus: list[str], k1: float = K1, b: float = B) -> list[float]:
    """``reference_bm25`` with each term's document frequency counted once, for a corpus of thousands."""
    docs = [tokenize(t) for t in corpus]
    avgdl = sum(len(d) for d in docs) / len(docs)
    terms = list(dict.fromkeys(tokenize(query)))
    idf = {t: math.log(1 + (len(docs) - (df := sum(t in d for d in docs)) + 0.5) / (df + 0.5)) for t in terms}
    return [
        sum(
            idf[t] * d.count(t) * (k1 + 1) / (d.count(t) + k1 * (1 - b + b * len(d) / avgdl))
            for t in terms
            if d.count(t)
        )
        for d in docs
    ]
