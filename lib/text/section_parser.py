"""The section parser: a state machine over body rows that opens a section at each citable unit.

State is where the reader is in the document (``Block``) and whether the heading just read may wrap onto
the next row (``Wrap``). Each row is first offered to the open heading as a continuation; otherwise it is
classified as one ``Kind`` among those its block recognises (``RECOGNISED``, ``lib.text.section_grammar``)
and handed to that kind's handler, which opens a unit or adds to the open one and makes any transition:

- ``FRONT_MATTER`` (before the first chapter) sees chapter headings, bold headings that say ``Policy``,
  and the paragraphs of a decimal-numbered plan or of a document without numbered chapters (an
  inspector's report); its other text is cited by page;
- a chapter or annex heading, from any block, enters ``CHAPTER``; a policy heading enters ``POLICY``,
  where whole-numbered lines are the policy's own clauses; a caption, a decimal-numbered paragraph or a
  heading ends the policy (plain text after a heading is cited by page: no number is invented for it);
- contents-page rows (``lib.text.contents``) never open a unit: they are front matter, cited by page.

Everything up to the next unit belongs to the open one, so a section never straddles two numbered
paragraphs or policies. The same rules serve NPPF 2024 (paragraphs numbered 1..N through the document),
the 2025 draft (policies, annexes with their own numbering, tables) and local plans (policies in the
notations of ``lib.text.policy_codes``, paragraphs numbered ``3.51``); a page without layout (OCR) is read
by the same rules minus the font ones.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from lib.text.layout_rows import HEADING_SCALE, Row, ends_sentence, normalise, starts_list_item
from lib.text.policy_codes import POLICY_HEADING_RE, code_key, policy_ref
from lib.text.section_grammar import (
    ANNEX_RE,
    CAPTION_RE,
    CHAPTER_RE,
    DECIMAL_RE,
    GLOSSARY_HEADING_RE,
    GLOSSARY_TERM_RE,
    MAX_SKIPPED_PARAGRAPHS,
    MIN_STRUCTURED_UNITS,
    MODIFICATION_RE,
    PARA_RE,
    SUBHEADING_SCALE,
    TITLE_MAX_CHARS,
    TITLE_MAX_WORDS,
    Block,
    Chapter,
    Kind,
    Line,
    Numbering,
    Wrap,
    recognised,
)
from lib.text.section_units import Unit


class SectionParser:
    """Feed body rows in reading order, then read ``units`` (footnotes are placed by the caller)."""

    def __init__(
        self, body_size: float | None, *, decimal: bool = False, unchaptered: bool = False, modifications: bool = False
    ) -> None:
        """``decimal``: the document numbers its paragraphs in decimals; ``unchaptered``: it has no numbered
        chapter headings; ``modifications``: it is a schedule of main modifications (``lib.text.sections``
        decides all three from the whole document)."""
        self.body_size = body_size
        self.recognised = recognised(decimal, unchaptered, modifications)
        self.modification_last = 0
        self.decimal_last: tuple[int, ...] = ()
        self.detached = False
        self.box: bool | None = None
        """In a policy whose heading is boxed: None (not boxed), False (heading only so far), True (text too)."""
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
        self.policies_read: set[str] = set()
        """Codes of the policies read so far: a policy is defined once, a later heading only names it."""
        self._recognisers: dict[Kind, Callable[[Row], Line | None]] = {
            Kind.CHAPTER_HEADING: self._chapter_heading,
            Kind.SUBHEADING: self._subheading,
            Kind.POLICY: self._policy,
            Kind.CAPTION: self._caption,
            Kind.GLOSSARY_TERM: self._glossary_term,
            Kind.MODIFICATION: self._modification,
            Kind.PARAGRAPH: self._paragraph,
            Kind.DECIMAL_PARAGRAPH: self._decimal_paragraph,
        }
        self._handlers: dict[Kind, Callable[[Row, Line], None]] = {
            Kind.CHAPTER_HEADING: self._on_chapter_heading,
            Kind.SUBHEADING: self._on_subheading,
            Kind.POLICY: self._on_policy,
            Kind.CAPTION: self._on_caption,
            Kind.GLOSSARY_TERM: self._on_glossary_term,
            Kind.MODIFICATION: self._on_modification,
            Kind.PARAGRAPH: self._on_paragraph,
            Kind.DECIMAL_PARAGRAPH: self._on_decimal_paragraph,
            Kind.TEXT: self._on_text,
        }

    def feed(self, row: Row) -> None:
        self._leave_box(row)
        if row.contents:
            self._on_contents(row)
        elif not self._continue_title(row):
            self.wrap = Wrap.NONE
            line = self.classify(row)
            self._handlers[line.kind](row, line)
        self.previous = row

    def classify(self, row: Row) -> Line:
        for kind in self.recognised[self.block]:
            line = self._recognisers[kind](row)
            if line is not None:
                return line
        return Line(Kind.TEXT)

    def is_chapter_heading(self, row: Row) -> bool:
        return self._chapter_heading(row) is not None

    def is_structured(self) -> bool:
        """Enough structure to cite by unit rather than by page: two chapters, or three paragraphs or policies."""
        return self.chapters >= 2 or self.structure_units >= MIN_STRUCTURED_UNITS

    def _leave_box(self, row: Row) -> None:
        """A boxed policy ends with its box: the first row outside any box after rows inside it. A box
        around the heading alone (a banner) does not bound the policy."""
        if self.block is not Block.POLICY or self.box is None or row.contents:
            return
        if row.boxed:
            self.box = True
        elif self.box:
            self.block, self.detached, self.box = Block.CHAPTER, True, None
        else:
            self.box = None

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
        if not row.bold_lead or row.bold_lead != row.text or self._names_another_policy(row, current.ref):
            return False
        current.title = f"{current.title} {row.text}"
        current.add(row, " ")
        return True

    @staticmethod
    def _names_another_policy(row: Row, ref: str) -> bool:
        """A bold row led by a policy code other than the open unit's heads that policy; it does not wrap a
        caption's or policy's title (``Table 3 ... (continued)`` set right above ``CSP2 Development ...``)."""
        match = POLICY_HEADING_RE.match(row.text)
        return match is not None and code_key(policy_ref(match["code"])) != code_key(ref)

    # recognisers: what a row is, given the state; no side effects

    def _chapter_heading(self, row: Row) -> Line | None:
        """Only large type opens a chapter: the contents page lists the same titles in body-size type."""
        if not self._is_heading(row):
            return None
        annex = ANNEX_RE.match(row.text)
        if annex:
            return Line(Kind.CHAPTER_HEADING, f"{annex['kind'].capitalize()} {annex['num']}")
        chapter = CHAPTER_RE.match(row.text)
        return Line(Kind.CHAPTER_HEADING, f"Chapter {int(chapter['num'])}") if chapter else None

    def _subheading(self, row: Row) -> Line | None:
        return Line(Kind.SUBHEADING) if self._is_heading(row) else None

    def _policy(self, row: Row) -> Line | None:
        """A policy heading: a code (``lib.text.policy_codes``) leading a row at a block's start, set in bold
        or heading type; without layout, ``Policy`` or a colon must say so. The name is the title when it
        reads as one (the policy's own text may follow the code on the same line: ``CS1 The Council will``)."""
        match = POLICY_HEADING_RE.match(row.text)
        if match is None or self.chapter.glossary:
            return None  # (a glossary defines terms: ``SP1: Strategic Policy 1`` there is an entry, not the policy)
        bold_code = row.bold_lead.startswith(row.text[: match.end("code")])
        if not (self._at_block_start(row) or self._tight_heading(row, bool(match["word"]), bold_code)):
            return None
        if self.block is Block.FRONT_MATTER and not (match["word"] or self._is_heading(row)):
            return None  # before the first chapter, only a heading that says "Policy" (or is set large) is one
        if row.size is None:
            if not match["word"] and not row.text[match.end("code") :].lstrip().startswith(":"):
                return None
        elif not bold_code and not (match["word"] and self._larger(row)):
            return None  # a code in plain type names a topic heading or a cross-reference, unless "Policy" leads it
        name = match["name"].strip()
        if row.size is not None and not self._is_heading(row):
            bold_name = row.bold_lead[match.start("name") :].strip(" :–—-")
            name = bold_name or (name if len(name.split()) <= TITLE_MAX_WORDS else "")
        title = name if len(name) <= TITLE_MAX_CHARS and not name.endswith(".") else ""
        return Line(Kind.POLICY, policy_ref(match["code"]), title)

    def _tight_heading(self, row: Row, word: bool, bold_code: bool) -> bool:
        """A policy heading set close under the line before: a bold ``Policy X`` after a finished sentence, or a
        wholly bold heading (``CSP2 Development Outside the Growth Network``) under a caption or heading that
        is wholly bold too (the previous line is a title, not text the code could continue)."""
        previous = self.previous
        if previous is None or not bold_code:
            return False
        if word and ends_sentence(previous.text):
            return True
        whole = row.bold_lead == row.text and not ends_sentence(row.text)
        return whole and previous.bold_lead == previous.text and CAPTION_RE.match(previous.text) is not None

    def _caption(self, row: Row) -> Line | None:
        match = CAPTION_RE.match(row.text)
        if match is None or not self._at_block_start(row):
            return None
        emphasised = row.bold_lead.startswith(match["label"].split()[0]) or self._is_heading(row)
        if row.size is not None and not emphasised:
            return None
        return Line(Kind.CAPTION, normalise(match["label"]).replace("–", "-"), (match["title"] or "").strip())

    def _glossary_term(self, row: Row) -> Line | None:
        if not self.chapter.glossary or not row.bold_lead or starts_list_item(row.text):
            return None
        match = GLOSSARY_TERM_RE.match(row.text)
        if match is None or row.bold_lead.rstrip(" :") != match["term"].strip():
            return None
        term = match["term"].strip()
        return Line(Kind.GLOSSARY_TERM, f"Glossary: {term}", term)

    def _modification(self, row: Row) -> Line | None:
        """A main modification's row: its code next in the schedule's numbering (one may be skipped), wherever
        it stands (the schedule's rows follow each other without a gap); the rest of the row (the plan's page
        or policy it changes) is the title."""
        match = MODIFICATION_RE.match(row.text)
        if match is None:
            return None
        number = int(match["num"])
        if not self.modification_last < number <= self.modification_last + 1 + MAX_SKIPPED_PARAGRAPHS:
            return None
        ref = f"{match['code']}{match['num']}"  # as printed: ``MM07`` stays ``MM07``
        return Line(Kind.MODIFICATION, ref, match["rest"].strip(" ,;")[:TITLE_MAX_CHARS], number)

    def _paragraph(self, row: Row) -> Line | None:
        match = PARA_RE.match(row.text)
        if match is None or not self._at_block_start(row):
            return None
        number = int(match["num"])
        ref = self.numbering.next_ref(number, self.chapter.ref)
        return None if ref is None else Line(Kind.PARAGRAPH, ref, self.subheading, number)

    def _decimal_paragraph(self, row: Row) -> Line | None:
        """A decimal-numbered paragraph, in order: after the last one, or in the chapter its number names (a
        table's ``2.5`` in chapter 3 after paragraph 3.9 is not a paragraph). Larger type numbers a heading."""
        match = DECIMAL_RE.match(row.text)
        if match is None or not (self._at_block_start(row) or self._after_larger_type()):
            return None
        if row.size is not None and self.body_size is not None and row.size >= SUBHEADING_SCALE * self.body_size:
            return Line(Kind.SUBHEADING)
        number = tuple(int(part) for part in match["num"].split("."))
        chapter = CHAPTER_RE.match(self.chapter.heading)
        in_chapter = chapter is not None and int(chapter["num"]) == number[0]
        if number <= self.decimal_last and not in_chapter:
            return None
        return Line(Kind.DECIMAL_PARAGRAPH, f"Para {match['num']}", self.subheading)

    # handlers: one per kind, each making its transition

    def _on_contents(self, row: Row) -> None:
        """A contents page is front matter whatever block the reader is in: cited by page, never a unit."""
        self._flush_pending()
        self.wrap = Wrap.NONE
        if self.current is None or self.current.ref != f"Page {row.page}":
            self._open(f"Page {row.page}", "", row, keep_pending=True, kind="front-matter")
            self.detached = True
        else:
            self.current.add(row)

    def _on_decimal_paragraph(self, row: Row, line: Line) -> None:
        self.decimal_last = tuple(int(part) for part in line.ref.removeprefix("Para ").split("."))
        self.block = Block.CHAPTER  # a numbered paragraph ends a policy and front matter alike
        self.structure_units += 1
        self._on_unit(row, line, "paragraph")

    def _on_chapter_heading(self, row: Row, line: Line) -> None:
        self.chapter = Chapter(row.text, line.ref, row.size, "glossary" in row.text.lower())
        self.block, self.wrap = Block.CHAPTER, Wrap.CHAPTER_TITLE
        self.subheading = ""
        self.numbering.restart_allowed = True
        self.chapters += 1
        kind = "chapter" if line.ref.startswith("Chapter") else "appendix"
        self._open(line.ref, self.chapter.title, row, keep_pending=True, kind=kind)

    def _on_subheading(self, row: Row, line: Line) -> None:
        """Headings inside a chapter name what follows: they become the title of the next units, and stay
        in the text only when plain text (not a new unit) follows them. A heading ends a policy: plain text
        after it is no longer the policy's (a plan's reasoned justification without paragraph numbers)."""
        if self.block is Block.POLICY and (self._is_heading(row) or DECIMAL_RE.match(row.text)):
            self.block, self.detached = Block.CHAPTER, True
        if self._is_heading(row) and GLOSSARY_HEADING_RE.match(row.text):
            self.chapter = replace(self.chapter, glossary=True)  # a glossary without an annex number of its own
        previous = self.pending[-1] if self.pending else None
        if previous is not None and previous.size == row.size and not row.gap_before:
            self.subheading = f"{self.subheading} {row.text}"
        else:
            self.subheading = row.text
        self.pending.append(row)

    def _on_policy(self, row: Row, line: Line) -> None:
        key = code_key(line.ref)
        if key in self.policies_read:
            self._on_policy_named_again(row, key)
            return
        self.policies_read.add(key)
        self.block = Block.POLICY
        self.box = False if row.boxed else None
        self.structure_units += 1
        self._on_titled_unit(row, line, "policy")

    def _on_policy_named_again(self, row: Row, key: str) -> None:
        """The heading of a policy read before: its heading repeated over a page break continues it; anywhere
        else (a monitoring table, a schedule of policies) it names the policy without being it, and is cited by
        page, so ``Policy LP4`` always leads to the policy itself."""
        current = self.current
        if self.block is Block.POLICY and current is not None and code_key(current.ref) == key:
            current.add(row, "\n\n")
            return
        self.block, self.box = Block.CHAPTER, None
        if current is not None and current.ref == f"Page {row.page}" and current.kind == "page":
            self._flush_pending()
            current.add(row, "\n\n")
            return
        headings = self.pending  # (``Monitoring``: they title the mention and lead its text)
        title = self.subheading if headings else row.text
        self._open(f"Page {row.page}", title, headings[0] if headings else row, keep_pending=False, kind="page")
        for heading in [*headings[1:], row] if headings else []:
            self.current.add(heading, "\n\n")  # type: ignore[union-attr]

    def _on_caption(self, row: Row, line: Line) -> None:
        self.block = Block.CHAPTER
        self._on_titled_unit(row, line, "table" if line.ref.startswith("Table") else "figure")

    def _on_titled_unit(self, row: Row, line: Line, kind: str) -> None:
        self._on_unit(row, line, kind)
        if row.size is not None:
            self.wrap = Wrap.UNIT_TITLE

    def _on_paragraph(self, row: Row, line: Line) -> None:
        self.block = Block.CHAPTER if self.block is Block.FRONT_MATTER else self.block
        self.numbering.take(line.number, self.chapter.ref)
        self.structure_units += 1
        self._on_unit(row, line, "paragraph")

    def _on_modification(self, row: Row, line: Line) -> None:
        self.modification_last = line.number
        self.block = Block.CHAPTER
        self.structure_units += 1
        self._open(line.ref, line.title, row, keep_pending=True, kind="modification")

    def _on_glossary_term(self, row: Row, line: Line) -> None:
        self._on_unit(row, line, "glossary")

    def _on_unit(self, row: Row, line: Line, kind: str) -> None:
        self._open(line.ref, line.title, row, keep_pending=False, kind=kind)

    def _on_text(self, row: Row, line: Line) -> None:
        if self.detached and self.block is not Block.FRONT_MATTER:
            self._open(f"Page {row.page}", self.subheading, row, keep_pending=False, kind="page")
            return
        self._flush_pending()
        if self.block is Block.FRONT_MATTER and self._is_heading(row):
            self.subheading = row.text  # titles the first paragraph of a document without numbered chapters
        if self.current is None or (self.block is Block.FRONT_MATTER and self.current.page != row.page):
            self._open(f"Page {row.page}", "", row, keep_pending=True, kind="front-matter")
            return
        self.current.add(row)

    # helpers

    def _open(self, ref: str, title: str, row: Row, *, keep_pending: bool, kind: str) -> None:
        """Open a unit at ``row``. Pending subheadings end the previous unit's text (``keep_pending``) or
        are dropped, having become the new unit's title."""
        if keep_pending:
            self._flush_pending()
        self.pending = []
        self.detached = False
        self.current = Unit(
            ref=ref,
            chapter=self.chapter.heading,
            title=title,
            page=row.page,
            order=len(self.units),
            kind=kind,
            printed_page=row.printed_page,
        )
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

    def _after_larger_type(self) -> bool:
        """The row before is set larger than body text: a numbered heading (``6.3 Community Safety``)."""
        return self.previous is not None and self._larger(self.previous)

    def _larger(self, row: Row) -> bool:
        return row.size is not None and self.body_size is not None and row.size >= SUBHEADING_SCALE * self.body_size

    def _at_block_start(self, row: Row) -> bool:
        previous = self.previous
        return row.gap_before or row.page_start or row.jumped or previous is None or self._is_heading(previous)
