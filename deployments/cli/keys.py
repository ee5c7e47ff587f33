"""The keys a local run is served with (decision 0045: no server serves without credentials by default).

``policy-kb up`` and ``policy-kb stack up`` use ``MCP_API_KEY`` and ``KB_MCP_API_KEY`` from the environment when
set, and otherwise make a key for the run and print it; ``policy-kb demo`` prints how to serve and call what it
seeded with a key. A made key is random (``secrets``) and shown once, never logged.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Mapping

import typer

KEY_NAMES = ("MCP_API_KEY", "KB_MCP_API_KEY")
"""The keys a local stack needs: the policy-kb, document-store, governance and REST key; the kb server's."""


def new_key() -> str:
    """A fresh bearer key: 32 random bytes, URL-safe."""
    return secrets.token_urlsafe(32)


def local_keys(environ: Mapping[str, str] = os.environ, names: tuple[str, ...] = KEY_NAMES) -> dict[str, str]:
    """``names`` that the environment leaves unset or empty, each with a new key."""
    return {name: new_key() for name in names if not environ.get(name)}


def print_keys(keys: Mapping[str, str], *, url: str | None = None) -> None:
    """Show the keys made for this run and how a client presents them."""
    for name, key in keys.items():
        typer.echo(f"  {name}={key}   (made for this run; set {name} to choose your own)")
    if url is not None:
        key = keys.get("MCP_API_KEY", "$MCP_API_KEY")
        typer.echo(f'  call with  curl -H "Authorization: Bearer {key}" {url}/api/v1/policies')
        typer.echo(f"  an MCP client: {url}/mcp with the same header")
