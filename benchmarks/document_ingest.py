"""Ingest a folder of mixed application PDFs (text, text with scanned appendices, a raw scan) into fresh
stores: documents per minute, and seconds per OCR page with every core running Tesseract.

The folder is built from the bundled NPPF: text documents are slices of it; "scanned" pages are NPPF
pages rendered to 300 DPI greyscale images and put back as image-only pages (what a scanner without
OCR makes). Reports with a scanned appendix stay under ``IMAGE_RATIO_THRESHOLD`` and are OCR'd; the raw
scan is above it and is skipped as image-based (spec 003), unless ``--threshold 1`` is given.

Two measurements, in one process, after the embedding model is loaded:

1. OCR throughput: extraction alone of the scanned pages, one single-threaded Tesseract per core
   (target ≤ 1.1 s a page at 300 DPI; one Tesseract alone: docs/performance.md › Document ingestion);
   ``--baseline`` also times one worker on two pages for comparison.
2. The whole folder through ``ingest_document`` (extraction, OCR, chunking, embedding, Chroma, Redis,
   object store): documents and pages per minute, and each document's outcome.

Other processes on the machine (a test run, a build) slow both figures: the load average is printed
before and after so a reader can tell.

    .venv/bin/python benchmarks/document_ingest.py [--scanned-docs N] [--threshold T] [--baseline]
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import pymupdf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib.composition import open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.documents.ingest import ingest_document  # noqa: E402
from lib.errors import KBError  # noqa: E402
from lib.stores.embedding_model import load_model  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402
from lib.text.extraction import extract_document  # noqa: E402

NPPF = ROOT / "deployments" / "seed" / "NPPF_December_2024.pdf"
TABLE = ROOT / "tests" / "fixtures" / "pdfs" / "table_pdfplumber_senate-expenditures.pdf"
SCAN_DPI = 300
OCR_TARGET_SECONDS = 1.1
REF = "25/01178/REM"


@dataclass(frozen=True)
class Planned:
    name: str
    pages: int
    scanned_pages: int


def _scan_into(target: pymupdf.Document, source: pymupdf.Document, page_numbers: range) -> None:
    for number in page_numbers:
        page = source[number]
        pixmap = page.get_pixmap(dpi=SCAN_DPI, colorspace=pymupdf.csGRAY)
        scanned = target.new_page(width=page.rect.width, height=page.rect.height)
        scanned.insert_image(scanned.rect, pixmap=pixmap)


def build_folder(folder: Path, scanned_docs: int) -> list[Planned]:
    """Eight text reports, ``scanned_docs`` reports of 4 text pages + 6 scanned pages, a table, a raw scan."""
    planned: list[Planned] = []
    with pymupdf.open(NPPF) as nppf:
        for index in range(8):
            with pymupdf.open() as doc:
                doc.insert_pdf(nppf, from_page=index * 10, to_page=index * 10 + 9)
                name = f"Planning_Statement_part_{index + 1}.pdf"
                doc.save(folder / name, deflate=True)
            planned.append(Planned(name, 10, 0))
        for index in range(scanned_docs):
            first = 20 + index * 10
            with pymupdf.open() as doc:
                doc.insert_pdf(nppf, from_page=first, to_page=first + 3)
                _scan_into(doc, nppf, range(first + 4, first + 10))
                name = f"Transport_Assessment_with_scanned_appendix_{index + 1}.pdf"
                doc.save(folder / name, deflate=True)
            planned.append(Planned(name, 10, 6))
        with pymupdf.open() as doc:
            _scan_into(doc, nppf, range(70, 74))
            doc.save(folder / "Scanned_Consultation_Letter.pdf", deflate=True)
        planned.append(Planned("Scanned_Consultation_Letter.pdf", 4, 4))
    (folder / "Expenditure_Table.pdf").write_bytes(TABLE.read_bytes())
    planned.append(Planned("Expenditure_Table.pdf", 1, 0))
    return planned


def _cpu_seconds() -> tuple[float, float]:
    """CPU seconds used so far by this process and by its finished children (the Tesseract processes)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime


