"""Citable sections (spec 000 appendix ``section_ref``/``chapter``) of the two real NPPF PDFs.

Expected values were read off the PDFs themselves: NPPF December 2024 has numbered paragraphs 1..243
(the last, in Annex 1, on PDF page 69) and footnotes 1..91; the draft of December 2025 has paragraphs
1..17 in chapter 1, policies such as ``TR6`` in chapters 2..20, Annexes A..F with their own numbering and
tables 1..3 in Annex F, and footnotes 1..88.
"""

from __future__ import annotations

import re

import pytest

from lib.models import ExtractedDocument, Section
from lib.text.extraction import extract_document
from lib.text.sections import split_sections
from tests.fixtures_paths import DRAFT_NPPF_2025, NPPF_2024, SCANNED_WITH_TEXT_LAYER_PDF, TABLE_PDF

NPPF_2024_PARAGRAPHS = 243
NPPF_2024_FOOTNOTES = 91
DRAFT_2025_FOOTNOTES = 88

PARA_116 = (
    "116. Development should only be prevented or refused on highways grounds if there would be an "
    "unacceptable impact on highway safety, or the residual cumulative impacts on the road network, "
    "following mitigation, would be severe, taking into account all reasonable future scenarios."
)


@pytest.fixture(scope="module")
def nppf_2024_document() -> ExtractedDocument:
    return extract_document(NPPF_2024.read_bytes(), file_name=NPPF_2024.name, enable_ocr=False)


@pytest.fixture(scope="module")
def draft_2025_document() -> ExtractedDocument:
    return extract_document(DRAFT_NPPF_2025.read_bytes(), file_name=DRAFT_NPPF_2025.name, enable_ocr=False)


@pytest.fixture(scope="module")
def nppf_2024(nppf_2024_document: ExtractedDocument) -> list[Section]:
    return split_sections(nppf_2024_document)


@pytest.fixture(scope="module")
def draft_2025(draft_2025_document: ExtractedDocument) -> list[Section]:
    return split_sections(draft_2025_document)


def by_ref(sections: list[Section]) -> dict[str, Section]:
    return {section.section_ref: section for section in sections}


def refs_like(sections: list[Section], pattern: str) -> list[str]:
    return [section.section_ref for section in sections if re.fullmatch(pattern, section.section_ref)]


def letters(text: str) -> str:
    """Only the letters, so footnote markers, exponents, spacing and line breaks do not matter."""
    return re.sub(r"[^a-z]", "", text.lower())


def footnote_body(section: Section) -> str:
    """A footnote's words without its leading number."""
    return section.text.split(" ", 1)[1]


# --- NPPF December 2024 --------------------------------------------------------------------------------


def test_nppf_2024_paragraph_116_is_exactly_its_own_text_on_page_33_in_chapter_9(nppf_2024: list[Section]) -> None:
    section = by_ref(nppf_2024)["Para 116"]
    assert section.text == PARA_116
    assert section.page_number == 33
    assert section.page_spans == [(0, 33)]
    assert section.chapter == "9. Promoting sustainable transport"
    assert section.title == "Considering development proposals"


def test_nppf_2024_paragraph_numbered_alone_on_its_line_joins_the_text_that_follows(
    nppf_2024: list[Section],
) -> None:
    para_1 = by_ref(nppf_2024)["Para 1"]
    assert para_1.text.startswith("1. The National Planning Policy Framework sets out the Government’s planning")
    assert (para_1.page_number, para_1.chapter) == (4, "1. Introduction")


def test_every_numbered_paragraph_of_nppf_2024_appears_exactly_once_and_in_order(nppf_2024: list[Section]) -> None:
    paragraphs = refs_like(nppf_2024, r"Para \d+")
    assert paragraphs == [f"Para {number}" for number in range(1, NPPF_2024_PARAGRAPHS + 1)]
    last = by_ref(nppf_2024)[f"Para {NPPF_2024_PARAGRAPHS}"]
    assert last.text.startswith("243. The Government will continue to explore with individual areas")
    assert (last.page_number, last.chapter) == (69, "Annex 1: Implementation")


