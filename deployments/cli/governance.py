"""Governance corpus commands (spec 004): ``policy-kb governance ingest PATH``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deployments.cli.app import app, fail, open_kb_from_env, run_with_progress
from lib.errors import KBError

governance_app = typer.Typer(no_args_is_help=True, help="The governance corpus: ADRs, PRDs, PEPs for agents.")
app.add_typer(governance_app, name="governance")


@governance_app.command("ingest")
def ingest(
    path: Annotated[Path, typer.Argument(help="Folder of governance documents (or one file)", exists=True)],
) -> None:
    """Ingest a folder incrementally: new and changed files chunked and embedded, unchanged skipped, deleted
    ones removed. Exits 1 when some file failed (the others are ingested)."""
    from flows.governance import ingest_governance_corpus

    try:
        kb = open_kb_from_env()
        report = run_with_progress(kb, [], ingest_governance_corpus, path=str(path.resolve()))
    except KBError as exc:
        fail(exc)
    typer.echo(
        f"{len(report.added)} added, {len(report.changed)} changed, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} removed, {len(report.failed)} failed; {report.chunks_written} chunks in "
        f"{report.seconds:.1f} s"
    )
    for failed in report.failed:
        typer.secho(f"failed {failed.file}: {failed.error}", fg=typer.colors.YELLOW, err=True)
    if report.failed:
        raise typer.Exit(code=1)
