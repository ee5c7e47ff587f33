"""The answers memo of ``CorpusIndexes``: it keeps where the hits are (slice, row, score), and each call makes its
chunks from the very slices searched, equal to what the search itself returns."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from lib.retrieval.corpus import CorpusIndexes
from lib.retrieval.corpus_index import CorpusIndex
from lib.retrieval.slice_search import HITS, LexicalHits, exact_search, lexical_search
from lib.stores.chroma import StoredChunk

WORDS = ["flood", "drainage", "heritage", "housing", "transport", "green", "belt", "design"]


def slice_of(key: str, rows: int, seed: int) -> CorpusIndex:
    rng = np.random.default_rng(seed)
    vectors = rng.normal(size=(rows, 384)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    texts = [" ".join(rng.choice(WORDS, size=6)) for _ in range(rows)]
    metadatas = [{"chunk_index": i, "policy_id": key, "pages": [i, i + 1]} for i in range(rows)]
    return CorpusIndex.from_embeddings(key, 1, [f"{key}__{i:03d}" for i in range(rows)], vectors, texts, metadatas)


def indexes_over(*slices: CorpusIndex) -> CorpusIndexes:
    held = {s.key: s for s in slices}
    return CorpusIndexes(lambda key, stamp: held[key])


def test_a_remembered_dense_answer_is_the_search_itself_and_is_kept_as_hits() -> None:
    a, b = slice_of("A", 40, 1), slice_of("B", 30, 2)
    indexes = indexes_over(a, b)
    held = indexes.held({"A": 1, "B": 1})
    assert held is not None
    query = a.embedding(5) * 0.6 + b.embedding(7) * 0.4
    first = indexes.dense(query, 8, held)
    again = indexes.dense(query, 8, held)
    assert first == again == exact_search(query, 8, held)
    assert [c.id for c in first][:2] in (["A__005", "B__007"], ["B__007", "A__005"])
    (kept,) = indexes.answers.values()
    assert isinstance(kept, np.ndarray) and kept.dtype == HITS and len(kept) == 8
    assert kept.nbytes == 16 * 8  # the chunks' texts and metadata are not in the memo


def test_a_caller_changing_a_chunk_it_was_given_changes_no_later_answer() -> None:
    a = slice_of("A", 20, 3)
    indexes = indexes_over(a)
    held = indexes.held({"A": 1})
    assert held is not None
    first = indexes.dense(a.embedding(3), 3, held)
    first[0].metadata["pages"].append(99)
    try:
        first[0].metadata["policy_id"] = "changed"  # type: ignore[index]
    except TypeError:
        pass  # read-only
    else:
        raise AssertionError("a held chunk's metadata took a new value")
    assert indexes.dense(a.embedding(3), 3, held) == exact_search(a.embedding(3), 3, held)
    assert indexes.dense(a.embedding(3), 3, held)[0].metadata == {"chunk_index": 3, "policy_id": "A", "pages": [3, 4]}


def test_a_remembered_lexical_answer_is_the_search_itself_with_its_ceiling() -> None:
    a, b = slice_of("A", 40, 4), slice_of("B", 30, 5)
    indexes = indexes_over(a, b)
    held = indexes.held({"A": 1, "B": 1})
    assert held is not None
    first = indexes.lexical("flood heritage", 6, held)
    assert first.hits
    assert first == indexes.lexical("flood heritage", 6, held) == lexical_search("flood heritage", 6, held)
    assert all(chunk.distance is None and score > 0 for chunk, score in first.hits)
    (kept,) = indexes.answers.values()
    assert isinstance(kept, LexicalHits) and kept.ceiling == first.ceiling and len(kept.hits) == 6


def test_masked_rows_never_come_back_from_a_remembered_answer() -> None:
    a = slice_of("A", 30, 6)
    indexes = indexes_over(a)
    held = indexes.held({"A": 1})
    assert held is not None
    even = np.arange(30) % 2 == 0
    query = a.embedding(3)
    for _ in range(2):
        found = indexes.dense(query, 5, held, [even], "even")
        assert found and all(int(c.id[-3:]) % 2 == 0 for c in found)
    assert "A__003" in {c.id for c in indexes.dense(query, 5, held)}  # another scope, another answer


def test_a_collections_searches_read_codes_from_its_pages_and_merged_postings_from_its_memo() -> None:
    a, b = slice_of("A", 40, 7), slice_of("B", 30, 8)
    indexes = indexes_over(a, b)
    held = indexes.held({"A": 1, "B": 1})
    assert held is not None
    indexes.place(held)  # as a warm-up does: the first search copies nothing
    assert indexes.pages.columns()[1] == 70
    placed = indexes.pages.place([a.vectors, b.vectors])
    assert all(np.shares_memory(s.vectors.codes, p.page.codes) for s, p in zip((a, b), placed, strict=True))
    fresh = [slice_of("A", 40, 7), slice_of("B", 30, 8)]  # the same slices, never placed
    query = a.embedding(2) * 0.5 + b.embedding(9) * 0.5
    assert indexes.dense(query, 10, held) == exact_search(query, 10, fresh)
    assert indexes.lexical("flood heritage", 10, held) == lexical_search("flood heritage", 10, fresh)
    assert indexes.postings.nbytes > 0


class CountedTexts(list[str]):
    """A slice's texts that count the texts read (as ``FileTexts`` reads each with a ``pread``)."""

    reads = 0

    def __getitem__(self, index):
        type(self).reads += 1
        return super().__getitem__(index)


def test_a_hits_text_is_read_only_when_asked_for_once_and_equals_the_stored_chunk() -> None:
    a = slice_of("A", 30, 4)
    counted = CorpusIndex("A", 1, a.ids, a.vectors, CountedTexts(a.texts), a.metadatas)
    indexes = indexes_over(counted)
    held = indexes.held({"A": 1})
    assert held is not None
    CountedTexts.reads = 0
    hits = indexes.dense(a.embedding(2), 10, held)
    lexical = indexes.lexical("flood drainage", 10, held)
    assert len(hits) == 10 and lexical.hits and CountedTexts.reads == 0
    best = hits[0]
    assert best.text == a.texts[2] and best.text == a.texts[2] and CountedTexts.reads == 1
    stored = StoredChunk(id=best.id, text=a.texts[2], metadata=dict(best.metadata), distance=best.distance)
    assert best == stored and stored == best and best != replace(stored, text="other")
    moved = replace(best, distance=0.5)
    assert moved == replace(stored, distance=0.5) and moved.text == best.text
    assert hits == exact_search(a.embedding(2), 10, [a]) and CountedTexts.reads == 10
