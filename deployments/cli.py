"""``policy-kb``: the command line over the same ``lib`` functions the flows and the MCP service call."""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from pathlib import Path
from typing import Annotated

import typer

from lib.config import load_settings
from lib.errors import KBError
from lib.kb import KnowledgeBase, open_kb
from lib.search import SearchResult, search_policy
from lib.seeding import SeedStep, seed_policies

SEED_FILE = Path(__file__).parent / "seed" / "seed.yaml"
DEMO_QUESTION = "When should development be refused on highways grounds?"
DEMO_DATES = ("2025-06-01", "2099-06-01")

app = typer.Typer(add_completion=False, no_args_is_help=True, help=__doc__)


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )


def _kb() -> KnowledgeBase:
    return open_kb(load_settings())


def _fail(exc: KBError) -> None:
    typer.secho(f"error ({exc.error_type}): {exc.message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)


def print_result(result: SearchResult, *, width: int = 100) -> None:
    when = f"as of {result.effective_date}" if result.effective_date else "across all revisions"
    typer.secho(f"\nQ: {result.query}  ({when})", bold=True)
    if not result.results:
        typer.echo("  no policy text was in force on that date")
    for rank, hit in enumerate(result.results, start=1):
        typer.echo(
            f"  {rank}. {hit.source} · {hit.version_label} · {hit.section_ref} · page {hit.page_number}"
            f"  (relevance {hit.relevance_score:.2f})"
        )
        snippet = " ".join(hit.text.split())
        typer.echo(textwrap.indent(textwrap.fill(snippet[:400] + ("…" if len(snippet) > 400 else ""), width), "     "))


def print_step(step: SeedStep) -> None:
    target = f"{step.source} {step.revision_id or ''}".strip()
    extra = f" ({step.chunks} chunks)" if step.chunks else (f" ({step.detail})" if step.detail else "")
    typer.echo(f"  {step.action.value:<15} {target}{extra}")


@app.callback()
def main_options(verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at INFO")] = False) -> None:
    configure_logging(verbose)


@app.command()
def seed(config: Annotated[Path, typer.Option(help="Seed YAML")] = SEED_FILE) -> None:
    """Register and ingest the policies of a seed file (idempotent)."""
    try:
        seed_policies(_kb(), config, on_step=print_step)
    except KBError as exc:
        _fail(exc)


@app.command()
def search(
    query: str,
    date: Annotated[str | None, typer.Option("--date", help="Answer as of this YYYY-MM-DD")] = None,
    source: Annotated[list[str] | None, typer.Option("--source", help="Policy slug; repeatable")] = None,
    n: Annotated[int, typer.Option("-n", help="Number of results")] = 5,
    as_json: Annotated[bool, typer.Option("--json", help="Print the tool's JSON")] = False,
) -> None:
    """Search policy text, optionally as of a date."""
    try:
        result = search_policy(_kb(), query, sources=source, effective_date=date, n_results=n)
    except KBError as exc:
        _fail(exc)
    if as_json:
        typer.echo(json.dumps(result.model_dump(), indent=2))
    else:
        print_result(result)


@app.command()
def revisions(source: str) -> None:
    """List a policy's revisions, newest first."""
    try:
        for rev in _kb().registry.list_revisions(source):
            end = rev.effective_to.isoformat() if rev.effective_to else "in force"
            typer.echo(
                f"{rev.revision_id:<28} {rev.effective_from} → {end:<10} {rev.status.value:<10} "
                f"{rev.chunk_count:>5} chunks  {rev.version_label}"
            )
    except KBError as exc:
        _fail(exc)


@app.command()
def demo() -> None:
    """Seed the bundled NPPF revisions and answer one question as of two dates."""
    typer.secho("Seeding the bundled policies (first run: about a minute)…", bold=True)
    kb = _kb()
    try:
        seed_policies(kb, SEED_FILE, on_step=print_step)
        for day in DEMO_DATES:
            print_result(search_policy(kb, DEMO_QUESTION, sources=["NPPF"], effective_date=day, n_results=3))
    except KBError as exc:
        _fail(exc)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
