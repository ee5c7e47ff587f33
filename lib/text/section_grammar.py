"""The section parser's grammar: what a row can be (``Kind``, each with its pattern), where the reader can be
(``Block``) and which kinds each block recognises (``RECOGNISED``), the chapter being read (``Chapter``) and the
document-wide paragraph numbering (``Numbering``). Pure data and small rules; the state machine that applies
them is ``lib.text.section_parser``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum, auto

MIN_STRUCTURED_UNITS = 3

CHAPTER_RE = re.compile(r"^(?:Chapter\s+)?(?P<num>\d{1,2})[.:]?\s+(?:[-–—]\s+)?(?P<title>\S.*)$")
ANNEX_RE = re.compile(r"^(?P<kind>Annex|Appendix|Schedule)\s+(?P<num>[A-Z0-9]{1,3})\b\s*[:.\-–]?\s*(?P<title>.*)$")
PARA_RE = re.compile(r"^(?P<num>\d{1,3})\.(?:\s+|$)")
MODIFICATION_RE = re.compile(r"^(?P<code>(?:[A-Z]{1,5}/)?MM?)\s?(?P<num>\d{1,3})(?![\w.(/])\s*(?P<rest>.*)$")
"""A row of a schedule of main modifications: ``MM74 Policy HO3.5 ...``, ``M5 Page 11 paragraph 1.22``, or with
the plan's own prefix where one examination changes several plans (``AAP/MM3``)."""
DECIMAL_RE = re.compile(r"^(?P<num>\d{1,2}(?:\.\d{1,3}){1,3})\.?(?=\s|$)")
"""A paragraph in a plan's decimal numbering: ``3.51``, ``01.03``, ``4.7.2``."""
SUBHEADING_SCALE = 1.1
"""A decimal-numbered row this much larger than body text numbers a heading (``1.2 Contact details``)."""
TITLE_MAX_CHARS = 120
TITLE_MAX_WORDS = 12
"""Longer text after a policy code in body type is the policy's first sentence, not its name."""
CAPTION_RE = re.compile(
    r"^(?P<label>(?:Table|Figure)\s+[A-Z]?\d+(?:[.\-–]\d+)*[a-z]?)\b\s*(?:[:.\-–]\s*(?P<title>.*))?$"
)
GLOSSARY_HEADING_RE = re.compile(r"^Glossary\b", re.IGNORECASE)
"""A heading that opens a glossary inside a chapter or appendix: its bold ``Term:`` rows are entries."""
GLOSSARY_TERM_RE = re.compile(r"^(?P<term>[^:]{2,150}?)(?:\[\^\d+\])*\s*:")


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
    MODIFICATION = auto()
    PARAGRAPH = auto()
    DECIMAL_PARAGRAPH = auto()
    TEXT = auto()


_IN_CHAPTER = (Kind.CHAPTER_HEADING, Kind.POLICY, Kind.SUBHEADING, Kind.CAPTION, Kind.GLOSSARY_TERM)
RECOGNISED: dict[Block, tuple[Kind, ...]] = {
    Block.FRONT_MATTER: (Kind.CHAPTER_HEADING, Kind.POLICY),
    Block.CHAPTER: (*_IN_CHAPTER, Kind.PARAGRAPH),
    Block.POLICY: _IN_CHAPTER,
}
"""The kinds each block looks for, in order of precedence; a row that is none of them is ``TEXT``. A
document numbered in decimals (``3.51``) looks for ``DECIMAL_PARAGRAPH`` instead of ``PARAGRAPH``, in every
block: its whole numbers (``1.``) number the clauses of a policy or a list, not paragraphs."""


def recognised(decimal: bool, unchaptered: bool, modifications: bool = False) -> dict[Block, tuple[Kind, ...]]:
    """``RECOGNISED`` for a document numbered in decimals, or without numbered chapters (an inspector's
    report: paragraphs 1..N under unnumbered headings), whose front matter ends at its first paragraph; in a
    schedule of main modifications only ``MM`` rows and chapter headings open units: the policies and
    paragraphs a modification quotes are its text."""
    if modifications:
        return {block: (Kind.MODIFICATION, Kind.CHAPTER_HEADING) for block in Block}
    table = dict(RECOGNISED)
    if unchaptered:
        table[Block.FRONT_MATTER] = (*table[Block.FRONT_MATTER], Kind.PARAGRAPH)
    if not decimal:
        return table
    return {
        block: (*(kind for kind in kinds if kind is not Kind.PARAGRAPH), Kind.DECIMAL_PARAGRAPH)
        for block, kinds in table.items()
    }


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
        annex = ANNEX_RE.match(self.heading)
        if annex:
            return annex["title"].strip() or self.heading
        chapter = CHAPTER_RE.match(self.heading)
        return chapter["title"].strip() if chapter else self.heading


MAX_SKIPPED_PARAGRAPHS = 1
"""A paragraph number may skip this many (one lost to a page break or read as something else) and still
continue the sequence; otherwise one missed number would fold every later paragraph into the one before."""


@dataclass
class Numbering:
    """Paragraph numbers run 1..N through the document; a restart at 1 right after a chapter or annex
    heading qualifies the refs from there on with that heading's ref (``Annex D Para 3``)."""

    last: int = 0
    prefix: str = ""
    restart_allowed: bool = False

    def next_ref(self, number: int, chapter_ref: str) -> str | None:
        """The ref of paragraph ``number`` if it comes next in the sequence (or skips at most
        ``MAX_SKIPPED_PARAGRAPHS``), else None."""
        if self.last < number <= self.last + 1 + MAX_SKIPPED_PARAGRAPHS and (number == self.last + 1 or self.last):
            return f"{self.prefix}Para {number}"
        if number == 1 and self.restart_allowed and self.last > 0:
            return f"{chapter_ref} Para 1"
        return None

    def take(self, number: int, chapter_ref: str) -> None:
        if number == 1 and self.last > 0:
            self.prefix = f"{chapter_ref} "
        self.last, self.restart_allowed = number, False
