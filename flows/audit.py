"""``consistency_audit``: registry, Chroma and object store compared (spec 000 NFR-003), nightly: for policies,
application documents (``lib.documents.audit``) and the governance corpus (``lib.governance.audit``).

The findings go to a table artifact. With ``repair`` the safe fixes are applied (``lib.policies.audit``) and the
stores audited again, so the artifact shows what was wrong, what was done and what is left. With
``fail_on_findings`` (the nightly schedule sets it) a run that leaves findings ends ``Failed``, so the
Prefect UI and its automations flag it.
"""

from __future__ import annotations

import logging

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from pydantic import BaseModel, Field

from flows.common import IO_TASK_OPTIONS, flow_stores, log_event
from lib.documents.audit import DocumentAuditReport, DocumentRepairAction, audit_documents, repair_document_findings
from lib.documents.stores import DocumentStores
from lib.errors import InconsistentStoreError
from lib.governance.audit import GovernanceAuditReport, GovernanceRepairAction, audit_governance, repair_governance
from lib.governance.stores import GovernanceStores
from lib.policies.audit import AuditReport, audit_store
from lib.policies.audit_repair import RepairAction, repair_findings
from lib.policies.stores import PolicyStores

FINDINGS_KEY = "consistency-audit"
REPAIRS_KEY = "consistency-audit-repairs"
SUMMARY_KEY = "consistency-audit-summary"
DOCUMENTS_KEY = "consistency-audit-documents"
GOVERNANCE_KEY = "consistency-audit-governance"


class AuditResult(BaseModel):
    before: AuditReport
    repairs: list[RepairAction] = Field(default_factory=list)
    after: AuditReport | None = Field(default=None, description="The re-audit after repairs, when repair was asked")
    documents_before: DocumentAuditReport | None = Field(default=None, description="Application documents")
    documents_repairs: list[DocumentRepairAction] = Field(default_factory=list)
    documents_after: DocumentAuditReport | None = None
    governance_before: GovernanceAuditReport | None = Field(default=None, description="The governance corpus")
    governance_repairs: list[GovernanceRepairAction] = Field(default_factory=list)
    governance_after: GovernanceAuditReport | None = None

    @property
    def final(self) -> AuditReport:
        return self.after or self.before

    @property
    def final_documents(self) -> DocumentAuditReport | None:
        return self.documents_after or self.documents_before

    @property
    def final_governance(self) -> GovernanceAuditReport | None:
        return self.governance_after or self.governance_before

    @property
    def remaining(self) -> int:
        """Findings left across policies, application documents and the governance corpus."""
        documents, governance = self.final_documents, self.final_governance
        return (
            len(self.final.findings)
            + (len(documents.findings) if documents else 0)
            + (len(governance.findings) if governance else 0)
        )


@task(name="audit-stores", **IO_TASK_OPTIONS)
def audit_task(stores: PolicyStores) -> AuditReport:
    return audit_store(stores)


@task(name="repair-findings", **IO_TASK_OPTIONS)
def repair_task(stores: PolicyStores, report: AuditReport) -> list[RepairAction]:
    return repair_findings(stores, report.findings)


@task(name="audit-documents", **IO_TASK_OPTIONS)
def audit_documents_task(stores: DocumentStores) -> DocumentAuditReport:
    return audit_documents(stores)


@task(name="repair-documents", **IO_TASK_OPTIONS)
def repair_documents_task(stores: DocumentStores, report: DocumentAuditReport) -> list[DocumentRepairAction]:
    return repair_document_findings(stores, report.findings)


@task(name="audit-governance", **IO_TASK_OPTIONS)
def audit_governance_task(stores: GovernanceStores) -> GovernanceAuditReport:
    return audit_governance(stores)


@task(name="repair-governance", **IO_TASK_OPTIONS)
def repair_governance_task(stores: GovernanceStores, report: GovernanceAuditReport) -> list[GovernanceRepairAction]:
    return repair_governance(stores, report.findings)


def _findings_table(
    key: str,
    what: str,
    found: DocumentAuditReport | GovernanceAuditReport,
    after: DocumentAuditReport | GovernanceAuditReport | None,
) -> None:
    """The table artifact of one store's findings: as found, and after repair when it ran."""
    rows = [
        {"stage": stage, **finding.model_dump(mode="json")}
        for stage, report in (("found", found), ("after repair", after))
        if report is not None
        for finding in report.findings
    ]
    create_table_artifact(
        rows or [{"stage": "found", "kind": "none", "detail": f"no {what} findings"}],
        key=key,
        description=f"{len(found.findings)} {what} findings",
    )


