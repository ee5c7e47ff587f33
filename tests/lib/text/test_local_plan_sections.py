"""Local plans cited in their own notation, on generated PDFs (``local_plan_pdfs``), one layout feature a test."""

from __future__ import annotations

import pytest

from lib.models import Section
from lib.text.extraction import extract_document
from lib.text.section_report import report_reading
from lib.text.sections import SectionReading, read_sections
from tests.lib.text.local_plan_pdfs import (
    HEADER,
    inspectors_report_pdf,
    local_plan_pdf,
    modifications_pdf,
    repeated_headings_pdf,
    spread_pdf,
    two_column_pdf,
    unstructured_pdf,
)


@pytest.fixture(scope="module")
def plan() -> SectionReading:
    return read_sections(extract_document(local_plan_pdf(), enable_ocr=False))


@pytest.fixture(scope="module")
def spread() -> SectionReading:
    return read_sections(extract_document(spread_pdf(), enable_ocr=False))


@pytest.fixture(scope="module")
def repeated() -> SectionReading:
    return read_sections(extract_document(repeated_headings_pdf(), enable_ocr=False))


def by_ref(reading: SectionReading) -> dict[str, Section]:
    return {section.section_ref: section for section in reading.sections}


def test_policy_headings_in_each_notation_become_policy_sections(plan: SectionReading) -> None:
    policies = {s.section_ref: s.title for s in plan.sections if s.kind == "policy"}
    assert policies == {"Policy LP1": "Housing", "Policy CS 1": "", "Policy H2": "Affordable Housing"}


def test_code_on_the_heading_line_keeps_the_policy_text(plan: SectionReading) -> None:
    assert by_ref(plan)["Policy CS 1"].text.startswith("CS 1 The Council will direct new development")


def test_decimal_paragraphs_keep_the_plans_numbers_and_clauses_stay_in_their_policy(plan: SectionReading) -> None:
    paragraphs = [s.section_ref for s in plan.sections if s.kind == "paragraph"]
    assert paragraphs == ["Para 3.1", "Para 3.2", "Para 3.3", "Para 3.4", "Para 3.5"]
    assert "2. Outside settlement boundaries" in by_ref(plan)["Policy LP1"].text


def test_a_policy_continued_over_a_page_break_is_one_section_ending_at_the_next_paragraph(
    plan: SectionReading,
) -> None:
    policy = by_ref(plan)["Policy LP1"]
    assert (policy.page_number, policy.last_page) == (3, 4)
    assert policy.text.rstrip().endswith("adds to the place it joins.")
    assert "3.2" not in policy.text


def test_reasoned_justification_records_the_policy_it_supports(plan: SectionReading) -> None:
    sections = by_ref(plan)
    assert sections["Para 3.2"].supports == "Policy LP1"
    assert sections["Para 3.4"].supports == "Policy CS 1"
    assert sections["Para 3.5"].supports == "Policy H2"


def test_running_headers_and_page_numbers_stay_out_of_the_text(plan: SectionReading) -> None:
    assert not [s.section_ref for s in plan.sections if HEADER in s.text]
    assert by_ref(plan)["Policy LP1"].text.count("\n3\n") == 0


def test_printed_page_numbers_are_kept_beside_the_pdf_page(plan: SectionReading) -> None:
    policy = by_ref(plan)["Policy LP1"]
    assert (policy.page_number, policy.printed_page) == (3, "2")


def test_contents_entries_open_no_section_and_list_the_policies(plan: SectionReading) -> None:
    assert [s.section_ref for s in plan.sections if s.page_number == 2] == ["Page 2"]
    assert by_ref(plan)["Page 2"].kind == "front-matter"
    assert [(p.ref, p.printed_page) for p in plan.listed] == [
        ("Policy LP1", 2),
        ("Policy CS 1", 4),
        ("Policy H2", 4),
        ("Policy LP9", 5),
    ]


def test_the_report_names_listed_policies_not_found(plan: SectionReading) -> None:
    report = report_reading(plan)
    assert (report.policies, report.paragraphs, report.listed_policies) == (3, 5, 4)
    assert report.missing_policies == ["Policy LP9"]
    assert 0 < report.fallback_share < 0.2
    assert "missing: Policy LP9" in report.summary()


def test_a_spread_is_read_left_page_then_right_page(spread: SectionReading) -> None:
    refs = [s.section_ref for s in spread.sections if s.page_number == 3]
    assert refs == ["Chapter 5", "Para 5.1", "Para 5.2", "Para 5.3", "Para 5.4", "Policy HOU2", "Page 3", "Para 5.5"]


def test_a_boxed_policy_on_a_spread_has_its_text_and_the_right_hand_printed_page(spread: SectionReading) -> None:
    sections = by_ref(spread)
    policy = sections["Policy HOU2"]
    assert policy.title == "Housing Density, Type and Accessibility"
    assert policy.text.rstrip().endswith("as their needs change over time.")
    assert (policy.page_number, policy.printed_page) == (3, "35")
    assert sections["Para 5.1"].printed_page == "34"
    assert sections["Para 5.5"].supports == "Policy HOU2"


