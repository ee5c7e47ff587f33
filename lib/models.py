"""Records every store shares: extracted pages and their layout, citable sections, chunks."""

from __future__ import annotations

from pydantic import BaseModel, Field


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


class Chunk(BaseModel):
    text: str
    section_ref: str
    chapter: str
    page_number: int
    page_numbers: list[int]
    chunk_index: int
