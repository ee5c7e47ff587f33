"""Which revision was in force on a day (spec 000 FR-007, spec 001 EffectiveDateResolver).

Ranges of revisions in ``processing``/``active``/``superseded`` never overlap (the registry enforces
it), so for a day at most one of them covers it: among the revisions that started on or before the
day, the latest non-failed one. That is one ``ZREVRANGEBYSCORE ... LIMIT`` per source, pipelined
across sources. Only ``active`` and ``superseded`` revisions are returned; a day covered by a
revision still in ``processing`` has none yet.

This module is the single answer to "which revision on day D"; the vector search filters chunks by
the revision ids it returns, so a chunk's own (possibly stale) date metadata never decides.
"""

from __future__ import annotations

from datetime import date

from lib.dates import parse_date
from lib.models import Resolution, Revision, RevisionStatus
from lib.registry import PolicyRegistry, check_source

REASON_NO_REVISIONS = "no_revisions"
REASON_BEFORE_FIRST = "date_before_first_revision"
REASON_IN_GAP = "date_in_gap"


def _pick(candidates: list[Revision], day: date) -> Revision | None:
    """The revision covering ``day`` among those that started on or before it, newest first."""
    for rev in candidates:
        if rev.status == RevisionStatus.FAILED:
            continue
        return rev if rev.resolvable and rev.covers(day) else None
    return None


class EffectiveDateResolver:
    def __init__(self, registry: PolicyRegistry) -> None:
        self._registry = registry

    def resolve_for_policy(self, source: str, day: date | str) -> Resolution:
        check_source(source)
        return self.resolve_many([source], day)[source]

    def resolve_snapshot(self, day: date | str) -> list[Resolution]:
        """Every registered policy as of ``day`` (spec 001 FR-009), sorted by source."""
        sources = self._registry.list_sources()
        resolved = self.resolve_many(sources, day)
        return [resolved[s] for s in sources]

    def get_revision_ids_for_date(self, day: date | str, sources: list[str] | None = None) -> dict[str, str]:
        """``{source: revision_id}`` of the revisions in force, for filtering chunks."""
        sources = self._registry.list_sources() if sources is None else sources
        return {
            source: res.revision.revision_id
            for source, res in self.resolve_many(sources, day).items()
            if res.revision is not None
        }

    def resolve_many(self, sources: list[str], day: date | str) -> dict[str, Resolution]:
        day = parse_date(day, field="effective_date")
        latest = self._registry.latest_started_on_or_before(sources, day)
        result: dict[str, Resolution] = {}
        unresolved: list[str] = []
        for source in sources:
            candidates = latest.get(source, [])
            if candidates and all(c.status == RevisionStatus.FAILED for c in candidates):
                candidates = self._registry.latest_started_on_or_before([source], day, limit=-1)[source]
            revision = _pick(candidates, day)
            if revision is not None:
                result[source] = Resolution(source=source, effective_date=day, revision=revision)
            else:
                unresolved.append(source)
        if unresolved:
            for source, revisions in self._registry.revisions_by_source(unresolved).items():
                result[source] = Resolution(source=source, effective_date=day, reason=_reason(revisions, day))
        return result


def _reason(revisions: list[Revision], day: date) -> str:
    resolvable = [r for r in revisions if r.resolvable]
    if not resolvable:
        return REASON_NO_REVISIONS
    if day < min(r.effective_from for r in resolvable):
        return REASON_BEFORE_FIRST
    return REASON_IN_GAP
