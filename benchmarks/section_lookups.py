"""Numbered items a document is known to hold, and whether each looks up exactly (``benchmarks/sections.py``).

``section_expectations.json`` names, per file, the runs of numbered items a reader of the PDF finds there
(paragraphs ``1``..``177`` of an inspector's report, codes ``M1``..``M257`` of its schedule, policies
``CS1``..``CS25`` of a core strategy whose contents pages list none), written from the documents, not from
the parser's output. An item looks up exactly when a section of its kind carries its ref (policies: its code,
``CS 1`` = ``CS1``), its text starts with the number as printed, and it starts on the PDF page whose own text
(the PDF's text layer, read apart from the parser) first holds its opening words, searching on from the page
of the item before.

``bound_watford`` makes the issue-44 test document: the Watford inspector's report with its main-modifications
appendix bound in after it (in memory; the councils' PDFs are never copied).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import pymupdf

from lib.models import ExtractedDocument, Section
from lib.text.policy_codes import code_key

EXPECTATIONS = Path(__file__).resolve().parent / "section_expectations.json"
REPORT = "watford_local_plan_inspectors_report.pdf"
APPENDIX = "watford_local_plan_inspectors_report_main_mods_appendix.pdf"
BOUND = "watford_report+main_mods_appendix(bound).pdf"
OPENING_WORDS = 4
KINDS = {"paragraphs": "paragraph", "modifications": "modification", "policies": "policy"}


@dataclass
class Tally:
    expected: int = 0
    found: int = 0
    exact: int = 0

    def add(self, other: Tally) -> None:
        self.expected += other.expected
        self.found += other.found
        self.exact += other.exact


@dataclass(frozen=True)
class Item:
    ref: str
    token: str
    kind: str


def expectations() -> dict[str, dict[str, list[dict[str, str | int]]]]:
    data: dict[str, dict[str, list[dict[str, str | int]]]] = json.loads(EXPECTATIONS.read_text())
    report, appendix = data.get(REPORT, {}), data.get(APPENDIX, {})
    data[BOUND] = {**report, **appendix}
    return data


def items(expectation: dict[str, list[dict[str, str | int]]], group: str) -> list[Item]:
    """``{"ref": "Para ", "token": "", "first": 1, "last": 177}`` -> Para 1 (printed ``1``) .. Para 177."""
    found: list[Item] = []
    for run in expectation.get(group, []):
        for number in range(int(run["first"]), int(run["last"]) + 1):
            token = f"{run['token']}{number}"
            found.append(Item(f"{run['ref']}{number}", token, KINDS[group]))
    return found


def tally(document: ExtractedDocument, sections: list[Section], wanted: list[Item]) -> Tally:
    by_key: dict[tuple[str, str], Section] = {}
    for section in sections:
        key = code_key(section.section_ref) if section.kind == "policy" else section.section_ref
        by_key.setdefault((section.kind, key), section)
    result = Tally(expected=len(wanted))
    page = 1
    for item in wanted:
        key = code_key(item.ref) if item.kind == "policy" else item.ref
        match = by_key.get((item.kind, key))
        if match is None:
            continue
        result.found += 1
        printed_on = _page_printing(document, match.text, page)
        if printed_on is not None:
            page = printed_on
        if _starts_with(match.text, item) and match.page_number == printed_on:
            result.exact += 1
    return result


def _pattern(item: Item) -> re.Pattern[str]:
    letters, digits = re.match(r"^([A-Z]*)(\d+)$", item.token).groups()  # type: ignore[union-attr]
    word = r"(?:Policy\s+)?" if item.kind == "policy" else ""
    end = r"(?:\.(?!\d)|\s|$)" if letters else r"(?:\.(?!\d)|[ \t]+\S)"  # (a bare "12" is a page number)
    return re.compile(rf"(?m)^\s*{word}{letters}\s?{digits}{end}")


def _starts_with(text: str, item: Item) -> bool:
    return _pattern(item).match(text) is not None


def _page_printing(document: ExtractedDocument, text: str, start: int) -> int | None:
    """The first page from ``start`` on whose text the section's opening words stand (a contents line that
    starts with the same number, ``1. Introduction``, is not the paragraph)."""
    opening = " ".join(text.split("[^")[0].split()[:OPENING_WORDS])  # (a footnote marker prints as a small number)
    for page in document.pages[start - 1 :]:
        if opening in " ".join(page.text.split()):
            return page.page_number
    return None


def bound_watford(folder: Path) -> bytes | None:
    """The report with its appendix bound in after it, or None where either is not in ``folder``."""
    report, appendix = folder / REPORT, folder / APPENDIX
    if not (report.exists() and appendix.exists()):
        return None
    document = pymupdf.open(stream=report.read_bytes(), filetype="pdf")
    document.insert_pdf(pymupdf.open(stream=appendix.read_bytes(), filetype="pdf"))
    return bytes(document.tobytes())
