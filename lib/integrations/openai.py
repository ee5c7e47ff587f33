"""OpenAI function-calling definitions (spec 004 F6) made from MCP tools' input schemas, so the MCP tools
stay the one source of truth, in the subset OpenAI's strict mode accepts:

- every object lists all its properties in ``required`` and has ``additionalProperties: false``;
- a property the MCP schema left optional becomes nullable (``null`` standing for its default: the
  governance tools accept ``null`` for every optional argument, so the model's arguments go to the MCP
  tool unchanged);
- only keywords strict mode supports are kept (``title``, ``default``, ``minLength`` ... are dropped;
  the descriptions already say what ``null`` means).

Applied recursively: nested objects, array items, ``anyOf`` branches and ``$defs``.
"""

from __future__ import annotations

import copy
import inspect
from typing import Any, Literal

from mcp_types import Tool

SUPPORTED_KEYWORDS = frozenset(
    {
        "type",
        "description",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "enum",
        "const",
        "anyOf",
        "$ref",
        "$defs",
        "pattern",
        "format",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minItems",
        "maxItems",
    }
)
"""Keywords OpenAI's Structured Outputs document for strict schemas."""

Api = Literal["chat", "responses"]


def _is_nullable(schema: dict[str, Any]) -> bool:
    kind = schema.get("type")
    if kind == "null" or (isinstance(kind, list) and "null" in kind):
        return True
    return any(_is_nullable(branch) for branch in schema.get("anyOf", []))


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    if _is_nullable(schema):
        return schema
    if "anyOf" in schema:
        return {**schema, "anyOf": [*schema["anyOf"], {"type": "null"}]}
    if isinstance(schema.get("type"), str) and "enum" not in schema and "$ref" not in schema:
        return {**schema, "type": [schema["type"], "null"]}
    description = schema.get("description")
    branch = {k: v for k, v in schema.items() if k != "description"}
    nullable: dict[str, Any] = {"anyOf": [branch, {"type": "null"}]}
    return {**nullable, "description": description} if description else nullable


def _strict(schema: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in schema.items() if k in SUPPORTED_KEYWORDS}
    if "properties" in out:
        required = set(schema.get("required", []))
        out["properties"] = {
            name: _strict(prop) if name in required else _nullable(_strict(prop))
            for name, prop in schema["properties"].items()
        }
        out["required"] = list(out["properties"])
    if out.get("type") == "object" or "properties" in out:
        out["additionalProperties"] = False
        out.setdefault("properties", {})
        out.setdefault("required", [])
    if isinstance(out.get("items"), dict):
        out["items"] = _strict(out["items"])
    if "anyOf" in out:
        out["anyOf"] = [_strict(branch) for branch in out["anyOf"]]
    if "$defs" in out:
        out["$defs"] = {name: _strict(definition) for name, definition in out["$defs"].items()}
    return out


def strict_parameters(input_schema: dict[str, Any]) -> dict[str, Any]:
    """An MCP tool's ``inputSchema`` as a strict-mode ``parameters`` schema (the input is not changed)."""
    return _strict(copy.deepcopy(input_schema))


def openai_tool(tool: Tool, api: Api = "chat") -> dict[str, Any]:
    """One tool definition: Chat Completions' ``{"type": "function", "function": {...}}`` or the Responses
    API's flat ``{"type": "function", "name", ...}``, with ``strict: true``."""
    function = {
        "name": tool.name,
        "description": inspect.cleandoc(tool.description or ""),
        "parameters": strict_parameters(tool.input_schema),
        "strict": True,
    }
    return {"type": "function", "function": function} if api == "chat" else {"type": "function", **function}


def openai_tools(tools: list[Tool], api: Api = "chat") -> list[dict[str, Any]]:
    return [openai_tool(tool, api) for tool in tools]
