"""The ``policy-kb-mcp`` tools' output schemas: what each tool returns on success, as the SDK publishes
it in ``tools/list`` and the client validates results against it. Field names are spec 000's."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lib.policies.compare import Comparison
from lib.policies.models import SearchHit
from lib.policies.quotes import QuoteVerification
from lib.policies.sections import CitingSections, PolicySection, SectionList
from mcp_service.views import PolicyInfo, RevisionInfo, Snapshot


class SearchOutput(BaseModel):
    status: str = "success"
    query: str
    effective_date: str | None
    results_count: int
    results: list[SearchHit] = Field(
        description="Best first by score (0..1): in hybrid the rank fusion of both rankings, 1 for a chunk both "
        "rank first (a policy ranks just above the best paragraph explaining it, with that score); in dense mode "
        "relevance_score; in lexical mode the BM25 score over its maximum for the query. relevance_score: spec "
        "000 FR-001's max(0, 1 - L2 distance / 2) in every mode but lexical (null there). One "
        "chunk per section. dense_score / lexical_score: each ranking's own score, null where it did not find the "
        "chunk. supports: for a paragraph of a plan's reasoned justification, the policy it explains."
    )


class BatchQueryResult(BaseModel):
    query: str
    results_count: int
    results: list[SearchHit]


class BatchSearchOutput(BaseModel):
    status: str = "success"
    effective_date: str | None
    query_count: int
    results: list[BatchQueryResult] = Field(description="One entry per query, in the order given")


class PageImageOutput(BaseModel):
    """What the PNG sent beside it shows (an image content block, image/png)."""

    status: str = "success"
    source: str
    revision_id: str
    version_label: str
    page_number: int
    printed_page: str | None = Field(
        default=None, description="The page as the document prints it ('57', 'iv', 'A-3', '62-63'); null if none"
    )
    page_count: int
    width: int = Field(description="Pixels")
    height: int = Field(description="Pixels")
    highlighted: int = Field(description="Boxes highlighted: 0 when nothing was asked or it is not on this page")
    url: str = Field(description="The same image over REST (GET, same credentials)")


class QuoteOutput(QuoteVerification):
    status: str = "success"


class SectionOutput(PolicySection):
    status: str = "success"


class SectionsOutput(SectionList):
    status: str = "success"


class CitingOutput(CitingSections):
    status: str = "success"


class CompareOutput(Comparison):
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
    extraction_method: str = Field(
        description="text_layer (the PDF's text, PyMuPDF) | ocr (Tesseract on every page with text) | mixed"
    )
    action: str = Field(description="ingested | reindexed | unchanged (this file was already ingested)")


class RemoveOutput(BaseModel):
    """Spec 000 FR-006 exactly: only chunks are removed, so there is nothing else to report."""

    status: str = "success"
    source: str
    revision_id: str
    chunks_removed: int
