"""Split an extracted policy document into citable sections (spec 000 appendix: ``section_ref``, ``chapter``).

Refs name what a planner cites:

- ``Chapter 9`` / ``Annex 2``: a chapter's or annex's own text before its first numbered unit
  (heading, objectives box, introduction);
- ``Para 116``: a numbered paragraph in the document-wide sequence (NPPF 2024 runs 1..N through its
  chapters and Annex 1); where numbering restarts at 1 inside a chapter or annex the ref is qualified:
  ``Annex D Para 3``; a plan numbered in decimals is cited by its own numbers (``Para 3.51``,
  ``Para 01.03``, ``Para 4.7.2``), and a paragraph of a chapter holding policies records the policy it
  justifies (``supports``, ``lib.text.justification``);
- ``Policy TR6`` / ``Policy LP4`` / ``Policy CS 1``: a policy heading in any of the notations of
  ``lib.text.policy_codes`` with the whole policy: its clauses, up to the next policy, table, chapter,
  heading or decimal-numbered paragraph, or the end of its box;
- ``Table 1`` / ``Figure 2``: a captioned table or figure;
- ``Glossary: Grey belt``: one definition in a glossary annex (stable across revisions, whichever
  annex letter or number the glossary has);
- ``Footnote 7``: a footnote, kept out of the paragraph it annotates (NPPF footnotes carry policy, e.g.
  footnote 7, so they are kept rather than dropped); the paragraph keeps a ``[^7]`` marker in its place;
- ``Page 3``: front matter before the first chapter (contents pages included: ``lib.text.contents``),
  text after a policy that no number or heading names, and every page of a document without structure.

Nothing is numbered that the document does not number. Running headers, footers and page numbers are
left out (``lib.text.page_furniture``), and the page number the document prints is kept beside the PDF's
(``printed_page``); a spread (two printed pages on one PDF page) is read left page first.

A document is read part by part (``lib.text.document_parts``): a schedule of main modifications bound in after
a report (cited ``MM74``, ``M5``, ``AAP/MM3``), or an appendix numbered its own way, is read with its own grammar
and type sizes, so it never changes how the body is read; its paragraphs are cited within it
(``Appendix 1 Para 3``).

Layout (font sizes, bold, position; ``lib.text.layout_rows``) is what tells the chapter heading
``9. Promoting sustainable transport`` from paragraph 9, and a footnote (``lib.text.footnotes``) from a
numbered line. Rows become units in ``lib.text.section_parser``. A document made only of pages without
layout (OCR) shows no chapters and is cited by page.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from lib.models import ExtractedDocument, PageText, Section
from lib.text.contents import ListedPolicy, listed_policies, mark_contents
from lib.text.document_parts import PartGrammar, split_parts
from lib.text.footnotes import footnote_units, separate_footnotes
from lib.text.justification import with_supports
from lib.text.layout_rows import Row, body_size, read_rows_and_printed
from lib.text.policy_labels import join_policy_labels, split_listed_headings
from lib.text.section_parser import SectionParser
from lib.text.section_units import Unit


@dataclass
class SectionReading:
    """A document's sections and what its contents pages list (``lib.text.section_report`` compares them)."""

    sections: list[Section]
    listed: list[ListedPolicy] = field(default_factory=list)
    printed: dict[int, str] = field(default_factory=dict)
    """The page each PDF page prints (``lib.text.printed_pages``), for pages that print one."""


def split_sections(doc: ExtractedDocument) -> list[Section]:
    """Sections in document order, each with a unique ``section_ref``; one per page when the document has
    no chapters, policies or numbered paragraphs (application documents, unstructured PDFs)."""
    return read_sections(doc).sections


def read_sections(doc: ExtractedDocument) -> SectionReading:
    """``split_sections``, with the policies the document's contents pages list. Each part of the document
    (``lib.text.document_parts``: the body, a schedule of modifications bound in at the back, an appendix
    numbered its own way) is read with its own grammar and type sizes, so bound-in material never changes
    how the body is read; the parts' sections are then joined in document order."""
    rows, printed = read_rows_and_printed(doc.pages)
    mark_contents(rows)
    listed = listed_policies(rows)
    rows = split_listed_headings(rows, listed)
    parts = split_parts(rows, body_size(doc.pages))
    readings = [_read_part(doc.pages, rows[part.start : part.end], part.grammar) for part in parts]
    if not any(parser.is_structured() for parser, _ in readings):
        return SectionReading(_page_sections(doc.pages, printed), listed, printed)
    sections: list[Section] = []
    for _, units in readings:
        sections += _qualified(units, {section.section_ref for section in sections})
    return SectionReading(with_supports(_unique_refs(sections)), listed, printed)


def _read_part(pages: list[PageText], rows: list[Row], grammar: PartGrammar) -> tuple[SectionParser, list[Unit]]:
    """One part's units in reading order, footnotes placed, read with the type sizes of the part's own pages."""
    on_pages = {row.page for row in rows}
    size = body_size(page for page in pages if page.page_number in on_pages)
    body, footnotes = separate_footnotes(rows, size)
    probe = SectionParser(size)
    unchaptered = not any(probe.is_chapter_heading(row) for row in body if not row.contents)
    parser = SectionParser(size, decimal=grammar.decimal, unchaptered=unchaptered, modifications=grammar.modifications)
    for row in join_policy_labels(body):
        parser.feed(row)
    units = sorted([*parser.units, *footnote_units(footnotes, parser.units)], key=lambda unit: unit.order)
    return parser, [unit for unit in units if unit.text.strip()]


def _qualified(units: list[Unit], taken: set[str]) -> list[Section]:
    """A later part's sections. Where the part has a heading of its own (``Appendix 2``), its paragraphs,
    numbered within it, and any ref an earlier part already holds are qualified by it (``Appendix 2 Para 3``),
    as a numbering restarted after an annex heading is."""
    label = next((unit.ref for unit in units if unit.kind == "appendix"), "") if taken else ""
    sections: list[Section] = []
    for unit in units:
        section = unit.to_section()
        ref = section.section_ref
        if label and (unit.kind == "paragraph" or ref in taken) and not ref.startswith(label):
            section = section.model_copy(update={"section_ref": f"{label} {ref}"})
        sections.append(section)
    return sections


def _page_sections(pages: list[PageText], printed: dict[int, str]) -> list[Section]:
    """No recognisable structure: one section per page with the page's text as extracted. Reflowing is
    left out on purpose: it suits prose, but scrambles the cell-per-line text of tables and forms."""
    return [
        Section(
            section_ref=f"Page {page.page_number}",
            text=page.text.strip(),
            page_number=page.page_number,
            page_spans=[(0, page.page_number)],
            printed_page=printed.get(page.page_number),
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
