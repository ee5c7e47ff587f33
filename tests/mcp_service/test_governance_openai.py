"""OpenAI (spec 004 F6): ``policy-kb tools openai`` prints function tools made from the MCP tools' input
schemas, valid for strict mode; arguments a model would produce from them (every property present, the
optional ones null) are accepted by the running server's MCP tool as they are."""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from typer.testing import CliRunner

from deployments.cli import app
from lib.integrations.openai import SUPPORTED_KEYWORDS
from tests.mcp_service.conftest import Service, mcp_session
from tests.mcp_service.tool_names import GOVERNANCE_READS

QUESTION = "How do I declare the dependencies of a single-file Python script inline?"


def printed_tools(*args: str) -> list[dict[str, Any]]:
    result = CliRunner().invoke(app, ["tools", "openai", *args])
    assert result.exit_code == 0, result.output
    tools: list[dict[str, Any]] = json.loads(result.stdout)
    return tools


def assert_strict(schema: dict[str, Any], where: str = "parameters") -> None:
    """OpenAI's strict-mode rules, recursively: known keywords only; every object closed and requiring all
    of its properties."""
    assert set(schema) <= SUPPORTED_KEYWORDS, (where, set(schema) - SUPPORTED_KEYWORDS)
    if schema.get("type") == "object" or "properties" in schema:
        assert schema["additionalProperties"] is False, where
        assert sorted(schema["required"]) == sorted(schema["properties"]), where
    for name, prop in schema.get("properties", {}).items():
        assert_strict(prop, f"{where}.{name}")
    for i, branch in enumerate(schema.get("anyOf", [])):
        assert_strict(branch, f"{where}.anyOf[{i}]")
    if isinstance(schema.get("items"), dict):
        assert_strict(schema["items"], f"{where}[]")
    for name, definition in schema.get("$defs", {}).items():
        assert_strict(definition, f"$defs.{name}")


def nullable(schema: dict[str, Any]) -> bool:
    kinds = schema.get("type")
    return (
        kinds == "null" or (isinstance(kinds, list) and "null" in kinds) or any(map(nullable, schema.get("anyOf", [])))
    )


def test_the_printed_tools_are_strict_function_schemas_of_every_mcp_tool() -> None:
    tools = printed_tools()
    assert {t["function"]["name"] for t in tools} == GOVERNANCE_READS
    for tool in tools:
        assert tool["type"] == "function" and tool["function"]["strict"] is True
        assert len(tool["function"]["description"]) > 60
        parameters = tool["function"]["parameters"]
        assert parameters["type"] == "object"
        assert_strict(parameters)
        jsonschema.Draft202012Validator.check_schema(parameters)
    query = next(t["function"]["parameters"] for t in tools if t["function"]["name"] == "query_governance")
    props = query["properties"]
    assert set(props) == {"question", "top_k", "doc_types", "as_of", "include_inactive", "mode"}
    assert not nullable(props["question"]) and all(nullable(props[name]) for name in set(props) - {"question"})
    responses = printed_tools("--api", "responses")
    assert [t["name"] for t in responses] == [t["function"]["name"] for t in tools]
    assert responses[0]["parameters"] == tools[0]["function"]["parameters"]


@pytest.fixture(scope="module")
def query_function() -> dict[str, Any]:
    """Printed outside the test's event loop, as a user runs the command."""
    return next(t["function"] for t in printed_tools() if t["function"]["name"] == "query_governance")


@pytest.mark.anyio
async def test_arguments_shaped_by_the_schema_are_accepted_by_the_mcp_tool(
    governance_service: Service, query_function: dict[str, Any]
) -> None:
    query = query_function
    arguments = {name: None for name in query["parameters"]["properties"]} | {"question": QUESTION, "top_k": 2}
    jsonschema.validate(arguments, query["parameters"])
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"question": QUESTION}, query["parameters"])  # strict: every property present
    async with mcp_session(governance_service.url, key=None) as session:
        result = await session.call_tool(query["name"], arguments)
    assert not result.is_error
    assert [hit["metadata"]["id"] for hit in result.structured_content["results"]][:1] == ["PEP-0723"]
