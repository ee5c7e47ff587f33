"""Rows: one visual line of an extracted page with the layout facts the section parser needs.

Layout (font sizes, bold, position) comes from ``PageText.lines``: headings are larger than body text,
footnotes smaller and led by a small number, running page numbers sit alone in the top or bottom margin.
Pages without layout (OCR) become rows from their plain text, with only paragraph gaps and page starts
known.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from lib.models import PageText, TextLine, TextSpan

MARGIN = 0.1
"""Top and bottom margins (fraction of page height) where running page numbers live."""
PARAGRAPH_GAP = 0.5
"""A vertical gap above a row larger than this share of its height separates paragraphs."""
MARKER_SCALE = 0.75
"""Digits this much smaller than the text around them are footnote numbers (when not flagged superscript)."""

_EXPONENTS = {"2": "²", "3": "³"}
_UNIT_RE = re.compile(r"\d\s?(?:[kcmd]?m|ft)$")
_MARKER_RE = re.compile(r"^\d{1,3}(?:\s*,\s*\d{1,3})*$")
_PAGE_NUMBER_RE = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_SENTENCE_END_RE = re.compile(r"[.:;!?]$")
_LIST_ITEM_RE = re.compile(r"^(?:\(?[a-z]{1,2}\)|[a-z]\.\s|\(?[ivxlc]{1,6}[.)]\s|\d{1,3}[.)]\s|[•▪◦●■○∙·-]\s?)")
_SPACES_RE = re.compile(r"\s+")


@dataclass
class Row:
    """One visual line. ``size`` (dominant font size), ``bold_lead`` and ``top`` are known only for pages
    with layout; ``lead_marker`` is the footnote number a footnote's first line starts with."""

    text: str
    page: int
    size: float | None = None
    bold_lead: str = ""
    top: float | None = None
    gap_before: bool = False
    page_start: bool = False
    lead_marker: str | None = None


def read_rows(pages: Iterable[PageText]) -> Iterator[Row]:
    """Every page's rows in reading order, running page numbers left out."""
    for page in pages:
        rows = _layout_rows(page) if page.lines else _plain_rows(page)
        yield from _drop_page_numbers(rows, has_layout=bool(page.lines))


def body_size(pages: Iterable[PageText]) -> float | None:
    """The font size most text is set in (to the half point); None for a document without layout."""
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            for span in line.spans:
                if not span.superscript:
                    weights[round(span.size * 2) / 2] += len(span.text.strip())
    return weights.most_common(1)[0][0] if weights else None


def normalise(text: str) -> str:
    return _SPACES_RE.sub(" ", text).strip()


def ends_sentence(text: str) -> bool:
    return bool(_SENTENCE_END_RE.search(text))


def starts_list_item(text: str) -> bool:
    """``(a)``, ``b.``, ``iv)``, ``3)``, a bullet: an item of a list, which starts its own line."""
    return bool(_LIST_ITEM_RE.match(text))


def _layout_rows(page: PageText) -> list[Row]:
    """PyMuPDF splits a visual line into several lines (``116.`` then the text); merge them back."""
    groups: list[list[TextLine]] = []
    for line in page.lines:
        if groups and _same_row(groups[-1][-1], line):
            groups[-1].append(line)
        else:
            groups.append([line])
    rows: list[Row] = []
    previous: list[TextLine] | None = None
    for group in groups:
        row = _row_from_lines(group, page.page_number)
        if previous is None:
            row.page_start = True
        else:
            height = max(group[0].bottom - group[0].top, 1e-6)
            row.gap_before = group[0].top - max(line.bottom for line in previous) > PARAGRAPH_GAP * height
        rows.append(row)
        previous = group
    return rows


def _same_row(left: TextLine, right: TextLine) -> bool:
    overlap = min(left.bottom, right.bottom) - max(left.top, right.top)
    return right.x0 > left.x0 and overlap > 0.5 * min(left.bottom - left.top, right.bottom - right.top)


def _row_from_lines(lines: list[TextLine], page_number: int) -> Row:
    spans = [span for line in lines for span in ([*line.spans, TextSpan(text=" ", size=0.0)])]
    size = _dominant_size(spans)
    text, lead_marker = _row_text(spans, size)
    return Row(
        text=text,
        page=page_number,
        size=size,
        bold_lead=_bold_lead(spans),
        top=lines[0].top,
        lead_marker=lead_marker,
    )


def _row_text(spans: list[TextSpan], size: float | None) -> tuple[str, str | None]:
    """Small or superscript digits are footnote numbers: leading a line they start a footnote (returned
    apart), after text they reference one and become ``[^7]``, except a unit's exponent (``250m²``)."""
    parts: list[str] = []
    lead_marker: str | None = None
    for span in spans:
        digits = span.text.strip()
        small = span.superscript or (size is not None and span.size <= MARKER_SCALE * size)
        if not (digits and small and _MARKER_RE.match(digits)):
            parts.append(span.text)
            continue
        before = "".join(parts).rstrip()
        if not before:
            lead_marker = digits
            parts.append(digits + " ")
        elif digits in _EXPONENTS and _UNIT_RE.search(before):
            parts.append(_EXPONENTS[digits])
        else:
            parts.append("".join(f"[^{number.strip()}]" for number in digits.split(",")))
    return normalise("".join(parts)), lead_marker


def _dominant_size(spans: list[TextSpan]) -> float | None:
    weights: Counter[float] = Counter()
    for span in spans:
        if not span.superscript:
            weights[span.size] += len(span.text.strip())
    weights.pop(0.0, None)
    if not +weights:
        return None
    return max(weights.items(), key=lambda item: (item[1], item[0]))[0]


def _bold_lead(spans: list[TextSpan]) -> str:
    """The bold text a line starts with (a policy code, a glossary term), footnote markers skipped."""
    lead: list[str] = []
    for span in spans:
        if span.superscript:
            continue
        if span.text.strip() and not span.bold:
            break
        lead.append(span.text)
    return normalise("".join(lead))


def _plain_rows(page: PageText) -> list[Row]:
    rows: list[Row] = []
    gap = False
    for line in page.text.splitlines():
        text = normalise(line)
        if not text:
            gap = True
            continue
        rows.append(Row(text=text, page=page.page_number, gap_before=gap, page_start=not rows))
        gap = False
    return rows


def _drop_page_numbers(rows: list[Row], *, has_layout: bool) -> list[Row]:
    """Running page numbers are bare numbers in a margin (or, without layout, first or last on the page)."""
    kept: list[Row] = []
    for index, row in enumerate(rows):
        if _PAGE_NUMBER_RE.match(row.text):
            in_margin = (
                row.top is not None and (row.top < MARGIN or row.top > 1 - MARGIN)
                if has_layout
                else index in (0, len(rows) - 1)
            )
            if in_margin:
                continue
        kept.append(row)
    if kept and not kept[0].page_start:
        kept[0].page_start = True
        kept[0].gap_before = False
    return kept
