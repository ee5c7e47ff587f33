"""Which revision was in force on a day (spec 000 FR-007, spec 001 EffectiveDateResolver).

Ranges of revisions in ``processing``/``active``/``superseded`` never overlap (the registry enforces
it), so for a day at most one of them covers it: among the revisions that started on or before the
day, the latest non-failed one. Only ``active`` and ``superseded`` revisions are returned; a day
covered by a revision still in ``processing`` has none yet.

The resolver answers from the registry's snapshot (``PolicyRegistry.snapshot``: one Redis read when
nothing changed, a reload after any write), so resolving every policy for a search is a few
microseconds of Python. This module is the single answer to "which revision on day D"; the vector
search filters chunks by the revisions it returns, so a chunk's own (possibly stale) date metadata
never decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from lib.dates import parse_date
from lib.policies.models import Resolution, Revision, RevisionStatus
from lib.policies.registry import PolicyRegistry, check_source

REASON_NO_REVISIONS = "no_revisions"
REASON_BEFORE_FIRST = "date_before_first_revision"
REASON_IN_GAP = "date_in_gap"


def resolve_revision(source: str, revisions: Sequence[Revision], day: date) -> Resolution:
    """The revision of ``source`` in force on ``day``, from all its ``revisions`` newest ``effective_from``
    first; when there is none, the reason (no revisions, before the first, in a gap)."""
    for rev in revisions:
        if rev.effective_from > day or rev.status == RevisionStatus.FAILED:
            continue
        if rev.resolvable and rev.covers(day):
            return Resolution(source=source, effective_date=day, revision=rev)
        break
    return Resolution(source=source, effective_date=day, reason=_reason(revisions, day))


class EffectiveDateResolver:
    def __init__(self, registry: PolicyRegistry) -> None:
        self._registry = registry

    def resolve_for_policy(self, source: str, day: date | str) -> Resolution:
        check_source(source)
        return self.resolve_many([source], day)[source]

    def resolve_snapshot(self, day: date | str) -> list[Resolution]:
        """Every registered policy as of ``day`` (spec 001 FR-009), sorted by source."""
        return list(self.resolve_many(None, day).values())

    def get_revision_ids_for_date(self, day: date | str, sources: list[str] | None = None) -> dict[str, str]:
        """``{source: revision_id}`` of the revisions in force, for filtering chunks."""
        return {
            source: res.revision.revision_id
            for source, res in self.resolve_many(sources, day).items()
            if res.revision is not None
        }

    def resolve_many(self, sources: Sequence[str] | None, day: date | str) -> dict[str, Resolution]:
        """``{source: Resolution}`` for ``sources`` (every registered policy when ``None``), in that order.
        An unknown source resolves to no revision (``no_revisions``)."""
        day = parse_date(day, field="effective_date")
        by_source = self._registry.snapshot().revisions
        wanted = list(by_source) if sources is None else sources
        return {source: resolve_revision(source, by_source.get(source, ()), day) for source in wanted}


def _reason(revisions: Sequence[Revision], day: date) -> str:
    resolvable = [r for r in revisions if r.resolvable]
    if not resolvable:
        return REASON_NO_REVISIONS
    if day < min(r.effective_from for r in resolvable):
        return REASON_BEFORE_FIRST
    return REASON_IN_GAP
