"""The REST API's response shapes (spec 001). Request bodies are ``lib.policies.models``' own
(``PolicyCreate``, ``RevisionUpdate`` ...); errors are ``errors.ErrorResponse``. The OpenAPI document is
generated from these classes, so it cannot drift from what the routes return."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from lib.policies.models import PolicyCategory, Revision
from mcp_service.views import RevisionInfo


class PolicyOut(BaseModel):
    source: str
    title: str
    description: str
    category: PolicyCategory
    current_revision: RevisionInfo | None = Field(description="The revision in force today; null if none")
    revision_count: int
    created_at: str
    updated_at: str


class PolicyDetail(PolicyOut):
    revisions: list[Revision] = Field(description="Every revision, newest effective_from first")


class PolicyList(BaseModel):
    policies: list[PolicyOut]
    total: int


class Links(BaseModel):
    self: str
    status: str


class SideEffects(BaseModel):
    superseded: list[RevisionInfo] = Field(
        default_factory=list, description="Revisions this one closed (auto-supersession: effective_to set)"
    )


class RevisionAccepted(BaseModel):
    source: str
    revision_id: str
    version_label: str
    effective_from: str
    effective_to: str | None
    status: str
    ingestion_job_id: str
    links: Links
    side_effects: SideEffects


class RevisionDeleted(BaseModel):
    source: str
    revision_id: str
    status: Literal["deleted"] = "deleted"
    chunks_removed: int
    file_removed: bool


class ReindexAccepted(BaseModel):
    source: str
    revision_id: str
    status: Literal["reindexing"] = "reindexing"
    ingestion_job_id: str
    links: Links
