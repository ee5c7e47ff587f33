"""Rows: one visual line of an extracted page with the layout facts the section parser needs.

Layout (font sizes, bold, position) comes from ``PageText.lines``: headings are larger than body text,
footnotes smaller and led by a small number, running page numbers sit alone in the top or bottom margin.
Pages without layout (OCR) become rows from their plain text, with only paragraph gaps and page starts
known.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

from lib.models import PageText, TextLine, TextSpan
from lib.text.page_furniture import MarginRow, in_margin, running_key, running_keys
from lib.text.printed_pages import (
    PageToken,
    bare_tokens,
    loose_tokens,
    page_values,
    read_printed_pages,
    row_tokens,
    without_number,
)

GUTTER = 0.01
"""Half the width (fraction of the page) of the strip down the middle that no line crosses on a spread."""
PROSE_WIDTH = 0.25
MIN_PROSE_LINES = 5
"""Each half of a spread holds this many lines at least this wide (fraction of the page): text, not a table."""
PARAGRAPH_GAP = 0.5
"""A vertical gap above a row larger than this share of its height separates paragraphs."""
HEADING_SCALE = 1.3
"""A row whose text is this much larger than body text is a heading."""
MARKER_SCALE = 0.75
"""Digits this much smaller than the text around them are footnote numbers (when not flagged superscript)."""

_EXPONENTS = {"2": "²", "3": "³"}
_UNIT_RE = re.compile(r"\d\s?(?:[kcmd]?m|ft)$")
_MARKER_RE = re.compile(r"^\d{1,3}(?:\s*,\s*\d{1,3})*$")
_SENTENCE_END_RE = re.compile(r"[.:;!?]$")
_LIST_ITEM_RE = re.compile(r"^(?:\(?[a-z]{1,2}\)|[a-z]\.\s|\(?[ivxlc]{1,6}[.)]\s|\d{1,3}[.)]\s|[•▪◦●■○∙·-]\s?)")
_SPACES_RE = re.compile(r"\s+")


@dataclass
class Row:
    """One visual line. ``size`` (dominant font size), ``bold_lead`` and ``top`` are known only for pages
    with layout; ``lead_marker`` is the footnote number a footnote's first line starts with; ``half`` is 1 on
    the right-hand page of a spread; ``contents`` marks a row of a contents page (``lib.text.contents``);
    ``boxed``: the row lies inside a drawn box (``PageText.boxes``); ``jumped``: the row sits above the one
    read before it (a block the text layer holds out of order: it starts a block, whatever the gap)."""

    text: str
    page: int
    size: float | None = None
    bold_lead: str = ""
    top: float | None = None
    gap_before: bool = False
    page_start: bool = False
    lead_marker: str | None = None
    half: int = 0
    printed_page: str | None = None
    contents: bool = False
    boxed: bool = False
    jumped: bool = False
    centre: float | None = None


def read_rows(pages: Iterable[PageText]) -> list[Row]:
    """Every page's rows in reading order (a spread's left page, then its right), running headers, footers
    and page numbers left out; each row carries the page number the document prints there, if any."""
    return read_rows_and_printed(pages)[0]


def read_rows_and_printed(pages: Iterable[PageText]) -> tuple[list[Row], dict[int, str]]:
    """``read_rows``, and the page each PDF page prints (a spread's halves joined: ``62-63``), pages holding
    nothing but furniture (a full-page map with its page number) among them."""
    pages = list(pages)
    rows: list[Row] = []
    spreads: set[int] = set()
    for page in pages:
        if not page.lines:
            rows.extend(_plain_rows(page))
            continue
        halves = _halves(page.lines)
        if len(halves) == 2:
            spreads.add(page.page_number)
        for half, lines in enumerate(halves):
            for row, first in _layout_rows(lines, page.page_number):
                row.half = half
                row.boxed = any(_inside(first, box) for box in page.boxes)
                rows.append(row)
    labels = {page.page_number: page.label for page in pages if page.label}
    kept, printed = _drop_furniture(rows, spreads, len(pages), body_size(pages), labels)
    return kept, page_values(printed)


def read_printed(pages: Iterable[PageText]) -> dict[int, str]:
    """The page each PDF page prints, for pages that print one: for readers that need no sections."""
    return read_rows_and_printed(pages)[1]


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


def _halves(lines: list[TextLine]) -> list[list[TextLine]]:
    """A page's lines as one reading column, or as two halves (left, then right) when the page is a spread
    or set in two columns: no line of body text crosses the middle and each half holds prose lines."""
    body = [line for line in lines if not in_margin(line.top)]
    if any(line.x0 < 0.5 - GUTTER and line.x1 > 0.5 + GUTTER for line in body):
        return [lines]
    left = [line for line in lines if line.x0 + line.x1 < 1.0]
    right = [line for line in lines if line.x0 + line.x1 >= 1.0]
    prose = [sum(ln.x1 - ln.x0 >= PROSE_WIDTH for ln in half if not in_margin(ln.top)) for half in (left, right)]
    return [left, right] if min(prose) >= MIN_PROSE_LINES else [lines]


def _inside(line: TextLine, box: tuple[float, float, float, float]) -> bool:
    x0, top, x1, bottom = box
    middle = (line.top + line.bottom) / 2
    return x0 <= line.x0 and line.x1 <= x1 + 0.01 and top <= middle <= bottom


def _layout_rows(lines: list[TextLine], page_number: int) -> list[tuple[Row, TextLine]]:
    """PyMuPDF splits a visual line into several lines (``116.`` then the text); merge them back. Each row
    comes with its first line (its position)."""
    groups: list[list[TextLine]] = []
    for line in lines:
        if groups and _same_row(groups[-1][-1], line):
            groups[-1].append(line)
        else:
            groups.append([line])
    rows: list[tuple[Row, TextLine]] = []
    previous: list[TextLine] | None = None
    for group in groups:
        row = _row_from_lines(group, page_number)
        row.centre = (group[0].x0 + group[-1].x1) / 2
        if previous is None:
            row.page_start = True
        else:
            height = max(group[0].bottom - group[0].top, 1e-6)
            row.gap_before = group[0].top - max(line.bottom for line in previous) > PARAGRAPH_GAP * height
            row.jumped = group[0].top < previous[0].top
        rows.append((row, group[0]))
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


def _drop_furniture(
    rows: list[Row], spreads: set[int], page_count: int, size: float | None, labels: dict[int, str]
) -> tuple[list[Row], dict[tuple[int, int], str]]:
    """Running headers, footers and page numbers out (``lib.text.page_furniture``); the numbers they
    carry, read by ``lib.text.printed_pages`` (with the PDF's page ``labels``), become each row's
    ``printed_page`` (and are returned by (page, half)). Without layout a bare number first or last on its
    page is a candidate too. Of a candidate kept in the text, only what was read as the page number goes: a
    number alone, its row; a short footer's number, that number (its words stay); a footnote (a row led by a
    footnote marker) is never a candidate, whatever its number. A row set
    in heading type is never furniture: chapters that each open a page
    with ``Chapter 2`` in large type recur in the top margin as a running header would."""
    tops = [_margin_top(rows, index) for index in range(len(rows))]
    margin_rows = [
        MarginRow(row.text, row.page, row.half, None if _heading_type(row, size) else top)
        for row, top in zip(rows, tops, strict=True)
    ]
    running = running_keys(margin_rows, page_count)
    candidates: dict[tuple[int, int], list[PageToken]] = {}
    kept: list[Row] = []
    provisional: list[tuple[Row, list[PageToken]]] = []
    edges = _edge_rows(rows)
    for row, margin, top in zip(rows, margin_rows, tops, strict=True):
        bare = bare_tokens(row.text, row.centre) if in_margin(top) else []
        if in_margin(margin.top) and (bare or running_key(row.text) in running):
            candidates.setdefault((row.page, row.half), []).extend(bare or row_tokens(row.text, row.centre))
            continue
        if not bare and id(row) in edges:
            bare = bare_tokens(row.text, row.centre)
        if not bare and in_margin(margin.top) and row.lead_marker is None:  # a footnote is no footer
            bare = loose_tokens(row.text, row.centre, head=margin.top is not None and margin.top < 0.5)
        if bare:  # in large type, above the margin with nothing below, or a footer of too few pages: kept
            # unless it carries the page number
            candidates.setdefault((row.page, row.half), []).extend(bare)
            provisional.append((row, bare))
        kept.append(row)
    reading = read_printed_pages(candidates, spreads, labels)
    for row, bare in provisional:
        if read := [t for t in bare if reading.is_read(row.page, t)]:
            row.text = without_number(row.text, read[0])
    kept = [row for row in kept if row.text]
    printed = reading.by_half
    starts: set[tuple[int, int]] = set()
    for row in kept:
        row.printed_page = printed.get((row.page, row.half))
        if (row.page, row.half) not in starts:
            starts.add((row.page, row.half))
            row.page_start, row.gap_before = True, False
    return kept, printed


def _edge_rows(rows: list[Row]) -> set[int]:
    """The ids of the highest and the lowest row of each page (each half of a spread), by position: a page
    number set above the margin still has nothing above or below it."""
    placed: dict[tuple[int, int], list[tuple[float, int]]] = {}
    for row in rows:
        if row.top is not None:
            placed.setdefault((row.page, row.half), []).append((row.top, id(row)))
    return {ident for found in placed.values() for ident in (min(found)[1], max(found)[1])}


def _heading_type(row: Row, size: float | None) -> bool:
    return row.size is not None and size is not None and row.size >= HEADING_SCALE * size


def _margin_top(rows: list[Row], index: int) -> float | None:
    """A row's height on its page; for a row without layout, first and last on the page count as margin."""
    row = rows[index]
    if row.top is not None or row.size is not None:
        return row.top
    first = index == 0 or rows[index - 1].page != row.page
    last = index == len(rows) - 1 or rows[index + 1].page != row.page
    return 0.0 if first else 1.0 if last else 0.5