def _finding_rows(stage: str, report: AuditReport) -> list[dict[str, object]]:
    return [
        {
            "stage": stage,
            "kind": f.kind.value,
            "source": f.source,
            "revision_id": f.revision_id,
            "key": f.key,
            "count": f.count,
            "detail": f.detail,
            "repair": f.repair or "needs an operator",
        }
        for f in report.findings
    ]


def _summary(result: AuditResult) -> str:
    before, final = result.before, result.final
    lines = [
        "# Consistency audit",
        "",
        f"Checked {before.revisions} revisions, {before.chunks} chunks and {before.files} files "
        f"at {before.checked_at:%Y-%m-%d %H:%M:%S} UTC.",
        "",
        "| kind | found | after repair |" if result.after else "| kind | found |",
        "|---|---|---|" if result.after else "|---|---|",
    ]
    after_counts = final.counts()
    for kind, count in before.counts().items():
        lines.append(f"| {kind} | {count} | {after_counts[kind]} |" if result.after else f"| {kind} | {count} |")
    if result.repairs:
        done = sum(1 for a in result.repairs if a.ok)
        lines += ["", f"Repairs: {done} done, {len(result.repairs) - done} failed."]
    lines += ["", "**Consistent.**" if final.ok else f"**{len(final.findings)} findings remain.**"]
    return "\n".join(lines) + "\n"


@flow(name="consistency_audit", validate_parameters=True)
def consistency_audit(repair: bool = False, fail_on_findings: bool = False) -> AuditResult:
    """Compare registry, Chroma and object store; with repair, fix what is safe and audit again.

    Args:
        repair: Fix what is safe to fix: delete orphan chunks and files, rewrite stale chunk metadata,
            re-ingest revisions whose chunk count is wrong, mark stuck revisions failed.
        fail_on_findings: End the run Failed if findings remain, so the UI and automations flag it
            (the nightly schedule sets this).
    """
    stores = flow_stores()
    before = audit_task(stores.policies)
    for finding in before.findings:
        log_event(
            "audit.finding",
            level=logging.WARNING,
            kind=finding.kind.value,
            source=finding.source or "-",
            revision_id=finding.revision_id or "-",
            key=finding.key or "-",
            detail=finding.detail,
        )
    result = AuditResult(before=before)
    if repair and before.findings:
        result.repairs = repair_task(stores.policies, before)
        result.after = audit_task(stores.policies)
    elif repair:
        result.after = before
    documents = result.documents_before = audit_documents_task(stores.documents)
    if repair and documents.findings:
        result.documents_repairs = repair_documents_task(stores.documents, documents)
        result.documents_after = audit_documents_task(stores.documents)
    _findings_table(DOCUMENTS_KEY, "application-document", documents, result.documents_after)
    governance = result.governance_before = audit_governance_task(stores.governance)
    if repair and governance.findings:
        result.governance_repairs = repair_governance_task(stores.governance, governance)
        result.governance_after = audit_governance_task(stores.governance)
    _findings_table(GOVERNANCE_KEY, "governance", governance, result.governance_after)
    rows = _finding_rows("found", before)
    if result.after is not None and result.after is not before:
        rows += _finding_rows("after repair", result.after)
    create_table_artifact(
        rows or [{"stage": "found", "kind": "none", "detail": "registry, Chroma and object store agree"}],
        key=FINDINGS_KEY,
        description=f"{len(before.findings)} findings",
    )
    if result.repairs:
        create_table_artifact([a.model_dump(mode="json") for a in result.repairs], key=REPAIRS_KEY)
    create_markdown_artifact(_summary(result), key=SUMMARY_KEY)
    final = result.final
    final_documents = result.final_documents
    final_governance = result.final_governance
    log_event(
        "audit.done",
        findings=len(before.findings) + len(documents.findings) + len(governance.findings),
        repaired=len(result.repairs) + len(result.documents_repairs) + len(result.governance_repairs),
        remaining=result.remaining,
    )
    if fail_on_findings and result.remaining:
        counts = {
            **final.counts(),
            **{f"documents_{k}": n for k, n in (final_documents.counts() if final_documents else {}).items()},
            **{f"governance_{k}": n for k, n in (final_governance.counts() if final_governance else {}).items()},
        }
        raise InconsistentStoreError(
            f"{result.remaining} consistency findings remain: " + ", ".join(f"{k}={n}" for k, n in counts.items() if n)
        )
    return result
