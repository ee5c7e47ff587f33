"""Running things: the demo, the MCP service, and the embedded stack in the foreground."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from pydantic import SecretStr

from deployments.cli.app import app, fail, open_stores_from_env
from deployments.cli.governance import ingest_folder
from deployments.cli.keys import local_keys, new_key, print_keys
from deployments.cli.output import print_governance_answer, print_result
from deployments.cli.policies import SEED_FILE, run_seed
from lib.composition import Stores
from lib.config import load_settings
from lib.errors import KBError
from lib.policies.search import search_policy

DEMO_QUESTION = "When should development be refused on highways grounds?"
DEMO_DATES = ("2025-06-01", "2099-06-01")
DECISIONS = Path(__file__).resolve().parents[2] / "docs" / "decisions"
"""The project's own decision records (MADR), which the demo ingests as a governance corpus."""
DECISION_QUESTION = "Why is there a search lane?"


@app.command()
def demo() -> None:
    """Seed the bundled NPPF revisions through the seed flow and answer one question as of two dates; then
    ingest the project's decision records as a governance corpus and ask them why there is a search lane."""
    typer.secho(
        "Seeding the bundled policies (first run: a minute or two; Prefect's local API starts first)…", bold=True
    )
    try:
        stores = open_stores_from_env()
        run_seed(stores, SEED_FILE)
        for day in DEMO_DATES:
            print_result(
                search_policy(stores.policies, DEMO_QUESTION, sources=["NPPF"], effective_date=day, n_results=3)
            )
        answer_from_decisions(stores)
    except KBError as exc:
        fail(exc)
    print_serving_hint()


def print_serving_hint() -> None:
    """How to serve what the demo seeded: every server needs a key (decision 0045); one is made if none is set."""
    key = os.environ.get("MCP_API_KEY") or new_key()
    settings = load_settings()
    base = f"http://{settings.service.host}:{settings.service.policy_kb_port}"
    typer.secho("\nServe it to agents (MCP at /mcp, REST at /api/v1, the web page at /ui) with a key:", bold=True)
    typer.echo(f"  MCP_API_KEY={key} policy-kb serve")
    typer.echo(f'  curl -H "Authorization: Bearer {key}" {base}/api/v1/policies')
    typer.echo(f'  an MCP client: {base}/mcp with the header "Authorization: Bearer {key}"')


def answer_from_decisions(stores: Stores) -> None:
    """``policy-kb governance ingest docs/decisions`` (unchanged records are skipped), then ``query_governance``."""
    from lib.governance.search import query_governance

    typer.secho("\nIngesting this project's decision records (docs/decisions) as a governance corpus…", bold=True)
    ingest_folder(stores, DECISIONS)
    print_governance_answer(query_governance(stores.governance, DECISION_QUESTION, top_k=1))


@app.command(context_settings={"allow_extra_args": True, "ignore_unknown_options": True}, add_help_option=False)
def serve(ctx: typer.Context) -> None:
    """Serve MCP servers (/mcp, /sse), the REST API (/api/v1) and /health until interrupted; --help for options.

    [--servers S[,S...]] [--host H] [--port P] [--stdio]: the options of ``python -m mcp_service``, read by the
    same parser. With several --servers, each has its own port with its own /mcp, /sse, /messages/ and /health.
    With --stdio, one server speaks MCP over stdin/stdout (nothing else is written to stdout)."""
    from mcp_service.arguments import run_serve_command

    run_serve_command(ctx.args, prog="policy-kb serve")


@app.command()
def up(
    servers: Annotated[
        str, typer.Option(help="Comma-separated MCP servers: policy-kb (3003), document-store (3002)")
    ] = "policy-kb,document-store",
) -> None:
    """The embedded stack in the foreground: Redis (started if needed) and the MCP service; prints the URLs."""
    from lib.stores.objects import open_object_store
    from lib.stores.redis_server import redis_location
    from mcp_service.__main__ import SERVERS, check_servers
    from mcp_service.__main__ import serve as run_service

    settings = load_settings()
    made = {} if settings.service.allow_unauthenticated else local_keys()
    if made:
        settings = settings.replace(**{name.lower(): SecretStr(key) for name, key in made.items()})
    try:
        names = check_servers([s.strip() for s in servers.split(",") if s.strip()])
        redis_url = redis_location(settings)
        objects = open_object_store(settings.objects, create_bucket=True).describe()
    except KBError as exc:
        fail(exc)
    chroma = str(settings.chroma.persist_dir)
    if settings.chroma.host:
        chroma = f"http://{settings.chroma.host}:{settings.chroma.port}"
    typer.secho("policy-kb embedded stack", bold=True)
    typer.echo(f"  redis         {redis_url}")
    typer.echo(f"  chroma        {chroma}")
    typer.echo(f"  object store  {objects}")
    for name in names:
        base = f"http://{settings.service.host}:{SERVERS[name].port(settings)}"
        typer.echo(f"  {name:<13} {base}/mcp  (SSE {base}/sse, health {base}/health, REST {base}/api/v1)")
    prefect = settings.jobs.prefect_api_url or "none: ingestions run in this process (set PREFECT_API_URL for a server)"
    typer.echo(f"  prefect       {prefect}")
    print_keys(made, url=f"http://{settings.service.host}:{settings.service.policy_kb_port}")
    try:
        run_service(settings, servers=names)
    except KBError as exc:
        fail(exc)
