"""A document's parts: the page ranges that are read each with the grammar that fits them.

A report or plan is often bound with other material: a schedule of main modifications at the back of an
inspector's report, appendices numbered in their own way, a glossary. Read as one, the material at the back
decides how the body is read (a schedule's hundreds of ``MM`` rows made a whole report a schedule). So the
document is first cut where bound-in material starts, and each part then decides its own grammar from its own
rows (``PartGrammar``): a schedule of modifications (codes numbered one after another), paragraphs numbered
in decimals (``3.51``) or in whole numbers (``116.``), or neither (too few numbered rows to say).

Part boundaries are where the document says so: a heading starting ``Appendix``, ``Annex``, ``Schedule``,
``Glossary`` or ``Main Modifications`` (set in heading type, or in bold near the top of its page), and the
page where a run of modification codes starts. A heading between a schedule's first and last codes is one the
schedule quotes (``Appendix A: Monitoring Framework`` of the plan it changes), not a part of its own.
Neighbouring parts whose grammars agree (or one of which cannot tell), or whose joining would not change how
the earlier is numbered, are read as one, so an annex that continues the body's numbering (NPPF 2024's
Annex 1) stays in the body's sequence, and a plan's appendix of numbered lists stays plain text of the plan.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from lib.text.layout_rows import HEADING_SCALE, Row
from lib.text.section_grammar import DECIMAL_RE, MAX_SKIPPED_PARAGRAPHS, MODIFICATION_RE, TITLE_MAX_WORDS

MIN_MODIFICATIONS = 5
"""A run of at least this many modification codes numbered one after another (``MM1``, ``MM2``, ..., one may
be skipped) is a schedule of modifications: each row is cited by its code (``MM74``, ``M5``)."""
MIN_NUMBERED_ROWS = 5
"""A part numbers its paragraphs in decimals when it has at least this many decimal-numbered rows and at
least half as many as whole-numbered ones; in whole numbers when it has this many whole-numbered rows."""
TOP_ROWS = 3
"""A bold part heading among a page's first rows starts the part at the top of that page (a line of the
page's own header above it belongs to the part too)."""

PART_HEADING_RE = re.compile(
    r"^(?:Appendix|Appendices|Annex|Annexe|Schedule|Glossary|(?:Schedule\s+of\s+)?(?:Main\s+|Proposed\s+)?"
    r"Modifications)\b",
    re.IGNORECASE,
)
COVER_PAGES = 2
"""A schedule without a heading of its own takes at most this many pages before its first code (its cover,
its introduction), when they hold no numbered paragraph."""
_WHOLE_RE = re.compile(r"^\d{1,3}\.\s")


class Numbering(Enum):
    DECIMAL = "decimal"
    WHOLE = "whole"
    UNDECIDED = "undecided"


@dataclass(frozen=True)
class PartGrammar:
    """How a part is read: as a schedule of modifications, or by its paragraph numbering."""

    modifications: bool
    numbering: Numbering

    @property
    def decimal(self) -> bool:
        return self.numbering is Numbering.DECIMAL


@dataclass
class Part:
    """Rows ``start`` .. ``end`` (exclusive) of the document's rows, and the grammar they are read with."""

    start: int
    end: int
    grammar: PartGrammar


def split_parts(rows: list[Row], body_size: float | None) -> list[Part]:
    """The document's parts in order, covering every row; one part for a document with nothing bound in."""
    if not rows:
        return []
    chains = modification_runs(rows)
    headings = _heading_starts(rows, body_size)
    starts = {0, *(start for start in headings if not any(first < start <= last for first, last in chains))}
    for first, _ in chains:
        if not any(
            start <= first and _page_gap(rows, start, first) <= 1 and not _numbered(rows[start:first])
            for start in starts
        ):
            starts.add(_schedule_start(rows, first, body_size))
    bounds = sorted(starts)
    parts = [
        Part(start, end, _grammar(rows, start, end, chains))
        for start, end in zip(bounds, [*bounds[1:], len(rows)], strict=True)
    ]
    return _merge(rows, parts)


def modification_runs(rows: list[Row]) -> list[tuple[int, int]]:
    """(first, last) row indexes of each run of modification codes in sequence long enough to be a schedule.
    Codes are ``MM`` in any type, or ``M`` in plain type (a bold ``M1: Planning for minerals`` heads a policy)."""
    runs: list[tuple[int, int]] = []
    first = last = -1
    previous = 0
    steps = 0
    for index, row in enumerate(rows):
        match = None if row.contents else MODIFICATION_RE.match(row.text)
        if match is None or (match["code"] == "M" and row.bold_lead.startswith(match["code"])):
            continue
        number = int(match["num"])
        if first >= 0 and previous < number <= previous + 1 + MAX_SKIPPED_PARAGRAPHS:
            steps += 1
            last, previous = index, number
            continue
        if steps >= MIN_MODIFICATIONS:
            runs.append((first, last))
        first = last = index
        previous, steps = number, 0
    if steps >= MIN_MODIFICATIONS:
        runs.append((first, last))
    return runs


