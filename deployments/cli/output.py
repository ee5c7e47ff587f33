"""How the CLI prints search results (policies, governance) and seed steps."""

from __future__ import annotations

import textwrap

import typer

from lib.citation import page_citation
from lib.governance.models import GovernanceAnswer
from lib.policies.search import SearchResult
from lib.policies.seeding import SeedStep


def print_result(result: SearchResult, *, width: int = 100) -> None:
    when = f"as of {result.effective_date}" if result.effective_date else "across all revisions"
    typer.secho(f"\nQ: {result.query}  ({when})", bold=True)
    if not result.results:
        typer.echo("  no policy text was in force on that date")
    for rank, hit in enumerate(result.results, start=1):
        typer.echo(
            f"  {rank}. {hit.source} · {hit.version_label} · {hit.section_ref}"
            + (f" (supporting {hit.supports})" if hit.supports else "")
            + f" · {page_citation(hit.page_number, hit.printed_page)}"
            + (f"  (relevance {hit.relevance_score:.2f})" if hit.relevance_score is not None else "")
        )
        print_snippet(hit.text, width)


def print_governance_answer(answer: GovernanceAnswer, *, width: int = 100) -> None:
    typer.secho(f"\nQ: {answer.question}  (governance documents in force on {answer.as_of})", bold=True)
    if not answer.results:
        typer.echo("  no governance document in force matches")
    for rank, hit in enumerate(answer.results, start=1):
        meta = hit.metadata
        typer.echo(
            f"  {rank}. [{meta.id}] {meta.title} · {meta.type} · {meta.status} · {meta.created or 'undated'}"
            f"  (relevance {hit.score:.2f})"
        )
        typer.echo(f"     {meta.file_path} § {meta.heading}")
        print_snippet(hit.text, width)


def print_snippet(text: str, width: int) -> None:
    snippet = " ".join(text.split())
    typer.echo(textwrap.indent(textwrap.fill(snippet[:400] + ("…" if len(snippet) > 400 else ""), width), "     "))


def print_step(step: SeedStep) -> None:
    target = f"{step.source} {step.revision_id or ''}".strip()
    extra = f" ({step.chunks} chunks)" if step.chunks else (f" ({step.detail})" if step.detail else "")
    typer.echo(f"  {step.action.value:<15} {target}{extra}")
