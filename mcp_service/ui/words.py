"""The page's plain words about time: a date as people write it, a revision's standing on the date asked
("in force on 1 June 2025; replaced by ... on 1 January 2099"), and why nothing answers a date no revision
covers. An officer reads these instead of revision ids and status codes (issue 44). Pure functions."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, timedelta

from lib.policies.models import Revision, RevisionStatus


def spoken(day: date) -> str:
    """``2025-06-01`` as ``1 June 2025``."""
    return f"{day.day} {day:%B %Y}"


def _successor(revision: Revision, revisions: Iterable[Revision]) -> Revision | None:
    """The revision that took over the day after ``revision`` ended, if one did."""
    if revision.effective_to is None:
        return None
    next_day = revision.effective_to + timedelta(days=1)
    return next((r for r in revisions if r.effective_from == next_day and r.resolvable), None)


def _ending(revision: Revision, revisions: Iterable[Revision], today: date) -> str:
    """How ``revision``'s time in force ends, or "" when it has no end date."""
    if revision.effective_to is None:
        return ""
    after = _successor(revision, revisions)
    if after is None:
        return f"in force until {spoken(revision.effective_to)}"
    when = revision.effective_to + timedelta(days=1)
    verb = "replaced" if when <= today else "to be replaced"
    return f"{verb} by the {after.version_label} on {spoken(when)}"


def standing(revision: Revision, day: date, revisions: Sequence[Revision], today: date) -> str:
    """``revision``'s status on ``day`` in plain words, with when it started and ends; the revision in force
    that day is never called superseded, whatever has replaced it since."""
    if revision.status == RevisionStatus.PROCESSING:
        return "still being read: not searchable yet"
    if revision.status == RevisionStatus.FAILED:
        return "could not be read: not searchable"
    ending = _ending(revision, revisions, today)
    if day < revision.effective_from:
        return f"not yet in force on {spoken(day)}: takes effect on {spoken(revision.effective_from)}"
    if revision.effective_to is not None and day > revision.effective_to:
        return f"no longer in force on {spoken(day)}: in force from {spoken(revision.effective_from)}, {ending}"
    since = f"in force on {spoken(day)} (since {spoken(revision.effective_from)})"
    return f"{since}; {ending}" if ending else f"{since}; nothing has replaced it"


def span(revision: Revision) -> str:
    """``from 12 December 2024 to 31 December 2098`` (or ``from ...`` alone while no end is set)."""
    start = f"from {spoken(revision.effective_from)}"
    return f"{start} to {spoken(revision.effective_to)}" if revision.effective_to else start


def nothing_in_force(revisions: Iterable[Revision], day: date) -> str | None:
    """Why no revision among ``revisions`` answers for ``day`` (``Nothing in force on ...; the first revision
    took effect on ...``), or ``None`` when one is in force that day. Only revisions that can be searched
    count: one still being read is not in force for anybody yet."""
    usable = [r for r in revisions if r.resolvable]
    if any(r.covers(day) for r in usable):
        return None
    head = f"Nothing in force on {spoken(day)}"
    if not usable:
        return f"{head}: no revision has been read yet."
    first = min(usable, key=lambda r: r.effective_from)
    if day < first.effective_from:
        return f"{head}; the first revision ({first.version_label}) took effect on {spoken(first.effective_from)}."
    before = max((r for r in usable if r.effective_from <= day), key=lambda r: r.effective_from)
    after = [r for r in usable if r.effective_from > day]
    ended = f"{head}; the {before.version_label} ended on {spoken(before.effective_to or day)}"
    if after:
        following = min(after, key=lambda r: r.effective_from)
        return f"{ended} and the {following.version_label} took effect on {spoken(following.effective_from)}."
    return f"{ended}."