def numbering_of(rows: list[Row]) -> Numbering:
    decimal = sum(bool(DECIMAL_RE.match(row.text)) for row in rows if not row.contents)
    whole = sum(bool(_WHOLE_RE.match(row.text)) for row in rows if not row.contents)
    if decimal >= MIN_NUMBERED_ROWS and 2 * decimal >= whole:
        return Numbering.DECIMAL
    return Numbering.WHOLE if whole >= MIN_NUMBERED_ROWS else Numbering.UNDECIDED


def _grammar(rows: list[Row], start: int, end: int, chains: list[tuple[int, int]]) -> PartGrammar:
    inside = [(first, last) for first, last in chains if start <= first < end]
    return PartGrammar(modifications=bool(inside), numbering=numbering_of(rows[start:end]))


def _merge(rows: list[Row], parts: list[Part]) -> list[Part]:
    """Neighbouring parts are read as one unless one is a schedule of modifications, or the later one, read
    with the earlier, would change how the earlier is numbered (a long appendix in decimals bound after a
    report numbered 1..N); an appendix whose numbered lists do not outweigh the body stays with the body."""
    merged: list[Part] = []
    for part in parts:
        previous = merged[-1] if merged else None
        if previous is not None and _compatible(rows, previous, part):
            numbering = previous.grammar.numbering
            if numbering is Numbering.UNDECIDED:
                numbering = part.grammar.numbering
            previous.end = part.end
            previous.grammar = PartGrammar(False, numbering)
        else:
            merged.append(part)
    return merged


def _compatible(rows: list[Row], earlier: Part, later: Part) -> bool:
    if earlier.grammar.modifications or later.grammar.modifications:
        return False
    numbering = earlier.grammar.numbering
    if Numbering.UNDECIDED in (numbering, later.grammar.numbering) or numbering is later.grammar.numbering:
        return True
    return numbering_of(rows[earlier.start : later.end]) is numbering


def _heading_starts(rows: list[Row], body_size: float | None) -> list[int]:
    """Where a part heading starts a part: the heading row, or the top of its page when it is among the first
    rows there."""
    starts: list[int] = []
    top = 0
    for index, row in enumerate(rows):
        if index == 0 or row.page != rows[index - 1].page or row.half != rows[index - 1].half:
            top = index
        if row.contents or not PART_HEADING_RE.match(row.text) or len(row.text.split()) > TITLE_MAX_WORDS:
            continue
        large = _large(row, body_size)
        near_top = index - top < TOP_ROWS
        bold = bool(row.bold_lead) and row.bold_lead == row.text
        if large or (bold and near_top):
            starts.append(top if near_top else index)
    return starts


def _schedule_start(rows: list[Row], first: int, body_size: float | None) -> int:
    """Where a schedule without a part heading of its own starts: at a heading naming it above its first code on
    that page (``Schedule of Main Modifications`` in bold, right after the report's last paragraph), else at the
    top of the page unless a numbered paragraph stands there above it (then at the first code). Pages just before
    it with no numbered paragraph (the schedule's cover or introduction, ``COVER_PAGES`` at most) are its own."""
    top = _page_start(rows, first)
    for index in range(first - 1, top - 1, -1):
        row = rows[index]
        emphasised = (bool(row.bold_lead) and row.bold_lead == row.text) or _large(row, body_size)
        if emphasised and PART_HEADING_RE.match(row.text) and len(row.text.split()) <= TITLE_MAX_WORDS:
            return index
    if _numbered(rows[top:first]):
        return first
    for _ in range(COVER_PAGES):
        earlier = _page_start(rows, top - 1) if top > 0 else top
        if earlier == top or _numbered(rows[earlier:top]) or any(row.contents for row in rows[earlier:top]):
            break
        top = earlier
    return top


def _numbered(rows: list[Row]) -> bool:
    """Some row is a numbered paragraph (a part holding one is a body, not a schedule's cover)."""
    return any(not row.contents and (_WHOLE_RE.match(row.text) or DECIMAL_RE.match(row.text)) for row in rows)


def _large(row: Row, body_size: float | None) -> bool:
    return row.size is not None and body_size is not None and row.size >= HEADING_SCALE * body_size


def _page_start(rows: list[Row], index: int) -> int:
    while index > 0 and rows[index - 1].page == rows[index].page:
        index -= 1
    return index


def _page_gap(rows: list[Row], earlier: int, later: int) -> int:
    return rows[later].page - rows[earlier].page
