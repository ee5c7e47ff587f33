"""Page furniture: running headers and footers and printed page numbers, kept out of the text.

A row in the top or bottom margin is furniture when it is a bare page number (``12``, ``Page 12``,
``12 of 80``) or when the same words, digits aside, recur in the margins of many pages (``Fenland Local Plan
| 12``, ``Joint Local Plan – Part 1 - November 2023``). The numbers such rows carry are the page numbers the
document prints; a number is taken as the printed page only where it keeps step with the PDF's page order
(printed = PDF page + one offset through the document, or, on a two-page spread, one number per half).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

MARGIN = 0.12
"""Top and bottom margins (fraction of page height) where running headers, footers and page numbers live."""
RUNNING_MIN_PAGES = 3
RUNNING_MIN_SHARE = 0.2
"""Margin text recurring on at least this many pages, and this share of the pages, is a running header."""

_PAGE_NUMBER_RE = re.compile(r"^(?:page\s+)?(\d{1,4})(?:\s*(?:of|/)\s*\d{1,4})?$", re.IGNORECASE)
_NUMBER_RE = re.compile(r"\d+")
_SPACES_RE = re.compile(r"\s+")


@dataclass(frozen=True)
class MarginRow:
    """What furniture detection needs of a row: its text, page, half (0, or 1 for a spread's right page)
    and vertical position (None without layout)."""

    text: str
    page: int
    half: int
    top: float | None


def in_margin(top: float | None) -> bool:
    return top is not None and (top < MARGIN or top > 1 - MARGIN)


def running_key(text: str) -> str:
    return _SPACES_RE.sub(" ", _NUMBER_RE.sub("#", text)).strip().lower()


def bare_page_number(text: str) -> int | None:
    match = _PAGE_NUMBER_RE.match(text.strip())
    return int(match[1]) if match else None


def running_keys(rows: Sequence[MarginRow], page_count: int) -> set[str]:
    """Keys of margin text recurring on enough pages to be a running header or footer."""
    pages: dict[str, set[int]] = {}
    for row in rows:
        if in_margin(row.top):
            pages.setdefault(running_key(row.text), set()).add(row.page)
    needed = max(RUNNING_MIN_PAGES, RUNNING_MIN_SHARE * page_count)
    return {key for key, seen in pages.items() if len(seen) >= needed and key.strip("# ")}


def printed_pages(candidates: dict[tuple[int, int], list[int]], spreads: set[int]) -> dict[tuple[int, int], int]:
    """The printed page of each (page, half) from the numbers found in its margins: on a spread, a half's one
    number, when the right half's is the left's plus one; on any other page (a page set in two columns among
    them: split in halves like a spread, but with one number) the number that keeps the document's most common
    offset from the PDF page, for every half."""
    found: dict[tuple[int, int], int] = {}
    for page in spreads:
        left, right = candidates.get((page, 0), []), candidates.get((page, 1), [])
        pairs = [(number, number + 1) for number in left if number + 1 in right]
        if len(pairs) == 1:
            found[(page, 0)], found[(page, 1)] = pairs[0]
    single: dict[int, set[int]] = {}
    for (page, _), numbers in candidates.items():
        if (page, 0) not in found:
            single.setdefault(page, set()).update(numbers)
    offsets = Counter(number - page for page, numbers in single.items() for number in numbers)
    if offsets:
        offset, votes = offsets.most_common(1)[0]
        if votes >= 2 or len(single) == 1:
            for page, printed in single.items():
                if page + offset in printed:
                    found[(page, 0)] = found[(page, 1)] = page + offset
    return found
