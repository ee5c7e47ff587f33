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

Layout (font sizes, bold, position; ``lib.text.layout_rows``) is what tells the chapter heading
``9. Promoting sustainable transport`` from paragraph 9, and a footnote (``lib.text.footnotes``) from a
numbered line. Rows become units in ``lib.text.section_parser``. A document made only of pages without
layout (OCR) shows no chapters and is cited by page.
"""

from __future__ import annotations

from collections import Counter

from lib.models import ExtractedDocument, PageText, Section
from lib.text.footnotes import footnote_units, separate_footnotes
from lib.text.layout_rows import body_size, read_rows
from lib.text.section_parser import SectionParser


def split_sections(doc: ExtractedDocument) -> list[Section]:
    """Sections in document order, each with a unique ``section_ref``; one per page when the document has
    no chapters, policies or numbered paragraphs (application documents, unstructured PDFs)."""
    size = body_size(doc.pages)
    body, footnotes = separate_footnotes(list(read_rows(doc.pages)), size)
    parser = SectionParser(size)
    for row in body:
        parser.feed(row)
    if not parser.is_structured():
        return _page_sections(doc.pages)
    units = sorted([*parser.units, *footnote_units(footnotes, parser.units)], key=lambda unit: unit.order)
    return _unique_refs([unit.to_section() for unit in units if unit.text.strip()])


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
