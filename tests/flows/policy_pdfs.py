"""Small real policy PDFs, written with PyMuPDF: bold chapter headings and numbered paragraphs, so the
real extraction and section splitter cite them as ``Chapter 1``, ``Para 3`` and so on.

The ``edition`` string goes into every paragraph, so the chunks of two revisions differ and a search
result shows which revision it came from.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pymupdf

PAGE_WIDTH, PAGE_HEIGHT = 595, 842
TOP, BOTTOM, LEFT = 80, 780, 60

DEFAULT_CHAPTERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "Promoting sustainable transport",
        (
            "Development should only be prevented or refused on highways grounds if there would be an "
            "unacceptable impact on highway safety, or the residual cumulative impacts would be severe.",
            "Cycle lanes on busy roads should be at least two metres wide and physically separated from "
            "motor traffic wherever flows exceed the thresholds in the design guidance.",
        ),
    ),
    (
        "Achieving well-designed places",
        (
            "Good design is a key aspect of sustainable development and creates better places in which to "
            "live and work.",
            "Local plans should set out a clear design vision and expectations so that applicants have "
            "certainty about what is likely to be acceptable.",
        ),
    ),
)


def policy_pdf_bytes(edition: str = "", chapters: tuple[tuple[str, tuple[str, ...]], ...] = DEFAULT_CHAPTERS) -> bytes:
    """A PDF with one page per chapter (more if a chapter runs long)."""
    doc = pymupdf.open()
    number = 0
    try:
        for chapter_no, (title, paragraphs) in enumerate(chapters, start=1):
            page = doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
            y = TOP
            page.insert_text((LEFT, y), f"{chapter_no}. {title}", fontsize=18, fontname="hebo")
            y += 40
            for text in paragraphs:
                number += 1
                body = f"{number}. {text}" + (f" This is the {edition} text." if edition else "")
                for line in textwrap.wrap(body, 90):
                    if y > BOTTOM:
                        page = doc.new_page(width=PAGE_WIDTH, height=PAGE_HEIGHT)
                        y = TOP
                    page.insert_text((LEFT, y), line, fontsize=10, fontname="helv")
                    y += 14
                y += 10
        return doc.tobytes()
    finally:
        doc.close()


def write_policy_pdf(path: Path, edition: str = "", **kwargs: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(policy_pdf_bytes(edition, **kwargs))  # type: ignore[arg-type]
    return path
