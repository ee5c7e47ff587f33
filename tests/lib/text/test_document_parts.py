"""Documents read part by part (``lib.text.document_parts``): material bound into a report or plan (a schedule
of main modifications, a glossary, an appendix numbered its own way) never changes how its body is read, and is
cited in its own notation. Generated PDFs (``local_plan_pdfs``), one layout each."""

from __future__ import annotations

import pytest

from lib.models import Section
from lib.text.document_parts import Numbering, split_parts
from lib.text.extraction import extract_document
from lib.text.layout_rows import Row, body_size, read_rows
from lib.text.section_report import report_reading
from lib.text.sections import SectionReading, read_sections
from tests.lib.text.local_plan_pdfs import (
    CORE_POLICIES,
    GLOSSARY,
    PARKING_STANDARDS,
    bound_report_pdf,
    core_strategy_pdf,
    inspectors_report_pdf,
    local_plan_pdf,
    modifications_pdf,
    plan_with_glossary_and_appendix_pdf,
    report_with_schedule_on_its_last_page_pdf,
)


def read(pdf: bytes) -> SectionReading:
    return read_sections(extract_document(pdf, enable_ocr=False))


def refs_and_pages(sections: list[Section], offset: int = 0) -> set[tuple[str, int]]:
    """(ref, PDF page) of every section; ``offset`` moves a document read alone to where it is bound."""
    moved = set()
    for section in sections:
        ref = section.section_ref
        if ref.startswith("Page "):
            ref = f"Page {int(ref.removeprefix('Page ')) + offset}"
        moved.add((ref, section.page_number + offset))
    return moved


@pytest.fixture(scope="module")
def bound() -> SectionReading:
    return read(bound_report_pdf())


@pytest.fixture(scope="module")
def core() -> SectionReading:
    return read(core_strategy_pdf())


@pytest.fixture(scope="module")
def glossary_plan() -> SectionReading:
    return read(plan_with_glossary_and_appendix_pdf())


def test_a_report_with_its_schedule_bound_in_reads_as_the_two_read_apart(bound: SectionReading) -> None:
    report, schedule = read(inspectors_report_pdf()), read(modifications_pdf())
    report_pages = extract_document(inspectors_report_pdf(), enable_ocr=False).page_count
    expected = refs_and_pages(report.sections) | refs_and_pages(schedule.sections, report_pages)
    assert refs_and_pages(bound.sections) == expected


def test_a_schedule_whose_cover_names_no_part_still_reads_as_apart() -> None:
    report, schedule = read(inspectors_report_pdf()), read(modifications_pdf(cover_heading=False))
    report_pages = extract_document(inspectors_report_pdf(), enable_ocr=False).page_count
    expected = refs_and_pages(report.sections) | refs_and_pages(schedule.sections, report_pages)
    assert refs_and_pages(read(bound_report_pdf(cover_heading=False)).sections) == expected


def test_the_reports_paragraphs_and_the_schedules_codes_are_both_citable(bound: SectionReading) -> None:
    kinds = {section.section_ref: section.kind for section in bound.sections}
    assert [ref for ref, kind in kinds.items() if kind == "paragraph"] == ["Para 1", "Para 2", "Para 3", "Para 4"]
    assert [ref for ref, kind in kinds.items() if kind == "modification"] == [f"MM{n}" for n in range(1, 8)]
    mm4 = next(section for section in bound.sections if section.section_ref == "MM4")
    assert "3.5 Affordable housing" in mm4.text  # the plan's paragraph it quotes is its text, not a paragraph


def test_the_bound_documents_parts_are_the_report_then_the_schedule() -> None:
    document = extract_document(bound_report_pdf(), enable_ocr=False)
    rows: list[Row] = read_rows(document.pages)
    parts = split_parts(rows, body_size(document.pages))
    assert [(rows[part.start].page, part.grammar.modifications) for part in parts] == [(1, False), (3, True)]
    assert parts[0].grammar.numbering is Numbering.UNDECIDED  # four paragraphs: too few to tell, read as whole


