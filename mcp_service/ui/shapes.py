"""What the templates draw, worked out from ``lib`` records: a timeline's bars on a time axis, a compare diff's
inserted and deleted runs, a governance document's chain of supersession. Pure functions, no store access."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta

from lib.policies.models import Revision

WIDTH = 1000
"""The timeline's viewBox width; the SVG scales to its box, so a phone draws the same figure smaller."""
ROW_H, LABEL_H, AXIS_H = 44, 16, 28


@dataclass(frozen=True)
class Bar:
    revision_id: str
    label: str
    status: str
    effective_from: str
    effective_to: str | None
    x: float
    width: float
    y: float
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
    height: int


def timeline(revisions: Sequence[Revision], today: date) -> Timeline:
    """Each revision a bar from its first to its last day in force (open-ended ones run to the axis' end),
    oldest on top, over an axis from the first start to past the last start and today."""
    ordered = sorted(revisions, key=lambda r: r.effective_from)
    if not ordered:
        return Timeline([], [], 0.0, AXIS_H)
    first = min(r.effective_from for r in ordered)
    last = max([today, *(r.effective_from for r in ordered), *(r.effective_to for r in ordered if r.effective_to)])
    span = max((last - first).days, 30)
    start, end = first - timedelta(days=span // 20), last + timedelta(days=span // 10)
    days = (end - start).days

    def x(day: date) -> float:
        return round((day - start).days / days * WIDTH, 2)

    bars = []
    for row, rev in enumerate(ordered):
        stop = rev.effective_to + timedelta(days=1) if rev.effective_to else end
        left = x(rev.effective_from)
        bars.append(Bar(rev.revision_id, rev.version_label, rev.status.value, rev.effective_from.isoformat(),
                        rev.effective_to.isoformat() if rev.effective_to else None, left,
                        max(x(stop) - left, 2.0), row * ROW_H + LABEL_H, rev.effective_to is None))  # fmt: skip
    step = max(1, (end.year - start.year) // 8 + 1)
    ticks = [Tick(x(date(year, 1, 1)), str(year)) for year in range(start.year + 1, end.year + 1, step)]
    return Timeline(bars, ticks, x(today), len(ordered) * ROW_H + AXIS_H)


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
