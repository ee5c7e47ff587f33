"""LangChain (spec 004 F5): the retriever and the tool of ``lib.integrations.langchain`` in process, and the
running server's MCP tools loaded as LangChain tools by ``langchain-mcp-adapters`` (in its own venv, made by
``make langchain-client``: it needs mcp 1.x, this project runs 2.x)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage

from lib.integrations.langchain import GovernanceRetriever, create_governance_tool, governance_tool
from tests.mcp_service.conftest import Service

ROOT = Path(__file__).resolve().parents[2]
CLIENT_PYTHON = ROOT / ".tools" / "langchain-venv" / "bin" / "python"
CLIENT = ROOT / "tests" / "mcp_service" / "clients" / "langchain_mcp_client.py"
QUESTION = "How do I declare the dependencies of a single-file Python script inline?"


def test_the_retriever_gives_documents_with_citations_as_metadata(governance_service: Service) -> None:
    retriever = GovernanceRetriever(stores=governance_service.stores.governance, top_k=2)
    documents = retriever.invoke(QUESTION)
    assert len(documents) == 2 and all(isinstance(d, Document) for d in documents)
    top = documents[0]
    assert top.metadata["id"] == "PEP-0723" and top.metadata["file_path"].endswith("pep-0723.rst")
    assert 0 < top.metadata["score"] <= 1 and top.metadata["replaces"] == ["PEP-0722"]
    dated = GovernanceRetriever(stores=governance_service.stores.governance, top_k=5, as_of="2017-06-01")
    assert "PEP-0513" in {d.metadata["id"] for d in dated.invoke("manylinux platform tag for Linux wheels")}


def test_the_tool_answers_with_citation_text_and_the_answer_as_artifact(governance_service: Service) -> None:
    tool = governance_tool(governance_service.stores.governance)
    assert tool.name == "query_governance"
    assert set(tool.args) == {"question", "top_k", "doc_types", "as_of", "include_inactive"}
    call = {"name": tool.name, "args": {"question": QUESTION, "top_k": 2}, "id": "call-1", "type": "tool_call"}
    message = tool.invoke(call)
    assert isinstance(message, ToolMessage)
    assert message.content.startswith("[PEP-0723] (") and message.artifact["results"][0]["metadata"]["id"] == "PEP-0723"
    refused = tool.invoke({**call, "args": {"question": QUESTION, "as_of": "someday"}})
    assert refused.status == "error" and refused.content.startswith("invalid_date: ")


def test_the_prds_names_work_over_the_stores_the_environment_names(
    governance_service: Service, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PRD-0010 (spec 004) Phase 3: ``GovernanceRetriever()`` with no arguments, ``.query(q, top_k=...)`` giving
    results with ``text``, ``score`` and ``metadata.get('id')``, and ``create_governance_tool()`` whose tool
    takes the question as a string; the collection named as the PRD's configuration names it."""
    settings = governance_service.settings
    for name, value in {
        "REDIS_URL": settings.redis.url or "",
        "POLICY_KB_DATA_DIR": str(settings.paths.data_dir),
        "CHROMA_PERSIST_DIR": str(settings.chroma.persist_dir),
        "CHROMA_COLLECTION": settings.chroma.governance_collection,
        "MODEL_CACHE_DIR": str(settings.embeddings.model_cache_dir),
        "OBJECT_STORE_URL": settings.objects.url or "",
    }.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("CHROMA_GOVERNANCE_COLLECTION", raising=False)
    results = GovernanceRetriever().query(QUESTION, top_k=2)
    assert len(results) == 2
    top = results[0]
    assert top.metadata.get("id") == "PEP-0723" and top.metadata.get("file_path", "").endswith("pep-0723.rst")
    assert 0 < top.score <= 1 and top.text
    tool = create_governance_tool()
    assert tool.name == "query_governance"
    assert tool.invoke(QUESTION).startswith("[PEP-0723] (")


def test_langchain_mcp_adapters_load_the_running_servers_tools_and_query(governance_service: Service) -> None:
    if not CLIENT_PYTHON.exists():
        pytest.fail("langchain-mcp-adapters is not installed: run `make langchain-client`", pytrace=False)
    done = subprocess.run(
        [str(CLIENT_PYTHON), str(CLIENT), f"{governance_service.url}/mcp", QUESTION],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout)
    assert out["tools"] == ["get_governance_document", "list_governance_documents", "query_governance"]
    assert out["args"]["query_governance"] == ["as_of", "doc_types", "include_inactive", "mode", "question", "top_k"]
    text = "".join(block["text"] for block in out["content"] if block.get("type") == "text")
    assert text.startswith("[PEP-0723] (")
    assert out["artifact"]["structured_content"]["results"][0]["metadata"]["id"] == "PEP-0723"
