"""The real test document of issue 44: the Watford Local Plan inspector's report with its schedule of main
modifications bound in after it, made at test time with PyMuPDF from the two PDFs in ``../shared/data`` (the
councils' PDFs are not redistributable: never committed). Both parts must read exactly as they do apart."""

from __future__ import annotations

import os
from pathlib import Path

import pymupdf
import pytest

from lib.text.sections import SectionReading
from tests.lib.text.test_document_parts import read, refs_and_pages

ROOT = Path(__file__).resolve().parents[3]
SHARED_DATA = Path(os.environ.get("POLICY_KB_SHARED_DATA", ROOT.parent / "shared" / "data"))
REPORT = SHARED_DATA / "local_plans" / "watford_local_plan_inspectors_report.pdf"
SCHEDULE = SHARED_DATA / "local_plans" / "watford_local_plan_inspectors_report_main_mods_appendix.pdf"

pytestmark = pytest.mark.skipif(
    not (REPORT.exists() and SCHEDULE.exists()),
    reason="the Watford report and its appendix are read from ../shared/data (not redistributable); "
    "set POLICY_KB_SHARED_DATA to the folder holding local_plans/",
)


@pytest.fixture(scope="module")
def apart() -> tuple[SectionReading, SectionReading, int]:
    report = REPORT.read_bytes()
    return read(report), read(SCHEDULE.read_bytes()), pymupdf.open(stream=report, filetype="pdf").page_count


@pytest.fixture(scope="module")
def bound() -> SectionReading:
    document = pymupdf.open(stream=REPORT.read_bytes(), filetype="pdf")
    document.insert_pdf(pymupdf.open(stream=SCHEDULE.read_bytes(), filetype="pdf"))
    return read(document.tobytes())


def test_the_bound_report_reads_as_its_two_parts_read_apart(
    bound: SectionReading, apart: tuple[SectionReading, SectionReading, int]
) -> None:
    report, schedule, report_pages = apart
    expected = refs_and_pages(report.sections) | refs_and_pages(schedule.sections, report_pages)
    assert refs_and_pages(bound.sections) == expected


def test_every_numbered_paragraph_of_the_report_is_citable_on_its_page(bound: SectionReading) -> None:
    paragraphs = [s for s in bound.sections if s.kind == "paragraph"]
    assert [s.section_ref for s in paragraphs] == [f"Para {n}" for n in range(1, 178)]
    assert all(s.text.startswith(f"{s.section_ref.removeprefix('Para ')}. ") for s in paragraphs)
    assert all(s.page_number <= 48 for s in paragraphs)


def test_the_schedules_codes_are_citable_in_the_appendix(bound: SectionReading) -> None:
    codes = {s.section_ref: s for s in bound.sections if s.kind == "modification"}
    assert len(codes) >= 250
    assert codes["M74"].page_number > 48 and codes["M74"].text.startswith("M74 ")
    assert not [s for s in bound.sections if s.page_number > 48 and s.kind in ("paragraph", "policy", "footnote")]
