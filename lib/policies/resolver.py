"""Which revision was in force on a day, for one policy or all (spec 001 EffectiveDateResolver).

Answers come from the registry's snapshot (one Redis read when nothing changed, a reload after any
write), so resolving every policy for a search is a few microseconds of Python; the rule itself is
``lib.policies.temporal.resolve_revision``. This is the single answer to "which revision on day D":
the vector search filters chunks by the revisions it returns, so a chunk's own (possibly stale) date
metadata never decides.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date

from lib.dates import parse_date
from lib.policies.keys import check_source
from lib.policies.models import Resolution
from lib.policies.registry import PolicyRegistry
from lib.policies.temporal import resolve_revision


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
