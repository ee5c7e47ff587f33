"""Split an extracted policy document into citable sections (spec 000 appendix: ``section_ref``, ``chapter``).

Refs name what a planner cites:

- ``Chapter 9`` / ``Annex 2``: a chapter's or annex's own text before its first numbered unit
  (heading, objectives box, introduction);
- ``Para 116``: a numbered paragraph in the document-wide sequence (NPPF 2024 runs 1..N through its
  chapters and Annex 1); where numbering restarts at 1 inside a chapter or annex the ref is qualified:
  ``Annex D Para 3``;
- ``Policy TR6``: a policy heading (``TR6: Assessing transport impacts``) with all its numbered
  sub-paragraphs, up to the next policy, table or chapter;
- ``Table 1`` / ``Figure 2``: a captioned table or figure;
- ``Glossary: Grey belt``: one definition in a glossary annex (stable across revisions, whichever
  annex letter or number the glossary has);
- ``Footnote 7``: a footnote, kept out of the paragraph it annotates (NPPF footnotes carry policy, e.g.
  footnote 7, so they are kept rather than dropped); the paragraph keeps a ``[^7]`` marker in its place;
- ``Page 3``: front matter before the first chapter, and every page of a document without structure.

Layout (font sizes, bold, position) comes from ``PageText.lines``: headings are larger than body text,
footnotes smaller and led by a small number, running page numbers sit alone in the top or bottom margin.
Plain text alone cannot tell the chapter heading ``9. Promoting sustainable transport`` from paragraph 9,
nor a footnote from a numbered line. Pages without layout (OCR) are read from their plain text by the same
rules minus the font ones; a document made only of them shows no chapters and is cited by page.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from lib.models import ExtractedDocument, PageText, Section, TextLine, TextSpan

HEADING_SCALE = 1.3
"""A row whose text is this much larger than body text is a heading."""
FOOTNOTE_SIZE_GAP = 1.0
"""Footnote text is at least this many points smaller than body text."""
MARGIN = 0.1
"""Top and bottom margins (fraction of page height) where running page numbers live."""
PARAGRAPH_GAP = 0.5
"""A vertical gap above a row larger than this share of its height separates paragraphs."""
MIN_STRUCTURED_UNITS = 3
MARKER_SCALE = 0.75
"""Digits this much smaller than the text around them are footnote numbers (when not flagged superscript)."""

_CHAPTER_RE = re.compile(r"^(?:Chapter\s+)?(?P<num>\d{1,2})[.:]?\s+(?P<title>\S.*)$")
_ANNEX_RE = re.compile(r"^(?P<kind>Annex|Appendix|Schedule)\s+(?P<num>[A-Z0-9]{1,3})\b\s*[:.\-–]?\s*(?P<title>.*)$")
_PARA_RE = re.compile(r"^(?P<num>\d{1,3})\.(?:\s+|$)")
_POLICY_RE = re.compile(r"^(?P<code>[A-Z]{1,4}\d{1,3}[A-Z]?)\s*:\s*(?P<name>\S.*)$")
_CAPTION_RE = re.compile(
    r"^(?P<label>(?:Table|Figure)\s+[A-Z]?\d+(?:[.\-–]\d+)*[a-z]?)\b\s*(?:[:.\-–]\s*(?P<title>.*))?$"
)
_GLOSSARY_TERM_RE = re.compile(r"^(?P<term>[^:]{2,150}?)(?:\[\^\d+\])*\s*:")
_EXPONENTS = {"2": "²", "3": "³"}
_UNIT_RE = re.compile(r"\d\s?(?:[kcmd]?m|ft)$")
_MARKER_RE = re.compile(r"^\d{1,3}(?:\s*,\s*\d{1,3})*$")
_PAGE_NUMBER_RE = re.compile(r"^(?:page\s+)?\d{1,4}(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_LIST_ITEM_RE = re.compile(r"^(?:\(?[a-z]{1,2}\)|[a-z]\.\s|\(?[ivxlc]{1,6}[.)]\s|\d{1,3}[.)]\s|[•▪◦●■○∙·-]\s?)")
_SENTENCE_END_RE = re.compile(r"[.:;!?]$")
_SPACES_RE = re.compile(r"\s+")


def split_sections(doc: ExtractedDocument) -> list[Section]:
    """Sections in document order, each with a unique ``section_ref``; one per page when the document has
    no chapters, policies or numbered paragraphs (application documents, unstructured PDFs)."""
    rows = list(_rows(doc.pages))
    body_size = _body_size(doc.pages)
    body, footnotes = _separate_footnotes(rows, body_size)
    parser = _Parser(body_size)
    for row in body:
        parser.feed(row)
    if not parser.is_structured():
        return _page_sections(doc.pages)
    parser.add_footnotes(footnotes)
    return _unique_refs(parser.sections())


# --- rows: one visual line of text with the layout facts the parser needs -----------------------------


@dataclass
class _Row:
    text: str
    page: int
    size: float | None = None
    bold_lead: str = ""
    top: float | None = None
    gap_before: bool = False
    page_start: bool = False
    lead_marker: str | None = None


def _rows(pages: Iterable[PageText]) -> Iterator[_Row]:
    for page in pages:
        rows = _layout_rows(page) if page.lines else _plain_rows(page)
        yield from _drop_page_numbers(rows, has_layout=bool(page.lines))


def _layout_rows(page: PageText) -> list[_Row]:
    """PyMuPDF splits a visual line into several lines (``116.`` then the text); merge them back."""
    groups: list[list[TextLine]] = []
    for line in page.lines:
        if groups and _same_row(groups[-1][-1], line):
            groups[-1].append(line)
        else:
            groups.append([line])
    rows: list[_Row] = []
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


def _row_from_lines(lines: list[TextLine], page_number: int) -> _Row:
    spans = [span for line in lines for span in ([*line.spans, TextSpan(text=" ", size=0.0)])]
    size = _dominant_size(spans)
    text, lead_marker = _row_text(spans, size)
    return _Row(
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
    return _normalise("".join(parts)), lead_marker


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
    return _normalise("".join(lead))


def _plain_rows(page: PageText) -> list[_Row]:
    rows: list[_Row] = []
    gap = False
    for line in page.text.splitlines():
        text = _normalise(line)
        if not text:
            gap = True
            continue
        rows.append(_Row(text=text, page=page.page_number, gap_before=gap, page_start=not rows))
        gap = False
    return rows


def _drop_page_numbers(rows: list[_Row], *, has_layout: bool) -> list[_Row]:
    """Running page numbers are bare numbers in a margin (or, without layout, first or last on the page)."""
    kept: list[_Row] = []
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


def _body_size(pages: Iterable[PageText]) -> float | None:
    weights: Counter[float] = Counter()
    for page in pages:
        for line in page.lines:
            for span in line.spans:
                if not span.superscript:
                    weights[round(span.size * 2) / 2] += len(span.text.strip())
    return weights.most_common(1)[0][0] if weights else None


def _normalise(text: str) -> str:
    return _SPACES_RE.sub(" ", text).strip()


# --- footnotes -----------------------------------------------------------------------------------------


@dataclass
class _Footnote:
    number: str
    rows: list[_Row]


def _separate_footnotes(rows: list[_Row], body_size: float | None) -> tuple[list[_Row], list[_Footnote]]:
    """A footnote starts with a small number leading a line of small text; smaller lines after it on the
    same page continue it, and so do the first small lines overleaf when it stopped mid-sentence. Small
    text without a leading number (a note under a table) stays body text."""
    body: list[_Row] = []
    footnotes: list[_Footnote] = []
    current: _Footnote | None = None
    for row in rows:
        small = body_size is not None and row.size is not None and row.size <= body_size - FOOTNOTE_SIZE_GAP
        if small and row.lead_marker:
            current = _Footnote(number=row.lead_marker, rows=[row])
            footnotes.append(current)
        elif small and current is not None and (row.page == current.rows[-1].page or _continues(current, row)):
            current.rows.append(row)
        else:
            if current is not None and row.page == current.rows[-1].page:
                current = None
            body.append(row)
    return body, footnotes


def _continues(footnote: _Footnote, row: _Row) -> bool:
    """A footnote cut mid-sentence at the foot of one page resumes at the foot of the next."""
    last = footnote.rows[-1]
    return (
        row.page == last.page + 1 and row.top is not None and row.top > 0.5 and not _SENTENCE_END_RE.search(last.text)
    )


# --- the parser ----------------------------------------------------------------------------------------


@dataclass
class _Unit:
    ref: str
    chapter: str
    title: str
    page: int
    order: float
    text: str = ""
    spans: list[tuple[int, int]] = field(default_factory=list)

    def add(self, row: _Row, joiner: str | None = None) -> None:
        if not self.text:
            joiner = ""
        elif joiner is None:
            joiner = _joiner(self.text, row)
        if not self.spans or self.spans[-1][1] != row.page:
            self.spans.append((len(self.text) + len(joiner), row.page))
        self.text += joiner + row.text

    def to_section(self) -> Section:
        return Section(
            section_ref=self.ref,
            chapter=self.chapter,
            title=self.title,
            text=self.text,
            page_number=self.page,
            page_spans=self.spans,
        )


def _joiner(text: str, row: _Row) -> str:
    """Rebuild paragraphs: wrapped lines join with a space, list items start a line, gaps a paragraph."""
    if row.gap_before:
        return "\n\n"
    if _LIST_ITEM_RE.match(row.text):
        return "\n"
    if row.page_start and _SENTENCE_END_RE.search(text) and row.text[:1].isupper():
        return "\n\n"
    if text.endswith("-") and len(text) > 1 and text[-2].isalpha():
        return ""
    return " "


class _Parser:
    """Walks body rows in reading order and opens a unit at each chapter, annex, numbered paragraph,
    policy, caption or glossary term. Everything up to the next unit belongs to the open one, so a
    section never straddles two numbered paragraphs or policies."""

    def __init__(self, body_size: float | None) -> None:
        self.body_size = body_size
        self.units: list[_Unit] = []
        self.current: _Unit | None = None
        self.chapter = ""
        self.chapter_ref = ""
        self.chapter_size: float | None = None
        self.glossary = False
        self.subheading = ""
        self.pending: list[_Row] = []
        self.in_policy = False
        self.last_para = 0
        self.para_prefix = ""
        self.restart_allowed = False
        self.structure_units = 0
        self.chapters = 0
        self.previous: _Row | None = None
        self.in_chapter_heading = False
        self.in_unit_title = False

    # public

    def feed(self, row: _Row) -> None:
        continued = self._heading_continuation(row) or self._title_continuation(row)
        self.in_chapter_heading = continued and self.in_chapter_heading
        self.in_unit_title = continued and self.in_unit_title
        handled = (
            continued
            or self._chapter_heading(row)
            or self._subheading(row)
            or self._policy(row)
            or self._caption(row)
            or self._glossary_term(row)
            or self._paragraph(row)
        )
        if not handled:
            self._body(row)
        self.previous = row

    def is_structured(self) -> bool:
        return self.chapters >= 2 or self.structure_units >= MIN_STRUCTURED_UNITS

    def add_footnotes(self, footnotes: list[_Footnote]) -> None:
        """Footnotes go after the unit open at the foot of their page, under that unit's chapter."""
        hosts = list(self.units)
        for footnote in footnotes:
            page = footnote.rows[0].page
            host = _unit_at(hosts, page)
            order = (host.order if host else 0.0) + 0.5
            unit = _Unit(
                ref=f"Footnote {footnote.number}",
                chapter=host.chapter if host else "",
                title="",
                page=page,
                order=order,
            )
            for row in footnote.rows:
                unit.add(row, " ")
            self.units.append(unit)

    def sections(self) -> list[Section]:
        ordered = sorted(self.units, key=lambda unit: unit.order)
        return [unit.to_section() for unit in ordered if unit.text.strip()]

    # unit starts

    def _chapter_heading(self, row: _Row) -> bool:
        """Only large type opens a chapter: the contents page lists the same titles in body-size type."""
        if not self._is_heading(row):
            return False
        annex = _ANNEX_RE.match(row.text)
        chapter = None if annex else _CHAPTER_RE.match(row.text)
        if annex:
            ref = f"{annex['kind'].capitalize()} {annex['num']}"
        elif chapter:
            ref = f"Chapter {int(chapter['num'])}"
        else:
            return False
        self._flush_pending()
        self.chapter, self.chapter_ref, self.chapter_size = row.text, ref, row.size
        self.glossary = "glossary" in row.text.lower()
        self.subheading, self.in_policy, self.restart_allowed = "", False, True
        self.chapters += 1
        self._open(ref, self._chapter_title(), row)
        self.in_chapter_heading = True
        return True

    def _heading_continuation(self, row: _Row) -> bool:
        """Long chapter titles wrap onto a second line of the same size."""
        if not self.in_chapter_heading or self.current is None:
            return False
        if row.size != self.chapter_size or row.gap_before or row.page_start:
            return False
        self.chapter = f"{self.chapter} {row.text}"
        self.current.add(row, " ")
        self.current.chapter, self.current.title = self.chapter, self._chapter_title()
        return True

    def _subheading(self, row: _Row) -> bool:
        """Headings inside a chapter name what follows: they become the title of the next units, and stay
        in the text only when plain text (not a new unit) follows them."""
        if not self._is_heading(row) or self.chapter_ref == "":
            return False
        previous = self.pending[-1] if self.pending else None
        if previous is not None and previous.size == row.size and not row.gap_before:
            self.subheading = f"{self.subheading} {row.text}"
        else:
            self.subheading = row.text
        self.pending.append(row)
        return True

    def _policy(self, row: _Row) -> bool:
        match = _POLICY_RE.match(row.text)
        if match is None or not self._at_block_start(row) or self.chapter_ref == "":
            return False
        if row.size is not None and not row.bold_lead.startswith(match["code"]):
            return False
        self.in_policy = True
        self.structure_units += 1
        self._open(f"Policy {match['code']}", match["name"], row, keep_pending=False)
        self.in_unit_title = row.size is not None
        return True

    def _title_continuation(self, row: _Row) -> bool:
        """A long policy name or caption wraps onto a second bold line."""
        if not self.in_unit_title or self.current is None or row.gap_before or row.page_start:
            return False
        if not row.bold_lead or row.bold_lead != row.text:
            return False
        self.current.title = f"{self.current.title} {row.text}"
        self.current.add(row, " ")
        return True

    def _caption(self, row: _Row) -> bool:
        match = _CAPTION_RE.match(row.text)
        if match is None or self.chapter_ref == "" or not self._at_block_start(row):
            return False
        emphasised = row.bold_lead.startswith(match["label"].split()[0]) or self._is_heading(row)
        if row.size is not None and not emphasised:
            return False
        label = _normalise(match["label"]).replace("–", "-")
        self.in_policy = False
        self._open(label, (match["title"] or "").strip(), row, keep_pending=False)
        self.in_unit_title = row.size is not None
        return True

    def _glossary_term(self, row: _Row) -> bool:
        if not self.glossary or not row.bold_lead or _LIST_ITEM_RE.match(row.text):
            return False
        match = _GLOSSARY_TERM_RE.match(row.text)
        if match is None or row.bold_lead.rstrip(" :") != match["term"].strip():
            return False
        term = match["term"].strip()
        self._open(f"Glossary: {term}", term, row, keep_pending=False)
        return True

    def _paragraph(self, row: _Row) -> bool:
        match = _PARA_RE.match(row.text)
        if match is None or self.in_policy or self.chapter_ref == "" or not self._at_block_start(row):
            return False
        number = int(match["num"])
        if number == self.last_para + 1:
            pass
        elif number == 1 and self.restart_allowed and self.last_para > 0:
            self.para_prefix = f"{self.chapter_ref} "
        else:
            return False
        self.last_para, self.restart_allowed = number, False
        self.structure_units += 1
        self._open(f"{self.para_prefix}Para {number}", self.subheading, row, keep_pending=False)
        return True

    # plain text

    def _body(self, row: _Row) -> None:
        self._flush_pending()
        if self.current is None or (self.chapter_ref == "" and self.current.page != row.page):
            self._open(f"Page {row.page}", "", row)
            return
        self.current.add(row)

    # helpers

    def _open(self, ref: str, title: str, row: _Row, *, keep_pending: bool = True) -> None:
        if keep_pending:
            self._flush_pending()
        self.pending = []
        self.current = _Unit(ref=ref, chapter=self.chapter, title=title, page=row.page, order=len(self.units))
        self.units.append(self.current)
        self.current.add(row)

    def _flush_pending(self) -> None:
        """Subheadings followed by plain text stay in the open unit's text, as their own paragraph."""
        if self.current is not None:
            for heading in self.pending:
                self.current.add(heading, "\n\n")
        self.pending = []

    def _is_heading(self, row: _Row) -> bool:
        return row.size is not None and self.body_size is not None and row.size >= HEADING_SCALE * self.body_size

    def _at_block_start(self, row: _Row) -> bool:
        previous = self.previous
        return row.gap_before or row.page_start or previous is None or self._is_heading(previous)

    def _chapter_title(self) -> str:
        annex = _ANNEX_RE.match(self.chapter)
        chapter = _CHAPTER_RE.match(self.chapter)
        if annex:
            return annex["title"].strip() or self.chapter
        return chapter["title"].strip() if chapter else self.chapter


def _unit_at(units: list[_Unit], page: int) -> _Unit | None:
    """The unit open at the foot of ``page``: the last one to start on or before it."""
    host = None
    for unit in units:
        if unit.page <= page:
            host = unit
    return host


# --- fallbacks and clean-up ------------------------------------------------------------------------------


def _page_sections(pages: list[PageText]) -> list[Section]:
    """No recognisable structure: one section per page with the page's text as extracted. Reflowing is
    left out on purpose: it suits prose, but scrambles the cell-per-line text of tables and forms."""
    return [
        Section(
            section_ref=f"Page {page.page_number}",
            text=page.text.strip(),
            page_number=page.page_number,
            page_spans=[(0, page.page_number)],
        )
        for page in pages
        if page.text.strip()
    ]


def _unique_refs(sections: list[Section]) -> list[Section]:
    """Refs are lookup keys: a repeat (a footnote number reused, two ``Table 1``) gets `` (2)``, `` (3)``."""
    seen: Counter[str] = Counter()
    unique: list[Section] = []
    for section in sections:
        seen[section.section_ref] += 1
        count = seen[section.section_ref]
        unique.append(
            section if count == 1 else section.model_copy(update={"section_ref": f"{section.section_ref} ({count})"})
        )
    return unique
