"""The governance tools (spec 004 F1/F2) through the SDK client over Streamable HTTP and SSE, against the
running server over real PEPs: citations, documents in force today and on another day, the chains an agent
follows, the bounds of top_k, and the index_not_built error (NF3)."""

from __future__ import annotations

import pytest
from mcp_types import TextContent

from tests.mcp_service.conftest import Service, mcp_session
from tests.mcp_service.tool_names import GOVERNANCE_READS
from tests.mcp_service.tools import text_is_a_rendering

SCRIPT_QUESTION = "How do I declare the dependencies of a single-file Python script inline?"
MANYLINUX_QUESTION = "Which manylinux platform tag should a Linux wheel use?"


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_the_tools_are_listed_read_only_with_described_bounded_arguments(
    governance_service: Service, transport: str
) -> None:
    async with mcp_session(governance_service.url, key=None, transport=transport) as session:
        assert session.server_info is not None and session.server_info.name == "governance-rag"  # spec 004 PRD
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == GOVERNANCE_READS
        for tool in tools.values():
            assert tool.annotations.read_only_hint is True, tool.name
            assert tool.output_schema is not None, tool.name
            for name, prop in tool.input_schema["properties"].items():
                assert prop.get("description"), (tool.name, name)
        query = tools["query_governance"].input_schema
        assert query["required"] == ["question"]
        top_k = query["properties"]["top_k"]  # published compact: a nullable integer (tools.schemas)
        assert (top_k["type"], top_k["minimum"], top_k["maximum"], top_k["default"]) == (["integer", "null"], 1, 20, 5)


@pytest.mark.anyio
async def test_query_governance_answers_with_citations_from_the_document_in_force(governance_service: Service) -> None:
    async with mcp_session(governance_service.url, key=None) as session:
        result = await session.call_tool("query_governance", {"question": SCRIPT_QUESTION, "top_k": 3})
    assert not result.is_error
    answer = result.structured_content
    assert (answer["status"], answer["question"], answer["top_k"]) == ("success", SCRIPT_QUESTION, 3)
    assert 1 <= len(answer["results"]) <= 3
    top = answer["results"][0]
    assert set(top) >= {"text", "score", "metadata"}
    assert top["metadata"]["id"] == "PEP-0723" and top["metadata"]["status"] == "Final"
    assert top["metadata"]["replaces"] == ["PEP-0722"]
    text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
    assert text.startswith(f"[PEP-0723] ({top['metadata']['file_path']}) {top['score']:.3f}\n")
    assert text.count("\n---\n") == len(answer["results"]) - 1
    assert f'> title: "{top["metadata"]["title"]}"' in text


@pytest.mark.anyio
async def test_a_rejected_or_superseded_document_is_found_only_when_inactive_ones_are_asked_for(
    governance_service: Service,
) -> None:
    async with mcp_session(governance_service.url, key=None) as session:
        today = await session.call_tool("query_governance", {"question": MANYLINUX_QUESTION, "top_k": 20})
        everything = await session.call_tool(
            "query_governance", {"question": MANYLINUX_QUESTION, "top_k": 20, "include_inactive": True}
        )
    ids_today = {hit["metadata"]["id"] for hit in today.structured_content["results"]}
    assert "PEP-0600" in ids_today and not ids_today & {"PEP-0513", "PEP-0722"}
    hits = {hit["metadata"]["id"]: hit["metadata"] for hit in everything.structured_content["results"]}
    assert hits["PEP-0513"]["status"] == "Superseded" and hits["PEP-0513"]["superseded_by"] == ["PEP-0600"]


@pytest.mark.anyio
async def test_as_of_a_day_before_the_successor_finds_the_document_then_in_force(governance_service: Service) -> None:
    async with mcp_session(governance_service.url, key=None) as session:
        in_2017 = await session.call_tool("query_governance", {"question": MANYLINUX_QUESTION, "as_of": "2017-06-01"})
        in_2023 = await session.call_tool(
            "query_governance", {"question": SCRIPT_QUESTION, "as_of": "2023-07-25", "top_k": 20}
        )
    assert in_2017.structured_content["as_of"] == "2017-06-01"
    ids_2017 = {hit["metadata"]["id"] for hit in in_2017.structured_content["results"]}
    assert "PEP-0513" in ids_2017 and "PEP-0600" not in ids_2017
    assert "PEP-0723" not in {hit["metadata"]["id"] for hit in in_2023.structured_content["results"]}


@pytest.mark.anyio
async def test_null_arguments_mean_their_defaults_and_bad_ones_are_refused_in_the_envelope(
    governance_service: Service,
) -> None:
    async with mcp_session(governance_service.url, key=None) as session:
        nulls = {"top_k": None, "doc_types": None, "as_of": None, "include_inactive": None, "mode": None}
        defaulted = await session.call_tool("query_governance", {"question": SCRIPT_QUESTION, **nulls})
        too_many = await session.call_tool("query_governance", {"question": SCRIPT_QUESTION, "top_k": 21})
        bad_date = await session.call_tool("query_governance", {"question": SCRIPT_QUESTION, "as_of": "2023-13-40"})
    assert not defaulted.is_error
    assert (defaulted.structured_content["top_k"], defaulted.structured_content["mode"]) == (5, "hybrid")
    assert too_many.is_error and too_many.structured_content["error_type"] == "invalid_argument"
    assert bad_date.is_error and bad_date.structured_content["error_type"] == "invalid_date"


@pytest.mark.anyio
async def test_an_agent_follows_a_chain_with_the_document_tools(governance_service: Service) -> None:
    async with mcp_session(governance_service.url, key=None) as session:
        superseded = await session.call_tool("list_governance_documents", {"status": "Superseded"})
        standards = await session.call_tool("list_governance_documents", {"doc_types": ["standards-track"]})
        successor = await session.call_tool("get_governance_document", {"id": "PEP-0600"})
        missing = await session.call_tool("get_governance_document", {"id": "PEP-9999"})
    assert [d["id"] for d in superseded.structured_content["documents"]] == ["PEP-0513"]
    assert {d["id"] for d in standards.structured_content["documents"]} == {"PEP-0600", "PEP-0722", "PEP-0723"}
    document = successor.structured_content["document"]
    assert (successor.structured_content["status"], document["status"]) == ("success", "Final")
    assert "manylinux" in document["text"] and "PEP-0513" in document["replaces"]
    text_is_a_rendering(successor.content[0].text, successor.structured_content)
    assert missing.is_error and missing.structured_content["error_type"] == "document_not_found"


@pytest.mark.anyio
async def test_an_empty_index_answers_index_not_built_naming_the_command(empty_governance_service: Service) -> None:
    async with mcp_session(empty_governance_service.url, key=None) as session:
        result = await session.call_tool("query_governance", {"question": SCRIPT_QUESTION})
    assert result.is_error
    assert result.structured_content["error_type"] == "index_not_built"
    assert "policy-kb governance ingest PATH" in result.structured_content["message"]
