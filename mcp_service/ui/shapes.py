"""What the templates draw, worked out from ``lib`` records: a timeline's bars on a time axis, a compare diff's
inserted and deleted runs, a governance document's chain of supersession, the citation a button copies.
Pure functions, no store access."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from lib.citation import format_citation
from lib.policies.models import Revision
from mcp_service.ui import words

WIDTH = 100.0
"""The timeline's coordinates are percentages of its width: the SVG has no viewBox, so its text keeps its
size and a phone draws the same bars narrower, the labels beside them in HTML wrapping as text does."""


@dataclass(frozen=True)
class Bar:
    revision_id: str
    label: str
    span: str
    standing: str
    state: str  # "in-force", "ended", "future", "processing" or "failed" on the date asked: a CSS class only
    x: float
    width: float
    open_ended: bool


@dataclass(frozen=True)
class Tick:
    x: float
    label: str


@dataclass(frozen=True)
class Timeline:
    bars: list[Bar]
    ticks: list[Tick]
    today_x: float
    day_x: float


def _state(revision: Revision, day: date) -> str:
    if not revision.resolvable:
        return revision.status.value
    if day < revision.effective_from:
        return "future"
    return "in-force" if revision.covers(day) else "ended"


def timeline(revisions: Sequence[Revision], today: date, day: date | None = None) -> Timeline:
    """Each revision a bar from its first to its last day in force (open-ended ones run to the axis' end),
    oldest first, over an axis from the first start to past the last start, today and the date asked
    (``day``, default today), each labelled in words (``words.standing``), never by id or status code."""
    day = day or today
    ordered = sorted(revisions, key=lambda r: r.effective_from)
    if not ordered:
        return Timeline([], [], 0.0, 0.0)
    first = min([day, *(r.effective_from for r in ordered)])
    last = max([today, day, *(r.effective_from for r in ordered), *(r.effective_to for r in ordered if r.effective_to)])
    span_days = max((last - first).days, 30)
    start, end = first - timedelta(days=span_days // 20), last + timedelta(days=span_days // 10)
    days = (end - start).days

    def x(when: date) -> float:
        return round((when - start).days / days * WIDTH, 3)

    bars = []
    for rev in ordered:
        stop = rev.effective_to + timedelta(days=1) if rev.effective_to else end
        left = x(rev.effective_from)
        bars.append(
            Bar(
                rev.revision_id,
                rev.version_label,
                words.span(rev),
                words.standing(rev, day, ordered, today),
                _state(rev, day),
                left,
                max(x(stop) - left, 0.5),
                rev.effective_to is None,
            )
        )
    step = max(1, (end.year - start.year) // 6 + 1)
    ticks = [Tick(x(date(year, 1, 1)), str(year)) for year in range(start.year + 1, end.year + 1, step)]
    return Timeline(bars, [t for t in ticks if 4 <= t.x <= 96], x(today), x(day))


def citation(item: object, title: str = "") -> str:
    """The citation of a search hit, section or quote match as an officer writes it (``National Planning Policy
    Framework (December 2024), Para 116, p. 33``): ``lib``'s one formatter, given the policy's ``title`` and the
    item's version label, reference (with the policy a justification paragraph supports) and pages."""
    label = str(getattr(item, "version_label", "") or "")
    name = title or str(getattr(item, "source", ""))
    ref = str(getattr(item, "section_ref", "") or "")
    supports = getattr(item, "supports", None)
    pages = getattr(item, "page_numbers", None) or []
    page = getattr(item, "page_number", None) or (pages[0] if pages else None)
    printed = getattr(item, "printed_page", None)
    return format_citation(
        document=f"{name} ({label})" if label else name,
        section_ref=f"{ref}, supporting {supports}" if supports else ref,
        page_number=page,
        printed_page=str(printed) if printed is not None else None,
    )


_CHANGE = re.compile(r"\[-(.*?)-\]|\{\+(.*?)\+\}", re.DOTALL)


@dataclass(frozen=True)
class Run:
    kind: str  # "same", "removed" or "added"
    text: str


def diff_runs(rendered: str) -> list[Run]:
    """``compare_section``'s rendered diff (``[-removed-]``, ``{+added+}`` inline) as runs to mark up."""
    runs, at = [], 0
    for found in _CHANGE.finditer(rendered):
        if found.start() > at:
            runs.append(Run("same", rendered[at : found.start()]))
        removed, added = found.group(1), found.group(2)
        runs.append(Run("removed", removed) if removed is not None else Run("added", added or ""))
        at = found.end()
    if at < len(rendered):
        runs.append(Run("same", rendered[at:]))
    return runs


def chain(doc_id: str, replaced_by: Mapping[str, set[str]]) -> list[str]:
    """``doc_id`` among the documents it replaced (before it, oldest first) and those replacing it (after),
    following both directions of the chain transitively; branches are listed in id order."""
    replaces: dict[str, set[str]] = {}
    for old, news in replaced_by.items():
        for new in news:
            replaces.setdefault(new, set()).add(old)

    def steps(links: Mapping[str, set[str]]) -> list[list[str]]:
        """The documents one link away, then two, ... (each step in id order)."""
        seen, frontier, out = {doc_id}, [doc_id], []
        while frontier:
            frontier = sorted({n for f in frontier for n in links.get(f, ()) if n not in seen})
            seen.update(frontier)
            if frontier:
                out.append(frontier)
        return out

    before = [d for step in reversed(steps(replaces)) for d in step]
    return [*before, doc_id, *(d for step in steps(replaced_by) for d in step)]
