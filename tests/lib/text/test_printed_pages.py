"""Printed page numbers read from real PDFs written with PyMuPDF: each numbering a plan uses, and never a number
the page does not print."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import pymupdf
import pytest

from lib.citation import format_citation, page_citation
from lib.text.extraction import extract_document
from lib.text.layout_rows import read_printed, read_rows
from lib.text.printed_pages import from_stored, from_stored_list, stored, stored_list
from lib.text.sections import read_sections

WIDTH, HEIGHT = 595, 842
ROOT = Path(__file__).resolve().parents[3]


def _pdf(footers: Sequence[str | None], *, labels: list[dict[str, object]] | None = None) -> bytes:
    """One page per footer (None: the page prints no number), each with a line of body text."""
    doc = pymupdf.open()
    for index, footer in enumerate(footers):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        page.insert_text((60, 120), f"Body text of sheet {index + 1} of the example plan.", fontsize=10)
        page.insert_text((60, 400), "More text on the page, well inside the margins of the sheet.", fontsize=10)
        if footer is not None:
            page.insert_text((WIDTH / 2, HEIGHT - 30), footer, fontsize=9)
    if labels:
        doc.set_page_labels(labels)
    return doc.tobytes()


def _printed(data: bytes) -> dict[int, str]:
    return read_printed(extract_document(data, enable_ocr=False).pages)


def test_a_cover_then_numbers_one_behind_the_pdf_page() -> None:
    assert _printed(_pdf([None, "1", "2", "3", "4"])) == {2: "1", 3: "2", 4: "3", 5: "4"}


def test_roman_front_matter_then_arabic_from_one() -> None:
    printed = _printed(_pdf([None, "i", "ii", "iii", "1", "2", "3"]))
    assert printed == {2: "i", 3: "ii", 4: "iii", 5: "1", 6: "2", 7: "3"}


def test_a_jump_in_numbering_and_an_appendix_restarting_at_one() -> None:
    printed = _printed(_pdf(["10", "11", "12", "20", "21", "1", "2"]))
    assert printed == {1: "10", 2: "11", 3: "12", 4: "20", 5: "21", 6: "1", 7: "2"}


def test_appendix_pages_numbered_with_a_letter() -> None:
    printed = _printed(_pdf(["30", "31", "A-1", "A-2", "A-3"]))
    assert printed == {1: "30", 2: "31", 3: "A-1", 4: "A-2", 5: "A-3"}


def test_page_n_of_m_footers_and_a_page_without_a_number() -> None:
    printed = _printed(_pdf(["Page 1 of 4", None, "Page 3 of 4", "Page 4 of 4"]))
    assert printed == {1: "1", 3: "3", 4: "4"}


def test_numbers_set_between_dashes_and_words_for_page() -> None:
    assert _printed(_pdf(["- 1 -", "- 2 -", "p. 3", None])) == {1: "1", 2: "2", 3: "3"}


def test_a_list_letter_alone_at_the_foot_of_a_page_stays_in_the_text() -> None:
    document = extract_document(_pdf(["(c)", "(d)", "x", "xi"]), enable_ocr=False)
    text = "\n".join(s.text for s in read_sections(document).sections)
    assert "(c)" in text and "(d)" in text
    assert read_printed(document.pages) == {3: "x", 4: "xi"}


def test_footers_naming_their_chapter_carry_the_page_number() -> None:
    chapters = ["Housing", "Transport", "Design", "Heritage", "Economy", "Delivery"]
    footers = [f"{chapters[(n - 1) // 2]} | {n}" for n in range(1, 13)]
    assert _printed(_pdf(footers)) == {n: str(n) for n in range(1, 13)}


def test_captions_numbered_on_two_pages_in_a_row_are_no_page_numbers() -> None:
    assert _printed(_pdf([None, "Figure 3", "Figure 4", None, None])) == {}


def test_part_n_of_m_in_a_running_header_is_no_page_number() -> None:
    assert _printed(_pdf(["Local Plan Part 1 of 2"] * 4)) == {}
    assert _printed(_pdf([f"Local Plan Part 1 of 2 | Page {n}" for n in range(1, 5)])) == {
        n: str(n) for n in range(1, 5)
    }


def test_a_lone_number_that_keeps_step_with_no_page_is_not_taken() -> None:
    assert _printed(_pdf([None, "7", None, None, None, None, "40"])) == {}


def test_a_page_label_that_agrees_confirms_a_lone_number_and_one_that_disagrees_is_ignored() -> None:
    labels = [{"startpage": 0, "prefix": "", "style": "D", "firstpagenum": 1}]
    agreeing = _pdf([None, "2", None, None, None, None], labels=labels)
    assert _printed(agreeing) == {2: "2"}
    disagreeing = _pdf([None, "9", "10", "11", None], labels=labels)
    assert _printed(disagreeing) == {2: "9", 3: "10", 4: "11"}
    assert extract_document(disagreeing, enable_ocr=False).pages[1].label == "2"


def _footnoted(count: int, footnote_page: int) -> bytes:
    """``count`` pages numbered from 1 at their foot; on ``footnote_page`` a paragraph cites a footnote numbered
    as the page and the footnote (a small marker, then small text) stands just above the page number."""
    doc = pymupdf.open()
    for number in range(1, count + 1):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        page.insert_text((60, 120), f"1.{number} Body text of sheet {number} of the example plan.", fontsize=10)
        if number == footnote_page:
            page.insert_text((60, 400), "The plan is sound with the modifications listed.", fontsize=10)
            page.insert_text((302, 396), str(number), fontsize=5)
            page.insert_text((60, HEIGHT - 66), str(number), fontsize=5)
            page.insert_text((64, HEIGHT - 62), "Some footnote text.", fontsize=8)
        page.insert_text((WIDTH / 2, HEIGHT - 30), str(number), fontsize=9)
    return doc.tobytes()


def test_a_footnote_numbered_as_its_page_stays_a_footnote_and_the_page_keeps_its_number() -> None:
    document = extract_document(_footnoted(10, 9), enable_ocr=False)
    reading = read_sections(document)
    assert reading.printed == {n: str(n) for n in range(1, 11)}
    footnote = next(s for s in reading.sections if s.section_ref == "Footnote 9")
    assert "Some footnote text." in footnote.text
    assert (footnote.page_number, footnote.printed_page) == (9, "9")


def test_numbers_leading_words_in_the_margin_are_no_page_numbers_and_stay_in_the_text() -> None:
    topics = ["housing", "transport", "design", "heritage", "retail"]
    notes = [f"{n} See the {topic} evidence." for n, topic in zip(range(7, 12), topics, strict=True)]
    document = extract_document(_pdf(notes), enable_ocr=False)
    assert read_printed(document.pages) == {}
    text = "\n".join(s.text for s in read_sections(document).sections)
    assert all(note in text for note in notes)


def test_running_heads_led_and_ended_by_the_page_number_in_turn() -> None:
    doc = pymupdf.open()
    for number in range(52, 56):
        page = doc.new_page(width=WIDTH, height=HEIGHT)
        head = f"{number} THE SIEGE OF THE TOWN." if number % 2 == 0 else f"THE SIEGE OF THE TOWN. {number}"
        page.insert_text((60, 40), head, fontsize=9)
        page.insert_text((60, 400), f"Body text of sheet {number} of the example book.", fontsize=10)
    assert _printed(doc.tobytes()) == {1: "52", 2: "53", 3: "54", 4: "55"}


def test_a_short_footer_read_for_its_page_number_loses_the_number_only() -> None:
    chapters = ["Housing", "Transport", "Design", "Heritage", "Economy", "Delivery"]
    document = extract_document(_pdf([f"{chapters[(n - 1) // 2]} | {n}" for n in range(1, 13)]), enable_ocr=False)
    rows = [(row.text, row.printed_page) for row in read_rows(document.pages)]
    assert ("Heritage", "7") in rows and not any(text.startswith("Heritage |") for text, _ in rows)


def _landscape_spreads(pairs: list[tuple[int, int]]) -> bytes:
    """Landscape pages each printing two page numbers side by side, over body text in two halves."""
    doc = pymupdf.open()
    for left, right in pairs:
        page = doc.new_page(width=2 * WIDTH, height=HEIGHT)
        for x in (60, WIDTH + 60):
            for row in range(8):
                page.insert_text((x, 120 + 30 * row), "Body text set across one printed page of the plan.", fontsize=10)
        page.insert_text((WIDTH / 2, HEIGHT - 30), str(left), fontsize=9)
        page.insert_text((WIDTH + WIDTH / 2, HEIGHT - 30), str(right), fontsize=9)
    return doc.tobytes()


def test_two_page_spreads_print_both_numbers() -> None:
    assert _printed(_landscape_spreads([(62, 63), (64, 65)])) == {1: "62-63", 2: "64-65"}


def test_a_spread_numbered_as_one_range_between_single_pages() -> None:
    assert _printed(_pdf(["60", "61", "62-63", "64"])) == {1: "60", 2: "61", 3: "62-63", 4: "64"}


def test_sections_on_a_spread_carry_their_own_half_and_chunks_their_page() -> None:
    reading = read_sections(extract_document(_landscape_spreads([(62, 63), (64, 65)]), enable_ocr=False))
    assert reading.printed == {1: "62-63", 2: "64-65"}
    assert {s.printed_page for s in reading.sections} <= {"62", "63", "62-63", "64", "65", "64-65"}


def test_printed_pages_are_stored_as_chroma_accepts_and_read_back_as_none_where_absent() -> None:
    assert (stored(None), stored("57")) == ("", "57")
    assert [from_stored(v) for v in ("", None, 0, 57, "iv")] == [None, None, None, "57", "iv"]
    assert stored_list(["57", None, "62-63"]) == "57,,62-63"
    assert from_stored_list("57,,62-63", 3) == ["57", None, "62-63"]
    assert from_stored_list(None, 2) == [None, None]


def test_citations_lead_with_the_printed_page_and_give_the_pdf_page_where_it_differs() -> None:
    assert page_citation(58, "57") == "p. 57 (PDF page 58)"
    assert page_citation(33, "33") == "p. 33"
    assert page_citation(40, "62-63") == "pp. 62-63 (PDF page 40)"
    assert page_citation(3, None) == "PDF page 3"
    assert page_citation(7, "A-3") == "p. A-3 (PDF page 7)"
    assert (
        format_citation(document="NPPF December 2024", section_ref="Para 116", page_number=33, printed_page="33")
        == "NPPF December 2024, Para 116, p. 33"
    )


def test_the_nppf_prints_its_pdf_page_numbers_from_page_3() -> None:
    data = (ROOT / "deployments" / "seed" / "NPPF_December_2024.pdf").read_bytes()
    document = extract_document(data, enable_ocr=False)
    printed = read_printed(document.pages)
    assert 1 not in printed and 2 not in printed
    assert all(printed[n] == str(n) for n in range(3, document.page_count + 1))
    paragraph = next(s for s in read_sections(document).sections if s.section_ref == "Para 116")
    assert (paragraph.page_number, paragraph.printed_page) == (33, "33")


def _shared_data() -> Path:
    return Path(os.environ.get("POLICY_KB_SHARED_DATA", ROOT / ".." / "shared" / "data"))


@pytest.mark.skipif(
    not (_shared_data() / "local_plans" / "fenland_local_plan_adopted_2014.pdf").exists(),
    reason="the Fenland Local Plan is read from ../shared/data (not redistributable); set POLICY_KB_SHARED_DATA",
)
def test_fenland_policy_lp12_runs_from_printed_page_56_and_pdf_page_58_prints_57() -> None:
    data = (_shared_data() / "local_plans" / "fenland_local_plan_adopted_2014.pdf").read_bytes()
    reading = read_sections(extract_document(data, enable_ocr=False))
    policy = next(s for s in reading.sections if s.section_ref == "Policy LP12")
    assert (policy.page_number, policy.printed_page, policy.last_page) == (57, "56", 59)
    assert (reading.printed[58], reading.printed[109]) == ("57", "108")
    assert 96 not in reading.printed and 97 not in reading.printed  # a chart and a page that print no number


@pytest.mark.parametrize(
    ("name", "page", "words"),
    [
        ("watford_local_plan_inspectors_report.pdf", 9, "SUB12 and SUB14."),
        ("broxbourne_local_plan_inspectors_report.pdf", 8, "SUB8."),
    ],
)
def test_inspectors_footnotes_numbered_as_their_page_stay_footnotes(name: str, page: int, words: str) -> None:
    path = _shared_data() / "local_plans" / name
    if not path.exists():
        pytest.skip(f"{name} is read from ../shared/data (not redistributable); set POLICY_KB_SHARED_DATA")
    reading = read_sections(extract_document(path.read_bytes(), enable_ocr=False))
    assert reading.printed[page] == str(page)
    footnote = next(s for s in reading.sections if s.section_ref == f"Footnote {page}")
    assert words in footnote.text
    assert (footnote.page_number, footnote.printed_page) == (page, str(page))
