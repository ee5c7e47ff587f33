"""``policy-kb tools openai``: the governance MCP tools as OpenAI function definitions (spec 004 F6),
made from the tools' own input schemas (``lib.integrations.openai``), valid for strict mode."""

from __future__ import annotations

import json
from typing import Annotated, Literal

import typer

from deployments.cli.app import app

tools_app = typer.Typer(help="Tool definitions for agent frameworks that do not speak MCP", no_args_is_help=True)
app.add_typer(tools_app, name="tools")


@tools_app.command("openai")
def openai(
    api: Annotated[
        Literal["chat", "responses"],
        typer.Option(help="chat: Chat Completions' tools=[...]; responses: the Responses API's flat form"),
    ] = "chat",
) -> None:
    """Print the governance tools (query_governance, get_governance_document, list_governance_documents) as a
    JSON list of OpenAI function tools with strict: true. Call the MCP tool (or GET /query) with the arguments
    the model returns, as they are: null stands for an argument's default."""
    from lib.integrations.openai import openai_tools
    from mcp_service.governance import governance_tool_list

    typer.echo(json.dumps(openai_tools(governance_tool_list(), api), indent=2))
