"""The records and results of the governance corpus: what a hit, a document, the index and an ingest report hold.

``GovernanceAnswer`` is the shape every interface serves (MCP structured content, REST ``/query``, the
LangChain retriever, the OpenAI tool): one implementation, ``lib.governance.search.query_governance``.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class GovernanceMetadata(BaseModel):
    """What a citation of one chunk needs, and the chain links an agent follows to the document in force."""

    id: str = Field(description="Document id: PEP-0513, a front-matter id, or the file's stem")
    title: str
    type: str = Field(description="The document's own type as written: 'Standards Track', 'adr', ...")
    status: str = Field(description="Status as the document states it today: Final, Superseded, Rejected, ...")
    file_path: str = Field(description="Path of the file relative to the ingested folder")
    heading: str = Field(description="Heading path of the section the chunk comes from: 'Abstract > Rationale'")
    created: str | None = Field(default=None, description="ISO date the document was created, when it says")
    superseded_by: list[str] = Field(default_factory=list, description="Ids of the documents that replace it")
    replaces: list[str] = Field(default_factory=list, description="Ids of the documents it replaces")


class GovernanceHit(BaseModel):
    text: str
    score: float = Field(description="Relevance in 0..1 for the mode used")
    dense_score: float | None = Field(
        default=None, description="The dense leg's cosine relevance (0..1), when the chunk was among its candidates"
    )
    lexical_score: float | None = Field(
        default=None,
        description="The lexical leg's BM25 score (unbounded, IDF over the documents searched), when the chunk "
        "was among its candidates",
    )
    metadata: GovernanceMetadata


class GovernanceAnswer(BaseModel):
    question: str
    top_k: int
    as_of: str = Field(description="The day whose documents in force were searched (ISO)")
    mode: str
    results: list[GovernanceHit]


class GovernanceDocumentSummary(BaseModel):
    id: str
    title: str
    type: str
    status: str
    file_path: str
    created: str | None = None
    supported_until: str | None = None
    superseded_by: list[str] = Field(default_factory=list)
    replaces: list[str] = Field(default_factory=list)
    chunk_count: int = 0


class GovernanceDocument(GovernanceDocumentSummary):
    """One whole document: its metadata, the text as ingested (headers and front matter left out)."""

    version: str | None = None
    relates_to: list[str] = Field(default_factory=list)
    text: str


class IndexState(BaseModel):
    built: bool
    documents: int
    chunks: int
    last_updated: datetime | None = None


class FailedFile(BaseModel):
    file: str
    error: str


class CorpusIngestReport(BaseModel):
    """What one ingestion of a folder did, file by file (paths relative to the folder)."""

    added: list[str] = Field(default_factory=list)
    changed: list[str] = Field(default_factory=list)
    unchanged: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    failed: list[FailedFile] = Field(default_factory=list)
    chunks_written: int = 0
    seconds: float = 0.0


class GovernanceRecord(BaseModel):
    """A registered document as the registry keeps it (``lib.governance.registry``)."""

    id: str
    title: str
    type: str
    type_key: str = Field(description="``type`` normalised for filtering (``normalise_type``)")
    status: str
    file_path: str
    source: str = Field(description="Absolute path of the file it was read from")
    content_hash: str
    generation: int
    chunk_count: int
    created: str | None = None
    supported_until: str | None = None
    version: str | None = None
    relates_to: list[str] = Field(default_factory=list)
    superseded_by: list[str] = Field(default_factory=list)
    replaces: list[str] = Field(default_factory=list)

    def summary(self) -> GovernanceDocumentSummary:
        return GovernanceDocumentSummary.model_validate(self.model_dump())


def normalise_type(value: str) -> str:
    """``Standards Track``, ``standards-track`` and ``standards_track`` all become ``standards track``."""
    return " ".join(value.replace("_", " ").replace("-", " ").lower().split())
