"""Citations as people write them: the page the document prints, with the PDF page beside it where they differ.

A reader checks a citation against the paper (or the PDF's own page numbers), so the human-readable form
leads with ``printed_page`` (``p. 57``; ``pp. 62-63`` for a two-page spread) and adds the PDF page only
where the two differ (``p. 57 (PDF page 58)``), or alone where the page prints no number
(``PDF page 3``). Every text that cites a page (quote checks, the web page, tool messages, the demo)
goes through ``format_citation``, so the form is the same everywhere.
"""

from __future__ import annotations

_DASHES = ("-", "\u2013", "\u2014")


def page_citation(page_number: int | None, printed_page: str | None = None) -> str:
    """``p. 57 (PDF page 58)``, ``p. 57`` (the same numbers), ``pp. 62-63 (PDF page 40)`` (a spread),
    ``PDF page 3`` (no printed number); "" when neither is known."""
    printed = (printed_page or "").strip()
    if not printed:
        return f"PDF page {page_number}" if page_number else ""
    spread = any(dash in printed[1:-1] for dash in _DASHES) and printed[0].isdigit() and printed[-1].isdigit()
    text = f"{'pp.' if spread else 'p.'} {printed}"
    if page_number and printed != str(page_number):
        text += f" (PDF page {page_number})"
    return text


def format_citation(
    *,
    document: str = "",
    section_ref: str = "",
    page_number: int | None = None,
    printed_page: str | None = None,
) -> str:
    """One citation as text: ``NPPF December 2024, Para 116, p. 33 (PDF page 35)``; parts not given are left
    out (``document`` is how the document is named: its source and version label, or a file name)."""
    parts = [document.strip(), section_ref.strip(), page_citation(page_number, printed_page)]
    return ", ".join(part for part in parts if part)
