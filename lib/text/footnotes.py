"""Footnotes: taken out of the body text before parsing, and placed back as sections of their own.

NPPF footnotes carry policy (footnote 7 says where the presumption in favour of development does not
apply), so they are kept as ``Footnote 7`` sections rather than dropped; the paragraph that cites one
keeps a ``[^7]`` marker in its place (``lib.text.layout_rows``).
"""

from __future__ import annotations

from dataclasses import dataclass

from lib.text.layout_rows import Row, ends_sentence
from lib.text.section_units import Unit

FOOTNOTE_SIZE_GAP = 1.0
"""Footnote text is at least this many points smaller than body text."""


@dataclass
class Footnote:
    number: str
    rows: list[Row]


def separate_footnotes(rows: list[Row], body_size: float | None) -> tuple[list[Row], list[Footnote]]:
    """Body rows and footnotes. A footnote starts with a small number leading a line of small text;
    smaller lines after it on the same page continue it, and so do the first small lines overleaf when it
    stopped mid-sentence. Small text without a leading number (a note under a table) stays body text."""
    body: list[Row] = []
    footnotes: list[Footnote] = []
    current: Footnote | None = None
    for row in rows:
        small = body_size is not None and row.size is not None and row.size <= body_size - FOOTNOTE_SIZE_GAP
        if small and row.lead_marker:
            current = Footnote(number=row.lead_marker, rows=[row])
            footnotes.append(current)
        elif small and current is not None and (row.page == current.rows[-1].page or _continues(current, row)):
            current.rows.append(row)
        else:
            if current is not None and row.page == current.rows[-1].page:
                current = None
            body.append(row)
    return body, footnotes


def footnote_units(footnotes: list[Footnote], units: list[Unit]) -> list[Unit]:
    """One unit per footnote, ordered right after the unit open at the foot of its page and filed under
    that unit's chapter."""
    placed: list[Unit] = []
    for footnote in footnotes:
        page = footnote.rows[0].page
        host = _unit_at(units, page)
        unit = Unit(
            ref=f"Footnote {footnote.number}",
            chapter=host.chapter if host else "",
            title="",
            page=page,
            order=(host.order if host else 0.0) + 0.5,
            kind="footnote",
            printed_page=footnote.rows[0].printed_page,
        )
        for row in footnote.rows:
            unit.add(row, " ")
        placed.append(unit)
    return placed


def _continues(footnote: Footnote, row: Row) -> bool:
    """A footnote cut mid-sentence at the foot of one page resumes at the foot of the next."""
    last = footnote.rows[-1]
    return row.page == last.page + 1 and row.top is not None and row.top > 0.5 and not ends_sentence(last.text)


def _unit_at(units: list[Unit], page: int) -> Unit | None:
    """The unit open at the foot of ``page``: the last one to start on or before it."""
    host = None
    for unit in units:
        if unit.page <= page:
            host = unit
    return host
