"""The section parser: a state machine over body rows that opens a section at each citable unit.

State is where the reader is in the document (``Block``) and whether the heading just read may wrap onto
the next row (``Wrap``). Each row is first offered to the open heading as a continuation; otherwise it is
classified as one ``Kind`` among those its block recognises (``RECOGNISED``) and handed to that kind's
handler, which opens a unit or adds to the open one and makes any transition:

- ``FRONT_MATTER`` (before the first chapter) sees only chapter headings; its text is cited by page;
- a chapter or annex heading, from any block, enters ``CHAPTER``; a policy heading enters ``POLICY``,
  where numbered lines are the policy's own sub-paragraphs; a caption goes back to ``CHAPTER``.

Everything up to the next unit belongs to the open one, so a section never straddles two numbered
paragraphs or policies. The same rules serve NPPF 2024 (paragraphs numbered 1..N through the document)
and the 2025 draft (policies, annexes with their own numbering, tables); a page without layout (OCR) is
read by the same rules minus the font ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from enum import Enum, auto

from lib.text.layout_rows import Row, normalise, starts_list_item
from lib.text.section_units import Unit

HEADING_SCALE = 1.3
"""A row whose text is this much larger than body text is a heading."""
MIN_STRUCTURED_UNITS = 3

_CHAPTER_RE = re.compile(r"^(?:Chapter\s+)?(?P<num>\d{1,2})[.:]?\s+(?P<title>\S.*)$")
_ANNEX_RE = re.compile(r"^(?P<kind>Annex|Appendix|Schedule)\s+(?P<num>[A-Z0-9]{1,3})\b\s*[:.\-–]?\s*(?P<title>.*)$")
_PARA_RE = re.compile(r"^(?P<num>\d{1,3})\.(?:\s+|$)")
_POLICY_RE = re.compile(r"^(?P<code>[A-Z]{1,4}\d{1,3}[A-Z]?)\s*:\s*(?P<name>\S.*)$")
_CAPTION_RE = re.compile(
    r"^(?P<label>(?:Table|Figure)\s+[A-Z]?\d+(?:[.\-–]\d+)*[a-z]?)\b\s*(?:[:.\-–]\s*(?P<title>.*))?$"
)
_GLOSSARY_TERM_RE = re.compile(r"^(?P<term>[^:]{2,150}?)(?:\[\^\d+\])*\s*:")


class Block(Enum):
    FRONT_MATTER = auto()
    CHAPTER = auto()
    POLICY = auto()


class Wrap(Enum):
    """Which heading, if any, the next row may continue (long titles wrap onto a second line)."""

    NONE = auto()
    CHAPTER_TITLE = auto()
    UNIT_TITLE = auto()


class Kind(Enum):
    CHAPTER_HEADING = auto()
    SUBHEADING = auto()
    POLICY = auto()
    CAPTION = auto()
    GLOSSARY_TERM = auto()
    PARAGRAPH = auto()
    TEXT = auto()


_IN_CHAPTER = (Kind.CHAPTER_HEADING, Kind.SUBHEADING, Kind.POLICY, Kind.CAPTION, Kind.GLOSSARY_TERM)
RECOGNISED: dict[Block, tuple[Kind, ...]] = {
    Block.FRONT_MATTER: (Kind.CHAPTER_HEADING,),
    Block.CHAPTER: (*_IN_CHAPTER, Kind.PARAGRAPH),
    Block.POLICY: _IN_CHAPTER,
}
"""The kinds each block looks for, in order of precedence; a row that is none of them is ``TEXT``."""


@dataclass(frozen=True)
class Line:
    """A classified row: its kind and, for a unit start, the unit's ref and title."""

    kind: Kind
    ref: str = ""
    title: str = ""
    number: int = 0


@dataclass(frozen=True)
class Chapter:
    """The chapter or annex being read (the empty one in front matter); ``glossary`` turns on terms."""

    heading: str = ""
    ref: str = ""
    size: float | None = None
    glossary: bool = False

    @property
    def title(self) -> str:
        annex = _ANNEX_RE.match(self.heading)
        if annex:
            return annex["title"].strip() or self.heading
        chapter = _CHAPTER_RE.match(self.heading)
        return chapter["title"].strip() if chapter else self.heading