def test_no_nppf_2024_paragraph_straddles_the_next_one(nppf_2024: list[Section]) -> None:
    sections = by_ref(nppf_2024)
    for number in range(1, NPPF_2024_PARAGRAPHS + 1):
        text = sections[f"Para {number}"].text
        assert text.startswith(f"{number}. ")
        assert not re.search(rf"(^|\n){number + 1}\. ", text), number
    para_115 = sections["Para 115"].text
    assert "116." not in para_115 and "Development should only be prevented" not in para_115
    assert "115." not in sections["Para 117"].text


def test_nppf_2024_chapters_and_annexes_have_their_own_refs(nppf_2024: list[Section]) -> None:
    sections = by_ref(nppf_2024)
    assert refs_like(nppf_2024, r"Chapter \d+") == [f"Chapter {number}" for number in range(1, 18)]
    assert refs_like(nppf_2024, r"Annex \d+") == ["Annex 1", "Annex 2", "Annex 3"]
    assert sections["Chapter 9"].chapter == "9. Promoting sustainable transport"
    assert sections["Chapter 9"].page_number == 31
    chapter_14 = sections["Chapter 14"]
    assert chapter_14.chapter == "14. Meeting the challenge of climate change, flooding and coastal change"
    assert [sections[ref].page_number for ref in ("Annex 1", "Annex 2", "Annex 3")] == [67, 70, 81]
    assert sections["Annex 3"].chapter == "Annex 3: Flood risk vulnerability classification"
    assert "WATER-COMPATIBLE DEVELOPMENT" in sections["Annex 3"].text
    assert sections["Para 231"].chapter == "Annex 1: Implementation"


def test_nppf_2024_front_matter_is_cited_by_page(nppf_2024: list[Section]) -> None:
    assert [section.section_ref for section in nppf_2024[:4]] == ["Page 1", "Page 2", "Page 3", "Chapter 1"]
    assert "Contents" in by_ref(nppf_2024)["Page 3"].text


def test_nppf_2024_footnotes_are_sections_of_their_own_and_leave_a_marker_in_the_paragraph(
    nppf_2024: list[Section],
) -> None:
    sections = by_ref(nppf_2024)
    assert refs_like(nppf_2024, r"Footnote \d+") == [f"Footnote {n}" for n in range(1, NPPF_2024_FOOTNOTES + 1)]
    footnote_48 = sections["Footnote 48"]
    assert footnote_48.text == (
        "48 Policies and decisions should not make use of or reflect the former Design Bulletin 32, which was "
        "withdrawn in 2007."
    )
    assert (footnote_48.page_number, footnote_48.chapter) == (33, "9. Promoting sustainable transport")
    para_115 = sections["Para 115"].text
    assert "the National Design Guide and the National Model Design Code[^48]; and" in para_115
    assert "Design Bulletin 32" not in para_115
    para_11 = sections["Para 11"].text
    assert "in the plan area[^7]; or" in para_11 and "in combination[^9]." in para_11
    assert "The policies referred to are those in this Framework" not in para_11
    assert sections["Footnote 7"].text.startswith("7 The policies referred to are those in this Framework")


def test_nppf_2024_footnote_cut_by_a_page_break_is_rejoined_and_kept_out_of_the_next_page(
    nppf_2024: list[Section],
) -> None:
    sections = by_ref(nppf_2024)
    footnote_62 = sections["Footnote 62"]
    assert footnote_62.page_number == 50
    assert [page for _, page in footnote_62.page_spans] == [50, 51]
    assert footnote_62.text.endswith(
        "or to a mobile home or park home site, where the sequential and exception tests should be applied as "
        "appropriate."
    )
    assert "less than 250m²" in footnote_62.text
    page_51 = [s for s in nppf_2024 if s.page_number == 51 and not s.section_ref.startswith("Footnote")]
    assert page_51 and not any("park home site, where the sequential" in s.text for s in page_51)


