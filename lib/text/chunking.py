"""Recursive character chunking with page tracking (spec 003 FR-006).

800 characters with 200 of overlap, split on paragraph, line, sentence, clause, phrase, word, then
character boundaries. The spec asks that separators stay "with the preceding chunk"; in
langchain-text-splitters that is ``keep_separator="end"`` (``True`` would mean ``"start"``).

Policy text is chunked section by section, so a chunk never straddles two numbered paragraphs or
policies; application documents are chunked over their concatenated pages.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Mapping, Sequence

from langchain_text_splitters import RecursiveCharacterTextSplitter

from lib.models import Chunk, PageText, Section

CHUNK_SIZE = 800
CHUNK_OVERLAP = 200
SEPARATORS = ["\n\n", "\n", ". ", "! ", "? ", "; ", ", ", " ", ""]
PAGE_JOINER = "\n\n"


def make_splitter(chunk_size: int = CHUNK_SIZE, chunk_overlap: int = CHUNK_OVERLAP) -> RecursiveCharacterTextSplitter:
    return RecursiveCharacterTextSplitter(
        chunk_size=chunk_size,
        chunk_overlap=chunk_overlap,
        separators=SEPARATORS,
        keep_separator="end",
        add_start_index=True,
        strip_whitespace=True,
    )


def _pages_of(start: int, end: int, spans: list[tuple[int, int]]) -> list[int]:
    """Pages whose text intersects ``[start, end)``; ``spans`` are (offset, page) sorted by offset."""
    offsets = [offset for offset, _ in spans]
    first = max(bisect_right(offsets, start) - 1, 0)
    last = max(bisect_right(offsets, max(end - 1, start)) - 1, 0)
    return sorted({page for _, page in spans[first : last + 1]})


def split_with_pages(
    text: str, spans: list[tuple[int, int]], splitter: RecursiveCharacterTextSplitter | None = None
) -> list[tuple[str, list[int]]]:
    """Split ``text`` and say which pages each piece spans."""
    splitter = splitter or make_splitter()
    pieces = []
    for doc in splitter.create_documents([text]):
        start = doc.metadata["start_index"]
        pieces.append((doc.page_content, _pages_of(start, start + len(doc.page_content), spans)))
    return pieces


def chunk_sections(
    sections: Iterable[Section],
    splitter: RecursiveCharacterTextSplitter | None = None,
    *,
    printed: Mapping[int, str] | None = None,
) -> list[Chunk]:
    """Chunks of policy text, indexed sequentially across the revision, each within one section. A chunk's
    printed pages are its section's where the section starts (a spread's half), else the page's (``printed``:
    the page each PDF page prints, ``SectionReading.printed``)."""
    splitter = splitter or make_splitter()
    printed = printed or {}
    chunks: list[Chunk] = []
    for section in sections:
        if not section.text.strip():
            continue
        spans = section.page_spans or [(0, section.page_number)]
        for text, pages in split_with_pages(section.text, spans, splitter):
            pages = pages or [section.page_number]
            on_pages = [section.printed_page if p == section.page_number else printed.get(p) for p in pages]
            chunks.append(
                Chunk(
                    text=text,
                    section_ref=section.section_ref,
                    chapter=section.chapter,
                    page_number=pages[0],
                    page_numbers=pages,
                    chunk_index=len(chunks),
                    kind=section.kind,
                    title=section.title,
                    printed_page=on_pages[0],
                    printed_pages=on_pages,
                    supports=section.supports,
                    last_page=section.last_page,
                )
            )
    return chunks


def chunk_pages(
    pages: Iterable[PageText],
    splitter: RecursiveCharacterTextSplitter | None = None,
    *,
    printed: Mapping[int, str] | None = None,
) -> list[Chunk]:
    """Chunks over the concatenated pages of an unstructured document (application documents), each with
    the pages it spans as the document prints them (``printed``: by PDF page, for pages that print one)."""
    printed = printed or {}
    parts: list[str] = []
    spans: list[tuple[int, int]] = []
    offset = 0
    for page in pages:
        if not page.text.strip():
            continue
        if parts:
            parts.append(PAGE_JOINER)
            offset += len(PAGE_JOINER)
        spans.append((offset, page.page_number))
        parts.append(page.text)
        offset += len(page.text)
    if not spans:
        return []
    chunks: list[Chunk] = []
    for text, page_numbers in split_with_pages("".join(parts), spans, splitter):
        chunks.append(
            Chunk(
                text=text,
                section_ref="",
                chapter="",
                page_number=page_numbers[0],
                page_numbers=page_numbers,
                chunk_index=len(chunks),
                printed_page=printed.get(page_numbers[0]),
                printed_pages=[printed.get(p) for p in page_numbers],
            )
        )
    return chunks


_MIN_OVERLAP = 20
"""The shortest repeated text taken for the splitter's overlap when chunks are rejoined."""


def merge_chunk_texts(texts: Sequence[str]) -> str:
    """Rejoin consecutive chunks of one section or document, dropping the overlap the splitter repeated."""
    return merge_chunk_spans(texts)[0]


def merge_chunk_spans(texts: Sequence[str]) -> tuple[str, list[int]]:
    """``merge_chunk_texts``, and where each chunk's own text starts in the rejoined one (its first character
    after the overlap it shares with the chunk before), so an offset in the whole can be traced to a chunk."""
    merged = ""
    starts: list[int] = []
    for text in texts:
        if not merged:
            merged = text
            starts.append(0)
            continue
        overlap = next(
            (k for k in range(min(len(merged), len(text)), _MIN_OVERLAP - 1, -1) if merged.endswith(text[:k])), 0
        )
        if overlap:
            starts.append(len(merged))
            merged = merged + text[overlap:]
        else:
            starts.append(len(merged) + 2)
            merged = f"{merged}\n\n{text}"
    return merged, starts
