"""The JSON shapes both adapters return for registry records: MCP tools and REST endpoints share them.

Field names follow spec 000 (tools) and spec 001 (REST); dates are ISO strings, ``effective_to`` is
``null`` for a revision still in force. Pure functions over ``lib`` records: no store access here.
"""

from __future__ import annotations

from datetime import date

from pydantic import BaseModel, Field

from lib.dates import iso
from lib.policies.models import Policy, PolicyCategory, Resolution, Revision, RevisionStatus


class RevisionInfo(BaseModel):
    """A revision as listed (spec 000 FR-004), plus what a reviewer needs to judge it."""

    revision_id: str
    version_label: str
    effective_from: str
    effective_to: str | None = Field(description="null while the revision is in force with no end date")
    status: RevisionStatus
    chunk_count: int
    page_count: int = 0
    notes: str = ""


class PolicyInfo(BaseModel):
    source: str
    title: str
    category: PolicyCategory
    description: str = ""
    current_revision: RevisionInfo | None = Field(
        default=None, description="The revision in force today, if any (spec 001 PolicyDocumentInfo)"
    )


class SnapshotEntry(BaseModel):
    source: str
    title: str
    revision: RevisionInfo | None = None
    reason: str | None = Field(
        default=None, description="Why no revision: date_before_first_revision | date_in_gap | no_revisions"
    )


class Snapshot(BaseModel):
    """Which revision of every policy was in force on a day (spec 001 FR-009)."""

    effective_date: str
    policies: list[SnapshotEntry] = Field(description="Policies with a revision in force that day")
    policies_not_yet_effective: list[SnapshotEntry] = Field(
        description="Policies whose first revision starts after the date (reason date_before_first_revision)"
    )
    policies_with_no_revision_for_date: list[SnapshotEntry] = Field(
        description="Policies with revisions around the date but none covering it (date_in_gap), or none at all"
    )


class ProgressInfo(BaseModel):
    phase: str = Field(description="fetch | extract | chunk | embed | store | done; empty before the job starts")
    percent_complete: float
    chunks_processed: int | None = None
    chunks_total: int | None = None


class RevisionStatusInfo(BaseModel):
    source: str
    revision_id: str
    status: RevisionStatus
    progress: ProgressInfo
    error: str = ""


def revision_info(revision: Revision) -> RevisionInfo:
    return RevisionInfo(
        revision_id=revision.revision_id,
        version_label=revision.version_label,
        effective_from=revision.effective_from.isoformat(),
        effective_to=iso(revision.effective_to),
        status=revision.status,
        chunk_count=revision.chunk_count,
        page_count=revision.page_count,
        notes=revision.notes,
    )


def policy_info(policy: Policy, current: Resolution | None) -> PolicyInfo:
    revision = current.revision if current is not None else None
    return PolicyInfo(
        source=policy.source,
        title=policy.title,
        category=policy.category,
        description=policy.description,
        current_revision=revision_info(revision) if revision is not None else None,
    )


def snapshot(day: date, resolutions: list[Resolution], titles: dict[str, str]) -> Snapshot:
    in_force, not_yet, none = [], [], []
    for res in resolutions:
        entry = SnapshotEntry(
            source=res.source,
            title=titles.get(res.source, ""),
            revision=revision_info(res.revision) if res.revision is not None else None,
            reason=res.reason,
        )
        if res.revision is not None:
            in_force.append(entry)
        elif res.reason == "date_before_first_revision":
            not_yet.append(entry)
        else:
            none.append(entry)
    return Snapshot(
        effective_date=day.isoformat(),
        policies=in_force,
        policies_not_yet_effective=not_yet,
        policies_with_no_revision_for_date=none,
    )


def revision_status(revision: Revision) -> RevisionStatusInfo:
    """Progress as the ingestion recorded it on the revision (any replica may be asked)."""
    done = revision.resolvable and revision.progress_phase in ("", "done")
    return RevisionStatusInfo(
        source=revision.source,
        revision_id=revision.revision_id,
        status=revision.status,
        progress=ProgressInfo(
            phase="done" if done else revision.progress_phase,
            percent_complete=100.0 if done else revision.progress_percent,
            chunks_processed=revision.chunk_count if done else None,
            chunks_total=revision.chunk_count if done else None,
        ),
        error=revision.error,
    )