def test_no_footnote_text_is_glued_into_any_paragraph_policy_or_chapter(
    nppf_2024: list[Section], draft_2025: list[Section]
) -> None:
    for sections in (nppf_2024, draft_2025):
        footnotes = [footnote_body(s)[:100] for s in sections if s.section_ref.startswith("Footnote")]
        bodies = [s.text for s in sections if not s.section_ref.startswith(("Footnote", "Page"))]
        glued = [(fn, body[:40]) for fn in footnotes for body in bodies if fn in body]
        assert glued == []


def test_no_section_text_contains_a_running_page_number(nppf_2024: list[Section], draft_2025: list[Section]) -> None:
    for sections in (nppf_2024, draft_2025):
        for section in sections:
            assert not any(re.fullmatch(r"\d{1,3}", line.strip()) for line in section.text.splitlines()), (
                section.section_ref
            )
    # Para 28 runs from page 10 onto page 11, whose printed page number "11" must not appear at the join.
    para_28 = by_ref(nppf_2024)["Para 28"]
    join = para_28.page_spans[1][0]
    assert para_28.page_spans == [(0, 10), (join, 11)]
    assert not re.search(r"\b11\b", para_28.text[join - 5 : join + 10])


def test_nppf_2024_glossary_terms_are_cited_as_glossary_entries(nppf_2024: list[Section]) -> None:
    sections = by_ref(nppf_2024)
    assert len(refs_like(nppf_2024, r"Glossary: .+")) > 90
    grey_belt = sections["Glossary: Grey belt"]
    assert grey_belt.chapter == "Annex 2: Glossary"
    assert grey_belt.text.startswith("Grey belt: For the purposes of plan-making and decision-making")
    major = sections["Glossary: Major development"]
    assert major.text.startswith("Major development[^91]: For housing, development where 10 or more homes")
    assert "floorspace of 1,000m² or more" in major.text
    affordable = sections["Glossary: Affordable housing"].text
    assert "\n\na) Social Rent: meets all of the following conditions" in affordable
    assert "Glossary: Social Rent" not in sections


# --- draft NPPF December 2025 --------------------------------------------------------------------------


def test_draft_2025_policy_tr6_holds_its_numbered_sub_paragraphs_on_page_73(draft_2025: list[Section]) -> None:
    sections = by_ref(draft_2025)
    tr6 = sections["Policy TR6"]
    assert (tr6.page_number, tr6.chapter, tr6.title) == (
        73,
        "15. Promoting sustainable transport",
        "Assessing transport impacts",
    )
    assert tr6.text.startswith(
        "TR6: Assessing transport impacts\n\n1. Development proposals that are likely to generate significant"
    )
    for opening in (
        "\n\na. A transport statement or transport assessment",
        "\n\n2. Transport assessments and statements, and travel plans",
        "\n\n3. All development proposals should be capable of proceeding without having a severe",
        "\n\n4. In assessing potential impacts, all reasonable future scenarios should be considered",
    ):
        assert opening in tr6.text
    assert tr6.text.endswith("and realising the transport vision for the development itself.")
    assert "TR7" not in tr6.text and "Roadside facilities" not in tr6.text
    assert "TR6:" not in sections["Policy TR5"].text


def test_every_policy_heading_of_the_draft_2025_is_one_section(
    draft_2025_document: ExtractedDocument, draft_2025: list[Section]
) -> None:
    chapters = draft_2025_document.pages[4:99]  # Annex C, after them, lists policies again in a table
    headings = [
        match[1] for page in chapters for match in re.finditer(r"^([A-Z]{1,3}\d{1,2}):\s", page.text, re.MULTILINE)
    ]
    assert len(headings) == len(set(headings)) > 120
    assert refs_like(draft_2025, r"Policy [A-Z]+\d+") == [f"Policy {code}" for code in headings]
    sections = by_ref(draft_2025)
    assert sections["Policy HC4"].title == (
        "Proposals for new and improved community facilities and public service infrastructure"
    )
    assert sections["Policy PM1"].chapter == "2. Plan-making policies"


