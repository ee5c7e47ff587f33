"""The ``policy-kb-mcp`` tools' output schemas: what each tool returns on success, as the SDK publishes
it in ``tools/list`` and the client validates results against it. Field names are spec 000's."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lib.policies.models import SearchHit
from lib.policies.search import PolicySection
from mcp_service.views import PolicyInfo, RevisionInfo, Snapshot


class SearchOutput(BaseModel):
    status: str = "success"
    query: str
    effective_date: str | None
    results_count: int
    results: list[SearchHit] = Field(description="Best first; relevance_score = max(0, 1 - L2 distance / 2)")


class BatchQueryResult(BaseModel):
    query: str
    results_count: int
    results: list[SearchHit]


class BatchSearchOutput(BaseModel):
    status: str = "success"
    effective_date: str | None
    query_count: int
    results: list[BatchQueryResult] = Field(description="One entry per query, in the order given")


class SectionOutput(PolicySection):
    status: str = "success"


class SnapshotOutput(Snapshot):
    status: str = "success"


class DocumentsOutput(BaseModel):
    status: str = "success"
    policy_count: int
    policies: list[PolicyInfo]


class RevisionsOutput(BaseModel):
    status: str = "success"
    source: str
    revision_count: int
    revisions: list[RevisionInfo] = Field(description="Newest effective_from first")


class IngestOutput(BaseModel):
    status: str = "success"
    source: str
    revision_id: str
    chunks_created: int
    chunks_removed: int = Field(description="Chunks of an earlier ingestion that the new set no longer has")
    page_count: int
    extraction_method: str = Field(description="text_layer | ocr | mixed")
    action: str = Field(description="ingested | reindexed | unchanged (this file was already ingested)")


class RemoveOutput(BaseModel):
    status: str = "success"
    source: str
    revision_id: str
    chunks_removed: int
    registry_entry_removed: bool = Field(
        description="True when the revision was registered: it is removed with its chunks and file"
    )
    file_removed: bool
