"""Records every store shares: extracted pages and their layout, citable sections, chunks."""

from __future__ import annotations

from typing import Literal, get_args

from pydantic import BaseModel, Field, model_validator

SectionKind = Literal[
    "policy",
    "paragraph",
    "chapter",
    "appendix",
    "table",
    "figure",
    "footnote",
    "glossary",
    "modification",
    "page",
    "front-matter",
]
"""What a section is: ``kind`` of ``Section`` and of its chunks (a type, for the tools' and routes' schemas)."""
SECTION_KINDS: tuple[str, ...] = get_args(SectionKind)
FALLBACK_KINDS = frozenset({"chapter", "appendix", "page", "front-matter"})
"""Kinds that cite text by where it sits (a chapter's or page's text) rather than by a number the plan prints."""
_KIND_BY_PREFIX = (
    ("Para ", "paragraph"),
    ("Policy ", "policy"),
    ("Chapter ", "chapter"),
    ("Annex ", "appendix"),
    ("Appendix ", "appendix"),
    ("Schedule ", "appendix"),
    ("Table ", "table"),
    ("Figure ", "figure"),
    ("Footnote ", "footnote"),
    ("Glossary: ", "glossary"),
    ("Page ", "page"),
)


def kind_of_ref(section_ref: str) -> str:
    """The kind a ref names, for sections built without one (``Annex D Para 3`` is a paragraph)."""
    if " Para " in section_ref:
        return "paragraph"
    for prefix, kind in _KIND_BY_PREFIX:
        if section_ref.startswith(prefix):
            return kind
    return "paragraph"


class TextSpan(BaseModel):
    """A run of text in one font: enough to tell headings, footnotes and footnote markers from body text."""

    text: str
    size: float
    bold: bool = False
    superscript: bool = False


class TextLine(BaseModel):
    """A text-layer line with its position as fractions of the page (0 = left/top edge, 1 = right/bottom)."""

    spans: list[TextSpan]
    x0: float
    x1: float = 1.0
    top: float
    bottom: float

    @property
    def text(self) -> str:
        return "".join(span.text for span in self.spans)


class PageText(BaseModel):
    """One page as extracted. ``page_number`` is 1-based, as a reader of the PDF counts."""

    page_number: int
    text: str
    method: str = Field(description="text_layer | ocr | none")
    ocr_confidence: float | None = None
    image_ratio: float = 0.0
    lines: list[TextLine] = Field(
        default_factory=list,
        description="Text-layer layout (sizes, emphasis, position) for section splitting; empty for OCR pages",
    )
    boxes: list[tuple[float, float, float, float]] = Field(
        default_factory=list,
        description="Drawn boxes wide enough to frame text (x0, top, x1, bottom as fractions): boxed policies",
    )
    label: str = Field(default="", description="The PDF's own page label, '' where it sets none (PyMuPDF get_label)")


class ExtractedDocument(BaseModel):
    pages: list[PageText]
    method: str = Field(description="text_layer | ocr | mixed")

    @property
    def page_count(self) -> int:
        return len(self.pages)

    @property
    def total_chars(self) -> int:
        return sum(len(p.text) for p in self.pages)


class Section(BaseModel):
    """A unit of a policy document that a citation can name: ``Para 116``, ``Policy TR6``, ``Annex 2``."""

    section_ref: str
    chapter: str = ""
    title: str = ""
    text: str
    page_number: int = Field(description="Page on which the section starts")
    page_spans: list[tuple[int, int]] = Field(
        default_factory=list, description="(char offset in text, page number) where each page begins"
    )
    kind: str = Field(default="", description="One of SECTION_KINDS; taken from the ref when not given")
    printed_page: str | None = Field(
        default=None,
        description="The page as the document prints it where the section starts ('57', 'iv', 'A-3', '62-63' for a "
        "two-page spread); None where the page prints no number",
    )
    supports: str | None = Field(default=None, description="For a paragraph of reasoned justification: its policy")

    @model_validator(mode="after")
    def _fill_kind(self) -> Section:
        if not self.kind:
            self.kind = kind_of_ref(self.section_ref)
        return self

    @property
    def last_page(self) -> int:
        """The last PDF page the section's text reaches."""
        return max([self.page_number, *(page for _, page in self.page_spans)])


class Chunk(BaseModel):
    text: str
    section_ref: str
    chapter: str
    page_number: int
    page_numbers: list[int]
    chunk_index: int
    kind: str = ""
    title: str = ""
    printed_page: str | None = None
    """The page as printed where the chunk starts (``Section.printed_page`` on the section's first page)."""
    printed_pages: list[str | None] = Field(default_factory=list, description="Printed page of each of page_numbers")
    supports: str | None = None
    last_page: int = 0
