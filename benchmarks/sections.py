"""How well real development plans are read into citable sections (issue 22).

Per document: the policies its contents pages list, how many of those were found with their text and on
their heading page (the section's printed page, or PDF page where the plan prints none, equals the page
the contents page gives), policies and paragraphs found, the share of text cited only by chapter or page
(fallback), seconds to extract and to cut sections, and paragraph refs whose number the paragraph does not
print (invented: the goal is zero). The documents are read where they lie (their
licence is not stated: never copy them into the repository).

    .venv/bin/python benchmarks/sections.py --data ../shared/data/local_plans [--data deployments/seed]
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore", category=FutureWarning)

from lib.models import Section  # noqa: E402
from lib.text.contents import ListedPolicy  # noqa: E402
from lib.text.extraction import extract_document  # noqa: E402
from lib.text.policy_codes import code_key  # noqa: E402
from lib.text.section_report import report_reading  # noqa: E402
from lib.text.sections import read_sections  # noqa: E402

MIN_POLICY_TEXT = 40
"""A policy found "with its text" holds at least this many characters beyond its heading line."""


def found_exactly(listed: ListedPolicy, sections: list[Section]) -> bool:
    """The listed policy has a section with text, starting on the page the contents page gives."""
    for section in sections:
        if section.kind != "policy" or code_key(section.section_ref.split(" (")[0]) != code_key(listed.ref):
            continue
        body = section.text.split("\n", 1)[1] if "\n" in section.text else section.text[len(section.title) + 12 :]
        page = section.printed_page if section.printed_page is not None else section.page_number
        if len(body.strip()) >= MIN_POLICY_TEXT and (listed.printed_page is None or page == listed.printed_page):
            return True
    return False


def invented(sections: list[Section]) -> int:
    """Paragraph refs whose number the paragraph does not itself print first (the goal is zero)."""
    return sum(
        section.kind == "paragraph"
        and not section.text.startswith(section.section_ref.split("Para ")[-1].split(" (")[0])
        for section in sections
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", action="append", type=Path, default=[], help="a folder of PDFs (repeatable)")
    args = parser.parse_args()
    folders = args.data or [ROOT.parent / "shared" / "data" / "local_plans", ROOT / "deployments" / "seed"]
    pdfs = sorted(pdf for folder in folders for pdf in folder.glob("*.pdf"))
    header = (
        f"{'document':<52} {'pages':>5} {'listed':>6} {'exact':>5} {'policies':>8} {'paras':>6} {'fallback':>8} "
        f"{'extract s':>9} {'sections s':>10} {'invented':>8}"
    )
    print(header)
    print("-" * len(header))
    listed_total = exact_total = 0
    for pdf in pdfs:
        started = time.perf_counter()
        document = extract_document(pdf.read_bytes(), enable_ocr=False)
        extracted = time.perf_counter()
        reading = read_sections(document)
        sectioned = time.perf_counter()
        report = report_reading(reading)
        exact = sum(found_exactly(listed, reading.sections) for listed in reading.listed)
        listed_total += len(reading.listed)
        exact_total += exact
        print(
            f"{pdf.name[:52]:<52} {document.page_count:>5} {len(reading.listed):>6} {exact:>5} {report.policies:>8} "
            f"{report.paragraphs:>6} {report.fallback_share:>8.0%} {extracted - started:>9.2f} "
            f"{sectioned - extracted:>10.2f} {invented(reading.sections):>8}"
        )
        if report.missing_policies:
            print(f"    not found: {', '.join(report.missing_policies)}")
        inexact = [p.ref for p in reading.listed if p.ref not in report.missing_policies
                   and not found_exactly(p, reading.sections)]  # fmt: skip
        if inexact:
            print(f"    found, not on the listed page or without text: {', '.join(inexact)}")
    if listed_total:
        print(f"\npolicies listed by contents pages: {listed_total}; found exactly: {exact_total} "
              f"({exact_total / listed_total:.1%})")  # fmt: skip


if __name__ == "__main__":
    main()
