"""LangChain over the governance corpus (spec 004 F5), needing only ``langchain-core``
(``pip install 'policy-kb[langchain]'``): a retriever for chains and RAG pipelines, and a tool for agents.

Both call ``logged_query`` (the one retrieval function, with its log line) in process, on governance stores
the caller opened (``lib.composition.open_stores(...).governance``). An agent that should reach a running
server instead loads the MCP tools with ``langchain-mcp-adapters`` (docs/agents.md, "Agent frameworks"); the
answers are the same.

- ``GovernanceRetriever(stores=stores, top_k=5)``: ``invoke(question)`` gives one ``Document`` per hit, its
  ``page_content`` the passage and its ``metadata`` the hit's metadata plus ``score``, ``dense_score``,
  ``lexical_score``.
- ``governance_tool(stores)``: a ``StructuredTool`` named ``query_governance`` with the MCP tool's arguments;
  the model reads the citation text (``[id] (file_path) score`` ...), the answer's JSON is the tool
  message's ``artifact``; a failure (``index_not_built``, ``invalid_date``) comes back as the tool's text.

PRD-0010's own names work too, as thin aliases over the above: ``GovernanceRetriever()`` without ``stores``
opens the stores the environment names (``load_settings``; ``CHROMA_COLLECTION`` or
``CHROMA_GOVERNANCE_COLLECTION``), ``GovernanceRetriever().query(q, top_k=5)`` returns passages with ``text``,
``score`` and ``metadata`` (a dict: ``r.metadata.get("id")``), and ``create_governance_tool()`` is
``governance_tool`` over those stores.
"""

from __future__ import annotations

from typing import Any, Literal

from langchain_core.callbacks import CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, ConfigDict, Field

from lib.config import load_settings
from lib.errors import KBError
from lib.governance.models import GovernanceHit
from lib.governance.stores import GovernanceStores, open_governance_stores
from lib.integrations.citations import render_answer
from lib.integrations.query_log import logged_query

INTERFACE = "langchain"
TOOL_DESCRIPTION = (
    "Search governance documents (ADRs, PRDs, policies, runbooks, PEPs) for passages that answer a question, "
    "among the documents in force today unless as_of or include_inactive say otherwise. Each result is cited "
    "as [id] (file_path) score, with its status and the documents that supersede or are replaced by it."
)
Mode = Literal["hybrid", "dense", "lexical"]


def hit_metadata(hit: GovernanceHit) -> dict[str, Any]:
    metadata: dict[str, Any] = hit.metadata.model_dump(mode="json")
    metadata.update(score=hit.score, dense_score=hit.dense_score, lexical_score=hit.lexical_score)
    return metadata


def hit_document(hit: GovernanceHit) -> Document:
    return Document(page_content=hit.text, metadata=hit_metadata(hit), id=f"{hit.metadata.id}:{hit.metadata.heading}")


def stores_from_environment() -> GovernanceStores:
    """The governance stores the environment names (``GovernanceRetriever()`` as PRD-0010 calls it)."""
    return open_governance_stores(load_settings())


class Passage(BaseModel):
    """One result of ``GovernanceRetriever.query``, as PRD-0010's code reads it: ``r.text``, ``r.score``,
    ``r.metadata.get("id")``, ``r.metadata.get("file_path")``."""

    text: str
    score: float
    metadata: dict[str, Any]


class GovernanceRetriever(BaseRetriever):
    """The documents in force (today, or ``as_of``) that best answer a question, best first."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    stores: GovernanceStores = Field(default_factory=stores_from_environment)
    top_k: int = Field(default=5, ge=1, le=20)
    doc_types: list[str] | None = None
    as_of: str | None = None
    include_inactive: bool = False
    mode: Mode = "hybrid"

    def _get_relevant_documents(self, query: str, *, run_manager: CallbackManagerForRetrieverRun) -> list[Document]:
        answer = logged_query(
            self.stores,
            query,
            interface=INTERFACE,
            top_k=self.top_k,
            doc_types=self.doc_types,
            as_of=self.as_of,
            include_inactive=self.include_inactive,
            mode=self.mode,
        )
        return [hit_document(hit) for hit in answer.results]

    def query(self, question: str, top_k: int | None = None) -> list[Passage]:
        """PRD-0010's ``retriever.query(question, top_k=5)``: the same search as ``invoke``, as passages."""
        answer = logged_query(
            self.stores,
            question,
            interface=INTERFACE,
            top_k=top_k or self.top_k,
            doc_types=self.doc_types,
            as_of=self.as_of,
            include_inactive=self.include_inactive,
            mode=self.mode,
        )
        return [Passage(text=hit.text, score=hit.score, metadata=hit_metadata(hit)) for hit in answer.results]


class QueryGovernanceInput(BaseModel):
    question: str = Field(min_length=1, description="The question, in plain words")
    top_k: int = Field(default=5, ge=1, le=20, description="How many passages to return, best first")
    doc_types: list[str] | None = Field(default=None, description="Only these document types, e.g. ['adr']")
    as_of: str | None = Field(default=None, description="ISO date YYYY-MM-DD: the documents in force that day")
    include_inactive: bool = Field(default=False, description="true: every document, whatever its status")


def governance_tool(stores: GovernanceStores, *, mode: Mode = "hybrid") -> StructuredTool:
    def query_governance(
        question: str,
        top_k: int = 5,
        doc_types: list[str] | None = None,
        as_of: str | None = None,
        include_inactive: bool = False,
    ) -> tuple[str, dict[str, Any]]:
        try:
            answer = logged_query(
                stores,
                question,
                interface=INTERFACE,
                top_k=top_k,
                doc_types=doc_types,
                as_of=as_of,
                include_inactive=include_inactive,
                mode=mode,
            )
        except KBError as exc:
            raise ToolException(f"{exc.error_type}: {exc.message}") from exc
        payload = answer.model_dump(mode="json")
        return render_answer(payload), payload

    return StructuredTool.from_function(
        func=query_governance,
        name="query_governance",
        description=TOOL_DESCRIPTION,
        args_schema=QueryGovernanceInput,
        response_format="content_and_artifact",
        handle_tool_error=True,
    )


def create_governance_tool(stores: GovernanceStores | None = None) -> StructuredTool:
    """PRD-0010's name: ``governance_tool`` over ``stores``, or over the stores the environment names."""
    return governance_tool(stores or stores_from_environment())