def measure_ocr(
    folder: Path, planned: list[Planned], workers: int, max_pages: int | None = None
) -> tuple[int, float, float]:
    """(OCR pages, wall seconds, CPU seconds of this process and Tesseract) for extracting the documents with
    scanned appendices (their text pages cost next to nothing). CPU time is what other load cannot inflate much:
    divided by the cores, it is the wall time a page would take on an otherwise idle machine."""
    pages, seconds = 0, 0.0
    own_before, children_before = _cpu_seconds()
    for doc in planned:
        if not doc.scanned_pages or doc.scanned_pages == doc.pages:
            continue
        data = (folder / doc.name).read_bytes()
        if max_pages is not None:
            with pymupdf.open(stream=data) as source, pymupdf.open() as part:
                part.insert_pdf(source, from_page=doc.pages - max_pages, to_page=doc.pages - 1)
                data = part.tobytes()
        started = time.perf_counter()
        extracted = extract_document(data, file_name=doc.name, ocr_workers=workers, dpi=SCAN_DPI)
        seconds += time.perf_counter() - started
        pages += sum(page.method == "ocr" for page in extracted.pages)
        if max_pages is not None:
            break
    own_after, children_after = _cpu_seconds()
    return pages, seconds, (own_after - own_before) + (children_after - children_before)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scanned-docs", type=int, default=3, help="reports with a 6-page scanned appendix")
    parser.add_argument("--threshold", type=float, default=None, help="IMAGE_RATIO_THRESHOLD (default: settings)")
    parser.add_argument("--baseline", action="store_true", help="also time one Tesseract alone on two pages")
    args = parser.parse_args()
    cores = os.cpu_count() or 1
    load_before = os.getloadavg()

    started = time.perf_counter()
    load_model().encode(["warm up"])
    print(f"model load + first encode: {time.perf_counter() - started:.2f} s (once per process, not counted)")

    with tempfile.TemporaryDirectory(prefix="bench-documents-") as tmp:
        inbox = Path(tmp) / "inbox"
        inbox.mkdir()
        planned = build_folder(inbox, args.scanned_docs)
        total_pages = sum(d.pages for d in planned)
        print(
            f"\nfolder: {len(planned)} documents, {total_pages} pages, {sum(d.scanned_pages for d in planned)} scanned"
        )

        if args.baseline:
            pages, seconds, _ = measure_ocr(inbox, planned, workers=1, max_pages=2)
            print(f"OCR, 1 Tesseract:        {pages} pages in {seconds:6.2f} s → {seconds / pages:.2f} s/page")
        pages, seconds, cpu = measure_ocr(inbox, planned, workers=cores)
        per_page = seconds / pages if pages else float("nan")
        verdict = "met" if per_page <= OCR_TARGET_SECONDS else "NOT met"
        print(
            f"OCR, {cores} Tesseracts:       {pages} pages in {seconds:6.2f} s → {per_page:.2f} s/page"
            f" at {SCAN_DPI} DPI  (target ≤ {OCR_TARGET_SECONDS} s: {verdict})"
        )
        if pages:
            print(
                f"OCR CPU time:            {cpu / pages:.2f} CPU s/page (render + Tesseract)"
                f" → {cpu / pages / cores:.2f} s/page on {cores} otherwise idle cores"
            )

        overrides: dict[str, object] = {
            "data_dir": Path(tmp) / "data",
            "redis_url": None,
            "allowed_file_roots": [inbox],
        }
        if args.threshold is not None:
            overrides["image_ratio_threshold"] = args.threshold
        settings = load_settings(**overrides)
        stores = open_stores(settings).documents
        try:
            print(f"\n{'document':<52}{'pages':>6}{'status':>18}{'method':>12}{'chunks':>8}{'seconds':>9}")
            started = time.perf_counter()
            for doc in planned:
                began = time.perf_counter()
                try:
                    result = ingest_document(stores, inbox / doc.name, REF)
                    status = result.status
                    method = getattr(result, "extraction_method", "")
                    chunks = getattr(result, "chunks_created", 0)
                except KBError as exc:
                    status, method, chunks = exc.error_type, "", 0
                took = time.perf_counter() - began
                print(f"{doc.name:<52}{doc.pages:>6}{status:>18}{method:>12}{chunks:>8}{took:>9.2f}")
            elapsed = time.perf_counter() - started
        finally:
            stop_embedded_redis(settings.paths.redis_dir)

    print(
        f"\nwhole folder: {len(planned)} documents, {total_pages} pages in {elapsed:.1f} s → "
        f"{len(planned) / elapsed * 60:.1f} documents/minute, {total_pages / elapsed * 60:.0f} pages/minute"
    )
    load_after = os.getloadavg()
    print(f"load average (1 min) before {load_before[0]:.2f}, after {load_after[0]:.2f} on {cores} cores")


if __name__ == "__main__":
    main()
