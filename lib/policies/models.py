"""Policy records (specs 000/001): policies, revisions, their dates and statuses, search hits."""

from __future__ import annotations

import re
from datetime import date, datetime
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, model_validator

from lib.dates import IsoDate
from lib.text.section_report import SectionReport

SOURCE_PATTERN = r"^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$"
REVISION_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,127}$"
_SOURCE_RE = re.compile(SOURCE_PATTERN)
_REVISION_RE = re.compile(REVISION_ID_PATTERN)


class PolicyCategory(StrEnum):
    NATIONAL_POLICY = "national_policy"
    NATIONAL_GUIDANCE = "national_guidance"
    LOCAL_PLAN = "local_plan"
    LOCAL_GUIDANCE = "local_guidance"
    COUNTY_STRATEGY = "county_strategy"
    SUPPLEMENTARY = "supplementary"


class RevisionStatus(StrEnum):
    PROCESSING = "processing"
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    FAILED = "failed"


RESOLVABLE_STATUSES = frozenset({RevisionStatus.ACTIVE, RevisionStatus.SUPERSEDED})
"""Only these are ever returned for a date (spec 000 FR-007)."""


def is_valid_source(source: str) -> bool:
    return isinstance(source, str) and len(source) <= 64 and bool(_SOURCE_RE.match(source))


def is_valid_revision_id(revision_id: str) -> bool:
    return isinstance(revision_id, str) and bool(_REVISION_RE.match(revision_id))


def default_revision_id(source: str, effective_from: date) -> str:
    """``rev_{SOURCE}_{YYYY}_{MM}`` (spec 001 technology decisions)."""
    return f"rev_{source}_{effective_from.year:04d}_{effective_from.month:02d}"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", use_enum_values=False)


class PolicyCreate(_Strict):
    source: str = Field(pattern=SOURCE_PATTERN, max_length=64, description="UPPER_SNAKE_CASE slug")
    title: str = Field(min_length=1, max_length=300)
    description: str = Field(default="", max_length=5000)
    category: PolicyCategory


class PolicyUpdate(_Strict):
    title: str | None = Field(default=None, min_length=1, max_length=300)
    description: str | None = Field(default=None, max_length=5000)
    category: PolicyCategory | None = None


class Policy(BaseModel):
    source: str
    title: str
    description: str = ""
    category: PolicyCategory
    created_at: datetime
    updated_at: datetime


class DateRange(_Strict):
    """An inclusive range; ``effective_to=None`` means in force with no end."""

    effective_from: IsoDate
    effective_to: IsoDate | None = None

    @model_validator(mode="after")
    def _ordered(self) -> DateRange:
        if self.effective_to is not None and self.effective_to < self.effective_from:
            raise ValueError("effective_to must be on or after effective_from")
        return self


class RevisionCreate(DateRange):
    revision_id: str | None = Field(default=None, pattern=REVISION_ID_PATTERN)
    version_label: str = Field(min_length=1, max_length=200)
    notes: str = Field(default="", max_length=5000)
    file_path: str = Field(default="", max_length=1024, description="Object-store key of the original file")
    file_sha256: str = Field(default="", pattern=r"^([0-9a-f]{64})?$")
    file_size_bytes: int = Field(default=0, ge=0)

    def resolved_revision_id(self, source: str) -> str:
        return self.revision_id or default_revision_id(source, self.effective_from)


class RevisionUpdate(_Strict):
    """Fields left out are unchanged; ``effective_to`` given as ``null`` re-opens a revision."""

    version_label: str | None = Field(default=None, min_length=1, max_length=200)
    effective_from: IsoDate | None = None
    effective_to: IsoDate | None = None
    notes: str | None = Field(default=None, max_length=5000)


class Revision(BaseModel):
    revision_id: str
    source: str
    version_label: str
    effective_from: date
    effective_to: date | None = None
    status: RevisionStatus
    file_path: str = ""
    file_sha256: str = ""
    file_size_bytes: int = 0
    page_count: int = 0
    chunk_count: int = 0
    extraction_method: str = ""
    notes: str = ""
    created_at: datetime
    ingested_at: datetime | None = None
    error: str = ""
    progress_phase: str = Field(default="", description="Last ingestion phase reported: fetch .. done")
    progress_percent: float = 0.0
    reading: str = Field(default="", description="How well the document was read (lib.text.section_report)")
    _chunks_generation: int = PrivateAttr(default=0)
    """How many times the revision's chunks were written or deleted (``PolicyRegistry.chunks_changed``):
    internal, never serialised, part of the stamp a replica's index of the revision is served under."""

    @property
    def chunks_generation(self) -> int:
        return self._chunks_generation

    def with_chunks_generation(self, generation: int) -> Revision:
        self._chunks_generation = generation
        return self

    def covers(self, day: date) -> bool:
        """Inclusive on both ends (spec 000 FR-007)."""
        return self.effective_from <= day and (self.effective_to is None or day <= self.effective_to)

    @property
    def resolvable(self) -> bool:
        return self.status in RESOLVABLE_STATUSES


class CreatedRevision(BaseModel):
    """A new revision and the revisions whose ``effective_to`` it closed (auto-supersession)."""

    revision: Revision
    superseded: list[Revision] = Field(default_factory=list)


class Resolution(BaseModel):
    """Which revision of one policy was in force on a day, or why none was."""

    source: str
    effective_date: date
    revision: Revision | None = None
    reason: str | None = Field(
        default=None, description="no_revisions | date_before_first_revision | date_in_gap when revision is None"
    )


class SearchHit(BaseModel):
    """One chunk found. ``relevance_score`` is spec 000 FR-001's, in every mode that embeds the query: the chunk's
    ``max(0, 1 - L2 distance / 2)`` to the query; ``score`` is the ranking's own, by which results are ordered."""

    chunk_id: str
    text: str
    relevance_score: float | None = Field(
        description="max(0, 1 - L2 distance / 2) between the query's and the chunk's embeddings (the cosine "
        "similarity), as spec 000 FR-001 defines it; null in lexical mode, where no query is embedded"
    )
    score: float = Field(
        description="The ranking's score in 0..1, results best first by it: in hybrid mode the fusion of both legs "
        "(a policy placed just above the best paragraph explaining it takes that paragraph's score); in dense mode "
        "relevance_score; in lexical mode the BM25 score over its maximum for the query"
    )
    source: str
    revision_id: str
    version_label: str
    section_ref: str
    page_number: int
    printed_page: str | None = Field(
        default=None,
        description="The page as the document prints it where the chunk starts ('57', 'iv', 'A-3', '62-63'); "
        "null where it prints none. page_number is the PDF page, for opening the file",
    )
    chapter: str = ""
    effective_from: str | None = None
    effective_to: str | None = None
    dense_score: float | None = None
    """The dense leg's relevance, ``max(0, 1 - L2 distance / 2)``, when the chunk was among its candidates."""
    lexical_score: float | None = None
    """The lexical leg's BM25 score (unbounded, over the revisions searched) when among its candidates."""
    supports: str | None = None
    """For a paragraph of a plan's reasoned justification, the policy it explains (``Policy LP4``): the
    citation an agent gives is then "paragraph 3.4.6, supporting Policy LP4"."""


class IngestOutcome(BaseModel):
    source: str
    revision_id: str
    chunks_created: int
    chunks_removed: int
    page_count: int
    extraction_method: str
    file_size_bytes: int
    seconds: dict[str, float] = Field(default_factory=dict)
    sections: dict[str, int] = Field(default_factory=dict, description="chunks per section_ref")
    reading: SectionReport | None = Field(default=None, description="Policies, paragraphs and fallbacks found")
