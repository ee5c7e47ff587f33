"""The tool schemas as ``tools/list`` publishes them: the SDK's, made compact without changing what they accept.

Pydantic's JSON Schema carries a generated ``title`` on every property and model, spells an optional field
``anyOf: [{type: X}, {type: null}]`` with ``default: null``, and repeats a model's docstring as its
``description``. Every session pays for them in context before its first question. ``compact`` drops the
generated titles and null defaults and writes ``type: [X, "null"]``; an output schema is published as its
``outline`` (its own fields typed, a nested model as ``object``, no descriptions: the tool's description names
the fields a caller cites). The validation the SDK applies is the pydantic model's, unchanged; a client
validating a result against the published schema checks its top-level shape. ``CompactToolList`` is the server
middleware that publishes the compact form, computed once per server (the tools never change once registered).
"""

from __future__ import annotations

from typing import Any

from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

SCHEMA_MAPS = frozenset({"properties", "$defs", "definitions", "patternProperties"})
"""Keys whose value maps names to schemas: a ``title`` there is a property's name, not an annotation."""


def compact(schema: Any) -> Any:
    """``schema`` without generated titles and null defaults, its nullable unions as type lists."""
    if isinstance(schema, list):
        return [compact(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "title" and isinstance(value, str):
            continue
        if key == "default" and value is None:
            continue
        if key in SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: compact(sub) for name, sub in value.items()}
        else:
            out[key] = compact(value)
    return _nullable(out)


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    """``anyOf: [{type: X, ...}, {type: null}]`` as ``{type: [X, "null"], ...}`` (X a single type)."""
    options = schema.get("anyOf")
    if not isinstance(options, list) or len(options) != 2 or {"type": "null"} not in options:
        return schema
    other = next(option for option in options if option != {"type": "null"})
    if not isinstance(other, dict) or not isinstance(other.get("type"), str):
        return schema
    merged = {key: value for key, value in schema.items() if key != "anyOf"}
    for key, value in other.items():
        merged.setdefault(key, value)
    merged["type"] = [other["type"], "null"]
    if "enum" in merged and None not in merged["enum"]:
        merged["enum"] = [*merged["enum"], None]
    return merged


class CompactToolList:
    """Server middleware: ``tools/list`` answers with every tool's schemas ``compact``."""

    def __init__(self) -> None:
        self._tools: dict[tuple[str, ...], list[dict[str, Any]]] = {}

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method != "tools/list" or not isinstance(result, dict) or not isinstance(result.get("tools"), list):
            return result
        names = tuple(str(tool.get("name")) for tool in result["tools"])
        if names not in self._tools:
            self._tools[names] = [compact_tool(tool) for tool in result["tools"]]
        return {**result, "tools": self._tools[names]}


def outline(schema: Any, defs: dict[str, Any] | None = None) -> Any:
    """An output schema's outline: its own properties with their types, a nested model as ``object``, an enum
    (or any other non-object definition) as itself, and no descriptions (the tool's description says what the
    fields a caller cites mean). ``defs`` are the root's ``$defs``, which references point into."""
    if defs is None and isinstance(schema, dict):
        defs = schema.get("$defs") or {}
    if isinstance(schema, list):
        return [outline(item, defs) for item in schema]
    if not isinstance(schema, dict):
        return schema
    if "$ref" in schema:
        target = (defs or {}).get(str(schema["$ref"]).rsplit("/", 1)[-1], {})
        if isinstance(target, dict) and target.get("type") not in (None, "object") and "$ref" not in target:
            return outline({k: v for k, v in target.items() if k != "title"}, defs)
        return {"type": "object"}
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in ("$defs", "description"):
            continue
        if key == "properties":
            out[key] = {name: outline(sub, defs) for name, sub in value.items()}
        else:
            out[key] = outline(value, defs)
    return out


def compact_tool(tool: dict[str, Any]) -> dict[str, Any]:
    """One wire tool with its ``inputSchema`` compact and its ``outputSchema`` a compact outline."""
    out = dict(tool)
    if isinstance(tool.get("inputSchema"), dict):
        out["inputSchema"] = compact(tool["inputSchema"])
    if isinstance(tool.get("outputSchema"), dict):
        out["outputSchema"] = compact(outline(tool["outputSchema"]))
    return out
