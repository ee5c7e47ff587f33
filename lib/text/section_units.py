"""A section being assembled by the parser: text grown row by row into paragraphs, with page offsets."""

from __future__ import annotations

from dataclasses import dataclass, field

from lib.models import Section
from lib.text.layout_rows import Row, ends_sentence, starts_list_item


@dataclass
class Unit:
    """A section being assembled: its text grows row by row, remembering where each page starts.
    ``order`` sorts units into reading order (a footnote sits at its host unit's order + 0.5)."""

    ref: str
    chapter: str
    title: str
    page: int
    order: float
    kind: str = ""
    printed_page: str | None = None
    supports: str | None = None
    text: str = ""
    spans: list[tuple[int, int]] = field(default_factory=list)

    def add(self, row: Row, joiner: str | None = None) -> None:
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
            kind=self.kind,
            printed_page=self.printed_page,
            supports=self.supports,
        )


def _joiner(text: str, row: Row) -> str:
    """Rebuild paragraphs: wrapped lines join with a space, list items start a line, gaps a paragraph."""
    if row.gap_before:
        return "\n\n"
    if starts_list_item(row.text):
        return "\n"
    if row.page_start and ends_sentence(text) and row.text[:1].isupper():
        return "\n\n"
    if text.endswith("-") and len(text) > 1 and text[-2].isalpha():
        return ""
    return " "
