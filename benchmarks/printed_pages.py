"""What printed page is read for every PDF page of real documents (``lib.text.printed_pages``).

Per document: pages, pages read with a printed page, pages read without one, pages whose PDF page label
differs from what was read (labels are confirmation only: the print wins), and ``missed?``: pages read without
a printed page although a bare number stands alone in their margin (a candidate to look at, not necessarily a
miss: a margin number can be a footnote or a table cell). ``--pages`` writes every page's reading as TSV (PDF
page, printed page read, label, bare margin numbers) for checking by eye against renders
(``pdftoppm -f N -l N -r 50 -png``, or PyMuPDF's ``page.get_pixmap(dpi=50)`` where poppler is absent). The
documents are read where they lie (never copy them into the repository).

    .venv/bin/python benchmarks/printed_pages.py --data ../shared/data/local_plans --data deployments/seed \
        [--pages /tmp/printed_pages.tsv]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib.text.extraction import extract_document  # noqa: E402
from lib.text.layout_rows import read_printed  # noqa: E402
from lib.text.page_furniture import in_margin  # noqa: E402
from lib.text.printed_pages import bare_tokens  # noqa: E402


def margin_numbers(page_lines: list[tuple[float, str]]) -> list[str]:
    """The bare page-number-like texts alone on a line in the page's top or bottom margin."""
    return [t.text for top, text in page_lines if in_margin(top) for t in bare_tokens(text)]


def measure(pdf: Path, rows_out: list[str]) -> dict[str, object]:
    started = time.perf_counter()
    document = extract_document(pdf.read_bytes(), enable_ocr=False)
    extracted = time.perf_counter() - started
    printed = read_printed(document.pages)
    seconds = time.perf_counter() - started - extracted
    disagree = missed = 0
    for page in document.pages:
        read = printed.get(page.page_number)
        bare = margin_numbers([(line.top, line.text) for line in page.lines])
        if read is not None and page.label and page.label != read:
            disagree += 1
        if read is None and bare:
            missed += 1
        rows_out.append(f"{pdf.name}\t{page.page_number}\t{read or ''}\t{page.label}\t{' '.join(bare)}")
    return {
        "document": pdf.name,
        "pages": document.page_count,
        "printed": len(printed),
        "none": document.page_count - len(printed),
        "label_differs": disagree,
        "missed?": missed,
        "read_s": round(seconds, 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", action="append", type=Path, required=True, help="a folder of PDFs (repeatable)")
    parser.add_argument("--pages", type=Path, help="write every page's reading here (TSV)")
    args = parser.parse_args()
    rows: list[str] = ["document\tpdf_page\tprinted_page\tlabel\tbare_margin_numbers"]
    results = [measure(pdf, rows) for folder in args.data for pdf in sorted(folder.glob("*.pdf"))]
    columns = list(results[0])
    print("\t".join(columns))
    for result in results:
        print("\t".join(str(result[c]) for c in columns))
    total = {c: sum(int(str(r[c])) for r in results) for c in ("pages", "printed", "none", "label_differs", "missed?")}
    print("total\t" + "\t".join(str(v) for v in total.values()))
    if args.pages:
        args.pages.write_text("\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
