"""Chunking per spec 003 FR-006: 800/200, separator order, separators kept with the preceding chunk,
pages tracked, and policy chunks never crossing a section."""

from __future__ import annotations

from lib.models import PageText, Section
from lib.text.chunking import CHUNK_OVERLAP, CHUNK_SIZE, SEPARATORS, chunk_pages, chunk_sections, make_splitter

SENTENCE = "Development should only be prevented or refused on highways grounds if the impact would be severe. "


def test_splitter_uses_the_spec_sizes_and_separator_hierarchy() -> None:
    splitter = make_splitter()
    assert (splitter._chunk_size, splitter._chunk_overlap) == (CHUNK_SIZE, CHUNK_OVERLAP) == (800, 200)
    assert splitter._separators == SEPARATORS == ["\n\n", "\n", ". ", "! ", "? ", "; ", ", ", " ", ""]


def test_chunks_are_at_most_800_characters_and_sentences_keep_their_full_stop() -> None:
    chunks = chunk_pages([PageText(page_number=1, text=SENTENCE * 30, method="text_layer")])
    assert len(chunks) > 3
    assert all(len(c.text) <= 800 for c in chunks)
    assert all(c.text.endswith(".") for c in chunks[:-1]), "the '. ' separator stays with the preceding chunk"


def test_consecutive_chunks_overlap_by_up_to_200_characters() -> None:
    chunks = chunk_pages([PageText(page_number=1, text=SENTENCE * 30, method="text_layer")])
    first, second = chunks[0].text, chunks[1].text
    shared = max(k for k in range(0, 201) if first.endswith(second[:k]))
    assert 0 < shared <= 200


def test_page_tracking_records_every_page_a_chunk_spans() -> None:
    pages = [
        PageText(page_number=4, text="a" * 500, method="text_layer"),
        PageText(page_number=5, text="b" * 500, method="text_layer"),
        PageText(page_number=6, text="", method="none"),
        PageText(page_number=7, text="c " * 100, method="ocr"),
    ]
    chunks = chunk_pages(pages)
    assert chunks[0].page_numbers[0] == 4
    assert {p for c in chunks for p in c.page_numbers} == {4, 5, 7}
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))


def test_policy_chunks_never_straddle_sections_and_are_indexed_across_the_revision() -> None:
    sections = [
        Section(
            section_ref="Para 115",
            chapter="9. Promoting sustainable transport",
            text=SENTENCE * 12,
            page_number=32,
            page_spans=[(0, 32), (600, 33)],
        ),
        Section(
            section_ref="Para 116",
            chapter="9. Promoting sustainable transport",
            text=SENTENCE,
            page_number=33,
            page_spans=[(0, 33)],
        ),
    ]
    chunks = chunk_sections(sections)
    para116 = [c for c in chunks if c.section_ref == "Para 116"]
    assert len(para116) == 1 and para116[0].text == SENTENCE.strip() and para116[0].page_numbers == [33]
    assert {p for c in chunks if c.section_ref == "Para 115" for p in c.page_numbers} == {32, 33}
    assert [c.chunk_index for c in chunks] == list(range(len(chunks)))
    assert all(c.chapter == "9. Promoting sustainable transport" for c in chunks)


def test_empty_sections_make_no_chunks() -> None:
    assert chunk_sections([Section(section_ref="Para 1", text="  \n ", page_number=1)]) == []
    assert chunk_pages([]) == []


def test_chunks_carry_their_sections_kind_title_printed_page_and_supported_policy() -> None:
    section = Section(
        section_ref="Para 3.60",
        title="Replacement dwellings",
        text="Some text. " * 250,
        page_number=40,
        page_spans=[(0, 40), (1000, 41)],
        printed_page="38",
        supports="Policy RES9",
    )
    chunks = chunk_sections([section], printed={40: "38-39", 41: "40"})
    assert {(c.kind, c.title, c.supports, c.last_page) for c in chunks} == {
        ("paragraph", "Replacement dwellings", "Policy RES9", 41)
    }
    assert {(c.page_number, c.printed_page) for c in chunks} == {(40, "38"), (41, "40")}
    assert {tuple(c.printed_pages) for c in chunks if len(c.page_numbers) == 2} == {("38", "40")}


def test_page_chunks_carry_the_pages_printed_and_none_where_nothing_is_printed() -> None:
    pages = [PageText(page_number=n, text=f"Page {n} text. " * 60, method="text_layer") for n in (1, 2)]
    chunks = chunk_pages(pages, printed={2: "iv"})
    assert {(c.page_number, c.printed_page) for c in chunks} == {(1, None), (2, "iv")}
    assert {tuple(c.printed_pages) for c in chunks} == {(None,), ("iv",)}