def test_a_boxed_policy_ends_with_its_box_and_unnumbered_text_after_it_is_cited_by_page(
    spread: SectionReading,
) -> None:
    sections = by_ref(spread)
    assert "Reasoned justification" not in sections["Policy HOU2"].text
    after = sections["Page 3"]
    assert (after.kind, after.printed_page) == ("page", "35")
    assert after.text.startswith("Reasoned justification follows the box")


def test_an_inspectors_report_is_cited_by_its_numbered_paragraphs() -> None:
    reading = read_sections(extract_document(inspectors_report_pdf(), enable_ocr=False))
    paragraphs = [(s.section_ref, s.title) for s in reading.sections if s.kind == "paragraph"]
    assert paragraphs == [
        ("Para 1", "Introduction"),
        ("Para 2", "Introduction"),
        ("Para 3", "Assessment of Soundness"),
        ("Para 4", "Assessment of Soundness"),
    ]


def test_a_document_without_structure_is_cited_by_pdf_page_with_the_printed_page_beside_it() -> None:
    reading = read_sections(extract_document(unstructured_pdf(), enable_ocr=False))
    assert [(s.section_ref, s.kind, s.printed_page) for s in reading.sections] == [
        ("Page 1", "page", None),
        ("Page 2", "page", "1"),
        ("Page 3", "page", "2"),
        ("Page 4", "page", "3"),
    ]


def test_chapter_headings_alike_but_for_their_numbers_are_chapters_not_running_headers(
    repeated: SectionReading,
) -> None:
    chapters = [(s.section_ref, s.title) for s in repeated.sections if s.kind == "chapter"]
    assert chapters == [("Chapter 1", "Sub-area 1"), ("Chapter 2", "Sub-area 2"), ("Chapter 3", "Sub-area 3")]


def test_a_skipped_paragraph_number_does_not_fold_later_paragraphs_into_the_one_before(
    repeated: SectionReading,
) -> None:
    paragraphs = [s.section_ref for s in repeated.sections if s.kind == "paragraph"]
    assert paragraphs == ["Para 1", "Para 2", "Para 3", "Para 5", "Para 6", "Para 7"]
    assert "river valley" not in by_ref(repeated)["Para 3"].text


def test_a_policy_heading_repeated_over_a_page_break_continues_the_policy(repeated: SectionReading) -> None:
    policies = [s for s in repeated.sections if s.kind == "policy"]
    assert [p.section_ref for p in policies] == ["Policy DM1"]
    assert (policies[0].page_number, policies[0].last_page) == (1, 2)
    assert policies[0].text.rstrip().endswith("in its part 20, with proportionate evidence.")


def test_a_policy_named_again_in_a_monitoring_table_is_cited_by_page_not_as_the_policy(
    repeated: SectionReading,
) -> None:
    sections = by_ref(repeated)
    assert "Indicator" not in sections["Policy DM1"].text and "Indicator" not in sections["Para 7"].text
    monitoring = next(s for s in repeated.sections if "Indicator" in s.text)
    assert (monitoring.section_ref, monitoring.kind, monitoring.title) == ("Page 4", "page", "Monitoring")
    assert monitoring.text.startswith("Monitoring\n\nPolicy DM1 - Design")


def test_a_schedule_of_main_modifications_is_cited_by_its_codes_with_what_each_quotes() -> None:
    reading = read_sections(extract_document(modifications_pdf(), enable_ocr=False))
    modifications = [(s.section_ref, s.kind, s.title) for s in reading.sections if s.kind == "modification"]
    assert modifications == [
        ("MM1", "modification", "Policy HO1, clause 2"),
        ("MM2", "modification", "Page 12, paragraph 3.4"),
        ("MM3", "modification", "Policy HO3"),
        ("MM4", "modification", "Paragraph 3.5"),
        ("MM5", "modification", "Page 20, Table 4"),
        ("MM6", "modification", "Policy EC2"),
        ("MM7", "modification", "Glossary"),
    ]
    sections = by_ref(reading)
    assert "Policy HO3: Housing Mix" in sections["MM3"].text and "3.5 Affordable housing" in sections["MM4"].text
    assert not [s for s in reading.sections if s.kind in ("policy", "paragraph")]


def test_pages_in_two_columns_are_read_column_by_column_with_their_printed_page() -> None:
    reading = read_sections(extract_document(two_column_pdf(), enable_ocr=False))
    paragraphs = [(s.section_ref, s.page_number, s.printed_page) for s in reading.sections if s.kind == "paragraph"]
    assert paragraphs == [(f"Para 2.{n}", (n - 1) // 8 + 1, str((n - 1) // 8 + 3)) for n in range(1, 25)]
