"""A revision block's lexical twin: built on first use from the block's own texts and citations."""

from __future__ import annotations

from lib.stores.block_cache import RevisionBlock, lexical_search


def block(key: str, texts: list[str], refs: list[str]) -> RevisionBlock:
    ids = [f"{key}__{i:03d}" for i in range(len(texts))]
    return RevisionBlock.from_texts(key, (len(texts), ""), ids, texts, [{"section_ref": r} for r in refs])


def test_the_twin_is_built_once_on_first_use_and_indexes_each_chunks_citation() -> None:
    a = block("NPPF:a", ["Development should be refused on highways grounds.", "continued text"], ["Para 116"] * 2)
    assert "lexical" not in vars(a)
    twin = a.lexical
    assert a.lexical is twin and twin.rows == 2
    answer = lexical_search("paragraph 116", 10, [a])
    assert {c.id for c, _ in answer.hits} == {"NPPF:a__000", "NPPF:a__001"}  # the continuation too
    assert all(c.distance is None and c.metadata["section_ref"] == "Para 116" for c, _ in answer.hits)
    assert all(0 < score < answer.ceiling for _, score in answer.hits)


def test_lexical_search_over_several_blocks_names_each_chunk_and_finds_nothing_for_unknown_words() -> None:
    a = block("NPPF:a", ["Cycle parking should be secure."], ["Para 1"])
    b = block("LTN:b", ["Cycle tracks on busy roads.", "Heritage."], ["Chapter 6", "Chapter 7"])
    hits = lexical_search("cycle tracks", 10, [a, b]).hits
    assert [c.id for c, _ in hits] == ["LTN:b__000", "NPPF:a__000"]
    empty = lexical_search("nothing known", 10, [a, b])
    assert (empty.hits, empty.ceiling) == ([], 0.0)
