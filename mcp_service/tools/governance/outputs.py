"""The ``governance-rag`` tools' output schemas: what each tool returns on success, as ``tools/list``
publishes it and the client validates results against it (spec 004; ``lib.governance.models``)."""

from __future__ import annotations

from pydantic import BaseModel, Field

from lib.governance.models import GovernanceAnswer, GovernanceDocument, GovernanceDocumentSummary


class QueryGovernanceOutput(GovernanceAnswer):
    status: str = Field(description="success")


class GovernanceDocumentOutput(BaseModel):
    """The document under ``document``: its own ``status`` (Final, Superseded ...) is not the envelope's."""

    status: str = Field(description="success")
    document: GovernanceDocument


class DocumentListOutput(BaseModel):
    status: str = Field(description="success")
    total: int
    documents: list[GovernanceDocumentSummary]
