"""Page furniture: running headers and footers and printed page numbers, kept out of the text.

A row in the top or bottom margin is furniture when it is a bare page number (``12``, ``Page 12``,
``12 of 80``, ``iv``, ``A-3``: ``lib.text.printed_pages.bare_tokens``) or when the same words, digits aside,
recur in the margins of many pages (``Fenland Local Plan | 12``, ``Joint Local Plan – Part 1 - November
2023``). Which of the numbers such rows carry are the page numbers the document prints is
``lib.text.printed_pages``' to decide.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

MARGIN = 0.12
"""Top and bottom margins (fraction of page height) where running headers, footers and page numbers live."""
RUNNING_MIN_PAGES = 3
RUNNING_MIN_SHARE = 0.2
"""Margin text recurring on at least this many pages, and this share of the pages, is a running header."""

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


def running_keys(rows: Sequence[MarginRow], page_count: int) -> set[str]:
    """Keys of margin text recurring on enough pages to be a running header or footer."""
    pages: dict[str, set[int]] = {}
    for row in rows:
        if in_margin(row.top):
            pages.setdefault(running_key(row.text), set()).add(row.page)
    needed = max(RUNNING_MIN_PAGES, RUNNING_MIN_SHARE * page_count)
    return {key for key, seen in pages.items() if len(seen) >= needed and key.strip("# ")}
