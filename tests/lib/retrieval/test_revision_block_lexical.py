"""A revision block's lexical twin: built on first use from the block's own texts under their headings
(citation and chapter); an application document's chunks under their file's name."""

from __future__ import annotations

from lib.documents.index import document_lexical_text
from lib.policies.chunks import policy_lexical_text
from lib.retrieval.corpus_index import CorpusIndex
from lib.retrieval.lexical import lexical_text
from lib.retrieval.slice_search import lexical_search
from lib.retrieval.tokens import tokenize


def block(key: str, texts: list[str], refs: list[str]) -> CorpusIndex:
    ids = [f"{key}__{i:03d}" for i in range(len(texts))]
    metadatas = [{"section_ref": r} for r in refs]
    return CorpusIndex.from_texts(key, (len(texts), ""), ids, texts, metadatas, policy_lexical_text)


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


def test_the_heading_context_comes_once_before_the_text() -> None:
    assert lexical_text(["Para 116", "9. Promoting sustainable transport"], "116. Development should...") == (
        "Para 116\n9. Promoting sustainable transport\n116. Development should..."
    )
    assert lexical_text(["Chapter 9", "9. Promoting sustainable transport"], "9. Promoting sustainable transport") == (
        "Chapter 9\n9. Promoting sustainable transport"
    )  # the chapter's own heading chunk carries it once
    assert lexical_text(["", " ", "Title"], "Title\n\nAbstract") == "Title\n\nAbstract"


def test_every_chunk_of_a_chapter_answers_to_the_chapters_heading() -> None:
    chapter = "9. Promoting sustainable transport"
    texts = [chapter, "116. Development should only be refused on highways grounds.", "continued text"]
    metas = [{"section_ref": r, "chapter": chapter} for r in ("Chapter 9", "Para 116", "Para 116")]
    other = {"section_ref": "Para 1", "chapter": "1. Introduction"}
    a = CorpusIndex.from_texts(
        "NPPF:a",
        (4, ""),
        [f"a{i}" for i in range(4)],
        [*texts, "Sustainable homes."],
        [*metas, other],
        policy_lexical_text,
    )
    found = lexical_search("sustainable transport", 10, [a]).hits
    assert {c.id for c, _ in found} == {"a0", "a1", "a2", "a3"}
    assert found[-1][0].id == "a3"  # "sustainable" alone, under another chapter
    indexed = [policy_lexical_text(m, t) for t, m in zip(a.texts, a.metadatas, strict=True)]
    assert indexed[1] == f"Para 116\n{chapter}\n{texts[1]}"
    assert list(a.lexical.lengths) == [len(tokenize(i)) for i in indexed]
    assert a.lexical.lengths[0] == len(tokenize(f"Chapter 9\n{chapter}"))
    assert a.texts == [*texts, "Sustainable homes."]  # what is returned and embedded stays the stored text


def test_an_application_documents_chunk_is_indexed_under_its_files_name() -> None:
    meta = {"source_file": "Flood_Risk_Assessment.pdf", "document_type": "flood_risk_assessment"}
    assert document_lexical_text(meta, "Surface water drains to the brook.") == (
        "Flood Risk Assessment\nSurface water drains to the brook."
    )
    assert tokenize(document_lexical_text({"source_file": "21_03426_FUL-Heritage_Statement.pdf"}, "flood")) == [
        "21",
        "03426",
        "ful",
        "heritag",
        "statement",
        "flood",
    ]
    assert document_lexical_text({}, "text") == "text"