def test_draft_2025_numbered_paragraphs_annexes_and_tables_get_their_own_refs(draft_2025: list[Section]) -> None:
    sections = by_ref(draft_2025)
    assert refs_like(draft_2025, r"Para \d+") == [f"Para {number}" for number in range(1, 18)]
    assert refs_like(draft_2025, r"Annex [A-F]") == [f"Annex {letter}" for letter in "ABCDEF"]
    assert refs_like(draft_2025, r"Annex A Para \d+") == [f"Annex A Para {number}" for number in range(1, 11)]
    assert refs_like(draft_2025, r"Annex D Para \d+") == [f"Annex D Para {number}" for number in range(1, 14)]
    assert refs_like(draft_2025, r"Table \d+") == ["Table 1", "Table 2", "Table 3"]
    assert sections["Annex A"].page_number == 100
    assert sections["Annex D Para 7"].text.startswith("7. Where an adjustment is to be made, the precise formula")
    assert sections["Table 1"].title == "Flood zones (risks from river and sea flooding)"
    assert sections["Table 1"].chapter == "Annex F: Managing Flood Risk and Coastal Change"
    assert "Zone 3b The Functional Floodplain" in sections["Table 1"].text
    assert "Table 2" not in sections["Table 1"].text
    assert sections["Glossary: Grey belt"].chapter == "Annex B: Glossary"


def test_draft_2025_chapter_intro_keeps_its_objective_before_the_first_policy(draft_2025: list[Section]) -> None:
    chapter_15 = by_ref(draft_2025)["Chapter 15"]
    assert chapter_15.text.startswith(
        "15. Promoting sustainable transport\n\nThe objective of the policies in this chapter is to ensure"
    )
    assert "TR1" not in chapter_15.text
    assert refs_like(draft_2025, r"Footnote \d+") == [f"Footnote {n}" for n in range(1, DRAFT_2025_FOOTNOTES + 1)]


# --- properties of every section -----------------------------------------------------------------------


def test_section_refs_are_unique_and_sections_are_never_empty(
    nppf_2024: list[Section], draft_2025: list[Section]
) -> None:
    for sections in (nppf_2024, draft_2025):
        refs = [section.section_ref for section in sections]
        assert len(refs) == len(set(refs))
        assert all(section.text.strip() for section in sections)


def test_page_spans_point_at_where_each_page_begins(
    nppf_2024_document: ExtractedDocument,
    draft_2025_document: ExtractedDocument,
    nppf_2024: list[Section],
    draft_2025: list[Section],
) -> None:
    for document, sections in ((nppf_2024_document, nppf_2024), (draft_2025_document, draft_2025)):
        page_letters = {page.page_number: letters(page.text) for page in document.pages}
        for section in sections:
            spans = section.page_spans
            assert spans[0] == (0, section.page_number)
            assert [offset for offset, _ in spans] == sorted({offset for offset, _ in spans})
            assert [page for _, page in spans] == sorted({page for _, page in spans})
            for offset, page in spans:
                opening = letters(section.text[offset : offset + 60])[:30]
                assert opening in page_letters[page], (section.section_ref, page, opening)


# --- documents without structure -----------------------------------------------------------------------


def test_document_without_structure_falls_back_to_one_section_per_page() -> None:
    document = extract_document(SCANNED_WITH_TEXT_LAYER_PDF.read_bytes())
    sections = split_sections(document)
    assert [section.section_ref for section in sections] == [f"Page {number}" for number in range(1, 7)]
    assert [section.text for section in sections] == [page.text for page in document.pages]
    assert all(section.page_spans == [(0, section.page_number)] for section in sections)
    assert all(section.chapter == "" for section in sections)


def test_table_document_falls_back_to_its_page() -> None:
    document = extract_document(TABLE_PDF.read_bytes())
    assert [(section.section_ref, section.text) for section in split_sections(document)] == [
        ("Page 1", document.pages[0].text)
    ]


def test_policy_text_without_layout_is_cited_by_page(nppf_2024_document: ExtractedDocument) -> None:
    """OCR pages carry no font sizes, so chapters cannot be told from paragraphs: page refs stay honest."""
    plain = ExtractedDocument(
        pages=[page.model_copy(update={"lines": []}) for page in nppf_2024_document.pages[30:34]], method="ocr"
    )
    sections = split_sections(plain)
    assert [section.section_ref for section in sections] == ["Page 31", "Page 32", "Page 33", "Page 34"]
