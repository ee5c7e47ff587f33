"""Governance corpus commands (spec 004): ``policy-kb governance ingest PATH``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deployments.cli.app import app, fail, open_stores_from_env, run_with_progress
from lib.composition import Stores
from lib.errors import KBError
from lib.governance.models import CorpusIngestReport

governance_app = typer.Typer(no_args_is_help=True, help="The governance corpus: ADRs, PRDs, PEPs for agents.")
app.add_typer(governance_app, name="governance")


@governance_app.command("ingest")
def ingest(
    path: Annotated[Path, typer.Argument(help="Folder of governance documents (or one file)", exists=True)],
) -> None:
    """Ingest a folder incrementally: new and changed files chunked and embedded, unchanged skipped, deleted
    ones removed. Exits 1 when some file failed (the others are ingested)."""
    try:
        report = ingest_folder(open_stores_from_env(), path)
    except KBError as exc:
        fail(exc)
    if report.failed:
        raise typer.Exit(code=1)


def ingest_folder(stores: Stores, path: Path) -> CorpusIngestReport:
    """The governance ingest flow over ``path`` in this process; prints what it did, one line, and each failed file."""
    from flows.governance import ingest_governance_corpus

    report = run_with_progress(stores, [], ingest_governance_corpus, path=str(path.resolve()))
    typer.echo(
        f"{len(report.added)} added, {len(report.changed)} changed, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} removed, {len(report.failed)} failed; {report.chunks_written} chunks in "
        f"{report.seconds:.1f} s"
    )
    for failed in report.failed:
        typer.secho(f"failed {failed.file}: {failed.error}", fg=typer.colors.YELLOW, err=True)
    return report