def test_a_schedule_starting_under_the_reports_last_paragraph_leaves_the_paragraphs_whole() -> None:
    reading = read(report_with_schedule_on_its_last_page_pdf())
    paragraphs = [s for s in reading.sections if s.kind == "paragraph"]
    assert [s.section_ref for s in paragraphs] == [f"Para {n}" for n in range(1, 7)]
    assert "Schedule" not in paragraphs[-1].text and paragraphs[-1].text.endswith("which make it effective.")
    codes = [s.section_ref for s in reading.sections if s.kind == "modification"]
    assert codes == [f"MM{n}" for n in range(1, 22)]


def test_a_schedule_prefixed_by_the_plan_it_changes_is_cited_by_its_codes() -> None:
    reading = read(modifications_pdf(prefix="AAP/MM"))
    codes = [section.section_ref for section in reading.sections if section.kind == "modification"]
    assert codes == [f"AAP/MM{n}" for n in range(1, 8)]


def test_a_policy_label_over_its_code_heads_the_policy(core: SectionReading) -> None:
    policies = {s.section_ref: s for s in core.sections if s.kind == "policy"}
    assert list(policies) == [f"Policy {code}" for code, _ in CORE_POLICIES] + ["Policy CSP4", "Policy CSP5"]
    for code, first_words in CORE_POLICIES:
        text = policies[f"Policy {code}"].text
        assert text.startswith(f"Policy {code} {first_words}")
        assert text.rstrip().endswith("against the design guidance in force.")


def test_the_core_strategys_paragraphs_stay_numbered_and_supporting_their_policies(core: SectionReading) -> None:
    paragraphs = {s.section_ref: s for s in core.sections if s.kind == "paragraph"}
    assert list(paragraphs) == ["Para 5.1", "Para 5.2", "Para 5.3", "Para 5.4", "Para 5.5", "Para 5.6"]
    assert (paragraphs["Para 5.5"].supports, paragraphs["Para 5.6"].supports) == ("Policy CSP4", "Policy CSP5")


def test_a_policy_heading_right_under_a_bold_caption_is_not_the_captions_title(core: SectionReading) -> None:
    sections = {s.section_ref: s for s in core.sections}
    assert "CSP4" not in sections["Table 3"].title
    assert sections["Policy CSP4"].title == "Development Outside the Growth Network"
    assert "green belt" in sections["Policy CSP4"].text


def test_a_listed_heading_read_on_one_row_with_a_caption_across_the_page_is_the_policy(
    core: SectionReading,
) -> None:
    policy = next(s for s in core.sections if s.section_ref == "Policy CSP5")
    assert (policy.title, policy.text.split("\n")[0]) == ("Cycling Networks", "CSP5 Cycling Networks")
    assert "Joint working" in policy.text and "Diagram" not in policy.text
    assert report_reading(core).missing_policies == []


def test_a_glossary_and_an_appendix_do_not_change_how_the_body_is_read(glossary_plan: SectionReading) -> None:
    alone = read(local_plan_pdf())
    body = {(s.section_ref, s.page_number, s.text) for s in alone.sections}
    assert body <= {(s.section_ref, s.page_number, s.text) for s in glossary_plan.sections}
    policies = [s.section_ref for s in glossary_plan.sections if s.kind == "policy"]
    assert policies == ["Policy LP1", "Policy CS 1", "Policy H2"]  # not the glossary's "LP4:"


def test_glossary_entries_are_cited_by_their_terms(glossary_plan: SectionReading) -> None:
    terms = [s.section_ref for s in glossary_plan.sections if s.kind == "glossary"]
    assert terms == [f"Glossary: {term}" for term, _ in GLOSSARY]


def test_an_appendix_numbered_its_own_way_is_cited_within_the_appendix(glossary_plan: SectionReading) -> None:
    items = [(s.section_ref, s.text) for s in glossary_plan.sections if s.section_ref.startswith("Appendix 1 Para")]
    assert items == [(f"Appendix 1 Para {n}", f"{n}. {item}.") for n, item in enumerate(PARKING_STANDARDS, 1)]
