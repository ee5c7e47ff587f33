"""The policy registry's revisions as metrics, read at scrape time from the registry snapshot (one Redis read
while the registry is unchanged): how many per status, and how many are stuck, ``processing`` for longer than
``PROCESSING_TIMEOUT_SECONDS`` (the audit's ``stuck_processing``, seen without waiting for an audit)."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from lib.policies.models import RevisionStatus
from lib.policies.registry import PolicyRegistry

logger = logging.getLogger(__name__)


class RevisionCollector(Collector):
    def __init__(
        self, registry: PolicyRegistry, stuck_after_s: int, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self.registry = registry
        self.stuck_after = timedelta(seconds=stuck_after_s)
        self.clock = clock

    def collect(self) -> Iterator[Metric]:
        try:
            snapshot = self.registry.snapshot()
        except Exception as exc:  # a scrape while Redis is away still answers, without these figures
            logger.warning("metrics.revisions_unreadable error=%r", exc)
            return
        revisions = [r for source in snapshot.sources for r in snapshot.revisions[source]]
        by_status = Counter(r.status for r in revisions)
        statuses = GaugeMetricFamily("policy_kb_revisions", "Registered policy revisions by status", labels=["status"])
        for status in RevisionStatus:
            statuses.add_metric([status.value], by_status.get(status, 0))
        stuck_before = self.clock() - self.stuck_after
        stuck = sum(r.status == RevisionStatus.PROCESSING and r.created_at <= stuck_before for r in revisions)
        yield statuses
        yield GaugeMetricFamily(
            "policy_kb_revisions_stuck", "Revisions processing for longer than PROCESSING_TIMEOUT_SECONDS", value=stuck
        )
