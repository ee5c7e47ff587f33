"""Each server's tools as it registers them: name and arguments (from the input schema), whether it writes (from
its annotations, as ``registration.write_tools`` reads them), and the first sentence of its description.

The tools are registered exactly as the service registers them (``SERVERS[name].load().register_tools``), over
stores that are never opened: registering a tool reads only the settings, and a table of tools calls none.
"""

from __future__ import annotations

from typing import Any, NoReturn

import anyio
from mcp_types import Tool

from deployments.docs.cells import cell, first_sentence
from lib.config import GROUPS, Settings


class _Unopened:
    """A store the table never opens: any use of it is a bug in the generator."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attribute: str) -> NoReturn:
        raise RuntimeError(f"the tool table does not open stores ({self._name}.{attribute})")


class _SettingsOnly:
    """The stores a server's tools are registered over, with the default settings and nothing opened."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings

    def __getattr__(self, name: str) -> _Unopened:
        return _Unopened(name)


def default_settings() -> Settings:
    """The settings' defaults, whatever this shell's environment says, so the table is the same everywhere."""
    groups: dict[str, Any] = {group: cls.model_construct() for group, cls in GROUPS.items()}
    return Settings.model_construct(**groups)


def registered_tools(server_name: str) -> list[Tool]:
    """The tools server ``server_name`` lists, registered as the service registers them."""
    from mcp_service.__main__ import SERVERS
    from mcp_service.app import new_mcp_server

    server = new_mcp_server(f"{server_name}-docs", "")
    SERVERS[server_name].load().register_tools(server, _SettingsOnly(default_settings()))
    return anyio.run(server.list_tools)


def signature(tool: Tool) -> str:
    """``name(required, optional?)`` from the tool's input schema."""
    schema = tool.input_schema or {}
    required = set(schema.get("required", []))
    names = [name if name in required else f"{name}?" for name in schema.get("properties", {})]
    return f"{tool.name}({', '.join(names)})"


def writes(tool: Tool) -> bool:
    """Whether a read-only key may not call the tool: unless it is annotated ``readOnlyHint``."""
    return tool.annotations is None or tool.annotations.read_only_hint is not True


def tool_table() -> str:
    """The Markdown table of every server's tools, servers in the order the service names them."""
    from mcp_service.__main__ import SERVERS

    rows = ["| server | tool | reads/writes | what it does |", "| --- | --- | --- | --- |"]
    for server_name in SERVERS:
        for tool in sorted(registered_tools(server_name), key=lambda t: t.name):
            kind = "write" if writes(tool) else "read"
            rows.append(
                f"| `{server_name}` | `{cell(signature(tool))}` | {kind} | {first_sentence(tool.description or '')} |"
            )
    return "\n".join(rows) + "\n"
