"""The last consistency audit's outcome, kept in Redis (``policy_registry:last_audit``) so that the web page's
Ingestion view shows it without running an audit (which reads every chunk in Chroma) on each page view.

``audit_store`` saves it at the end of every audit, whoever runs it (the nightly flow, ``policy-kb audit``, a
repair's re-audit): the last one written is the state last seen. The record is bounded: the counts per kind are
complete, the findings are the first ``MAX_FINDINGS``, each detail cut to ``MAX_DETAIL_CHARS``, with the total
kept so the page can say how many were left out. It is one JSON string written by one SET (atomic).
"""

from __future__ import annotations

import logging
from datetime import datetime
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field, ValidationError

from lib.errors import RegistryUnavailableError
from lib.policies.registry import PolicyRegistry

if TYPE_CHECKING:  # ``lib.policies.audit`` saves its reports here: imported for types only, not at run time
    from lib.policies.audit import AuditReport

logger = logging.getLogger(__name__)

MAX_FINDINGS = 100
MAX_DETAIL_CHARS = 300


class AuditRecord(BaseModel):
    checked_at: datetime
    revisions: int
    chunks: int
    files: int
    counts: dict[str, int] = Field(description="Findings per kind, all of them (zeros included)")
    total: int = Field(description="Findings found; ``findings`` holds at most MAX_FINDINGS of them")
    findings: list[dict[str, str | int]] = Field(
        default_factory=list, description="At most MAX_FINDINGS: kind, source, revision_id, key, count, detail, repair"
    )

    @property
    def ok(self) -> bool:
        return self.total == 0

    @property
    def left_out(self) -> int:
        return self.total - len(self.findings)


def record_of(report: AuditReport) -> AuditRecord:
    kept = [
        {**f.model_dump(mode="json"), "detail": f.detail[:MAX_DETAIL_CHARS]} for f in report.findings[:MAX_FINDINGS]
    ]
    return AuditRecord(
        checked_at=report.checked_at,
        revisions=report.revisions,
        chunks=report.chunks,
        files=report.files,
        counts=report.counts(),
        total=len(report.findings),
        findings=kept,
    )


def save_last_audit(registry: PolicyRegistry, report: AuditReport) -> AuditRecord | None:
    """Keep ``report`` as the last audit. Redis gone since the audit read it is logged, not raised: the audit's
    own result still reaches its caller."""
    record = record_of(report)
    try:
        registry.put_last_audit(record.model_dump_json())
    except RegistryUnavailableError as exc:
        logger.warning("audit.record_failed reason=%r", str(exc)[:200])
        return None
    logger.info(
        "audit.recorded checked_at=%s findings=%d kept=%d",
        record.checked_at.isoformat(),
        record.total,
        len(record.findings),
    )
    return record


def last_audit(registry: PolicyRegistry) -> AuditRecord | None:
    """The last audit saved, or ``None`` when none ran (or its record no longer reads as one)."""
    raw = registry.get_last_audit()
    if raw is None:
        return None
    try:
        return AuditRecord.model_validate_json(raw)
    except ValidationError as exc:
        logger.warning("audit.record_unreadable errors=%d", exc.error_count())
        return None