@dataclass
class Numbering:
    """Paragraph numbers run 1..N through the document; a restart at 1 right after a chapter or annex
    heading qualifies the refs from there on with that heading's ref (``Annex D Para 3``)."""

    last: int = 0
    prefix: str = ""
    restart_allowed: bool = False

    def next_ref(self, number: int, chapter_ref: str) -> str | None:
        """The ref of paragraph ``number`` if it comes next in the sequence, else None."""
        if number == self.last + 1:
            return f"{self.prefix}Para {number}"
        if number == 1 and self.restart_allowed and self.last > 0:
            return f"{chapter_ref} Para 1"
        return None

    def take(self, number: int, chapter_ref: str) -> None:
        if number != self.last + 1:
            self.prefix = f"{chapter_ref} "
        self.last, self.restart_allowed = number, False


class SectionParser:
    """Feed body rows in reading order, then read ``units`` (footnotes are placed by the caller)."""

    def __init__(self, body_size: float | None) -> None:
        self.body_size = body_size
        self.units: list[Unit] = []
        self.current: Unit | None = None
        self.block = Block.FRONT_MATTER
        self.wrap = Wrap.NONE
        self.chapter = Chapter()
        self.subheading = ""
        self.pending: list[Row] = []
        self.numbering = Numbering()
        self.structure_units = 0
        self.chapters = 0
        self.previous: Row | None = None
        self._recognisers: dict[Kind, Callable[[Row], Line | None]] = {
            Kind.CHAPTER_HEADING: self._chapter_heading,
            Kind.SUBHEADING: self._subheading,
            Kind.POLICY: self._policy,
            Kind.CAPTION: self._caption,
            Kind.GLOSSARY_TERM: self._glossary_term,
            Kind.PARAGRAPH: self._paragraph,
        }
        self._handlers: dict[Kind, Callable[[Row, Line], None]] = {
            Kind.CHAPTER_HEADING: self._on_chapter_heading,
            Kind.SUBHEADING: self._on_subheading,
            Kind.POLICY: self._on_policy,
            Kind.CAPTION: self._on_caption,
            Kind.GLOSSARY_TERM: self._on_unit,
            Kind.PARAGRAPH: self._on_paragraph,
            Kind.TEXT: self._on_text,
        }

    def feed(self, row: Row) -> None:
        if not self._continue_title(row):
            self.wrap = Wrap.NONE
            line = self.classify(row)
            self._handlers[line.kind](row, line)
        self.previous = row

    def classify(self, row: Row) -> Line:
        for kind in RECOGNISED[self.block]:
            line = self._recognisers[kind](row)
            if line is not None:
                return line
        return Line(Kind.TEXT)

    def is_structured(self) -> bool:
        """Enough structure to cite by unit rather than by page: two chapters, or three paragraphs or policies."""
        return self.chapters >= 2 or self.structure_units >= MIN_STRUCTURED_UNITS

    # continuations of the heading just read

    def _continue_title(self, row: Row) -> bool:
        current = self.current
        if current is None or self.wrap is Wrap.NONE or row.gap_before or row.page_start:
            return False
        if self.wrap is Wrap.CHAPTER_TITLE:
            if row.size != self.chapter.size:
                return False
            self.chapter = replace(self.chapter, heading=f"{self.chapter.heading} {row.text}")
            current.add(row, " ")
            current.chapter, current.title = self.chapter.heading, self.chapter.title
            return True
        if not row.bold_lead or row.bold_lead != row.text:
            return False
        current.title = f"{current.title} {row.text}"
        current.add(row, " ")
        return True

    # recognisers: what a row is, given the state; no side effects

    def _chapter_heading(self, row: Row) -> Line | None:
        """Only large type opens a chapter: the contents page lists the same titles in body-size type."""
        if not self._is_heading(row):
            return None
        annex = _ANNEX_RE.match(row.text)
        if annex:
            return Line(Kind.CHAPTER_HEADING, f"{annex['kind'].capitalize()} {annex['num']}")
        chapter = _CHAPTER_RE.match(row.text)
        return Line(Kind.CHAPTER_HEADING, f"Chapter {int(chapter['num'])}") if chapter else None

    def _subheading(self, row: Row) -> Line | None:
        return Line(Kind.SUBHEADING) if self._is_heading(row) else None

    def _policy(self, row: Row) -> Line | None:
        match = _POLICY_RE.match(row.text)
        if match is None or not self._at_block_start(row):
            return None
        if row.size is not None and not row.bold_lead.startswith(match["code"]):
            return None
        return Line(Kind.POLICY, f"Policy {match['code']}", match["name"])

    def _caption(self, row: Row) -> Line | None:
        match = _CAPTION_RE.match(row.text)
        if match is None or not self._at_block_start(row):
            return None
        emphasised = row.bold_lead.startswith(match["label"].split()[0]) or self._is_heading(row)
        if row.size is not None and not emphasised:
            return None
        return Line(Kind.CAPTION, normalise(match["label"]).replace("–", "-"), (match["title"] or "").strip())

    def _glossary_term(self, row: Row) -> Line | None:
        if not self.chapter.glossary or not row.bold_lead or starts_list_item(row.text):
            return None
        match = _GLOSSARY_TERM_RE.match(row.text)
        if match is None or row.bold_lead.rstrip(" :") != match["term"].strip():
            return None
        term = match["term"].strip()
        return Line(Kind.GLOSSARY_TERM, f"Glossary: {term}", term)

    def _paragraph(self, row: Row) -> Line | None:
        match = _PARA_RE.match(row.text)
        if match is None or not self._at_block_start(row):
            return None
        number = int(match["num"])
        ref = self.numbering.next_ref(number, self.chapter.ref)
        return None if ref is None else Line(Kind.PARAGRAPH, ref, self.subheading, number)

    # handlers: one per kind, each making its transition

    def _on_chapter_heading(self, row: Row, line: Line) -> None:
        self.chapter = Chapter(row.text, line.ref, row.size, "glossary" in row.text.lower())
        self.block, self.wrap = Block.CHAPTER, Wrap.CHAPTER_TITLE
        self.subheading = ""
        self.numbering.restart_allowed = True
        self.chapters += 1
        self._open(line.ref, self.chapter.title, row, keep_pending=True)

    def _on_subheading(self, row: Row, line: Line) -> None:
        """Headings inside a chapter name what follows: they become the title of the next units, and stay
        in the text only when plain text (not a new unit) follows them."""
        previous = self.pending[-1] if self.pending else None
        if previous is not None and previous.size == row.size and not row.gap_before:
            self.subheading = f"{self.subheading} {row.text}"
        else:
            self.subheading = row.text
        self.pending.append(row)

    def _on_policy(self, row: Row, line: Line) -> None:
        self.block = Block.POLICY
        self.structure_units += 1
        self._on_titled_unit(row, line)

    def _on_caption(self, row: Row, line: Line) -> None:
        self.block = Block.CHAPTER
        self._on_titled_unit(row, line)

    def _on_titled_unit(self, row: Row, line: Line) -> None:
        self._on_unit(row, line)
        if row.size is not None:
            self.wrap = Wrap.UNIT_TITLE

    def _on_paragraph(self, row: Row, line: Line) -> None:
        self.numbering.take(line.number, self.chapter.ref)
        self.structure_units += 1
        self._on_unit(row, line)

    def _on_unit(self, row: Row, line: Line) -> None:
        self._open(line.ref, line.title, row, keep_pending=False)

    def _on_text(self, row: Row, line: Line) -> None:
        self._flush_pending()
        if self.current is None or (self.block is Block.FRONT_MATTER and self.current.page != row.page):
            self._open(f"Page {row.page}", "", row, keep_pending=True)
            return
        self.current.add(row)

    # helpers

    def _open(self, ref: str, title: str, row: Row, *, keep_pending: bool) -> None:
        """Open a unit at ``row``. Pending subheadings end the previous unit's text (``keep_pending``) or
        are dropped, having become the new unit's title."""
        if keep_pending:
            self._flush_pending()
        self.pending = []
        self.current = Unit(ref=ref, chapter=self.chapter.heading, title=title, page=row.page, order=len(self.units))
        self.units.append(self.current)
        self.current.add(row)

    def _flush_pending(self) -> None:
        """Subheadings followed by plain text stay in the open unit's text, as their own paragraph."""
        if self.current is not None:
            for heading in self.pending:
                self.current.add(heading, "\n\n")
        self.pending = []

    def _is_heading(self, row: Row) -> bool:
        return row.size is not None and self.body_size is not None and row.size >= HEADING_SCALE * self.body_size

    def _at_block_start(self, row: Row) -> bool:
        previous = self.previous
        return row.gap_before or row.page_start or previous is None or self._is_heading(previous)
