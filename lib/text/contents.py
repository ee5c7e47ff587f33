"""Contents pages: told apart from the body so their entries never open sections, and read for the
policies they list (free ground truth for how well the parser read the document).

A contents page is a page most of whose rows are entries: text ending in a page number (after dot leaders
or a space), with the numbers mostly rising, as a contents list runs (a table of figures does not). A
``List of Policies`` is a contents page too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise

from lib.text.layout_rows import Row
from lib.text.policy_codes import POLICY_HEADING_RE, policy_ref

MIN_ENTRIES = 4
ENTRY_SHARE = 0.4
"""A page is a contents page when at least this many of its rows, and this share of them, are entries ..."""
RISING_SHARE = 0.8
"""... and their page numbers rise (or stay) from one entry to the next this often."""

_ENTRY_RE = re.compile(r"^(?P<entry>.*?[^\d\s.,…])\s*(?:[.…·_]{2,}\s*|\s)(?P<page>\d{1,4})$")
_LEADERS_RE = re.compile(r"\s*[.…·_]{2,}.*$")


@dataclass(frozen=True)
class ListedPolicy:
    """A policy a contents page lists: its ref, title and the page number printed beside it (if any)."""

    ref: str
    title: str
    printed_page: int | None
    contents_page: int


def mark_contents(rows: Sequence[Row]) -> set[int]:
    """Flag the rows of contents pages (``Row.contents``); returns those pages' numbers."""
    by_page: dict[int, list[Row]] = {}
    for row in rows:
        by_page.setdefault(row.page, []).append(row)
    pages: set[int] = set()
    for page, page_rows in by_page.items():
        numbers = [int(match["page"]) for row in page_rows if (match := _ENTRY_RE.match(row.text))]
        if len(numbers) < max(MIN_ENTRIES, ENTRY_SHARE * len(page_rows)):
            continue
        rising = sum(later >= earlier for earlier, later in pairwise(numbers))
        if rising >= RISING_SHARE * (len(numbers) - 1):
            pages.add(page)
            for row in page_rows:
                row.contents = True
    return pages


def listed_policies(rows: Sequence[Row]) -> list[ListedPolicy]:
    """The policies contents pages list, in their order, once each."""
    listed: dict[str, ListedPolicy] = {}
    for row in rows:
        if not row.contents:
            continue
        match = POLICY_HEADING_RE.match(row.text)
        if match is None:
            continue
        ref = policy_ref(match["code"])
        entry = _ENTRY_RE.match(row.text)
        title = _LEADERS_RE.sub("", match["name"])
        if entry and title.endswith(entry["page"]):
            title = title[: -len(entry["page"])]
        if ref not in listed:
            listed[ref] = ListedPolicy(ref, title.strip(" –-:"), int(entry["page"]) if entry else None, row.page)
    return list(listed.values())
