"""Policy commands: seed, ingest, reindex, delete, audit (through the flows), search and revisions (``lib``)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from deployments.cli.app import app, fail, open_stores_from_env, run_with_progress, verbose
from deployments.cli.output import print_result, print_step
from lib.composition import Stores
from lib.errors import KBError
from lib.policies.models import PolicyCategory
from lib.policies.search import search_policy

if TYPE_CHECKING:
    from flows.seed import SeedResult

SEED_FILE = "deployments/seed/seed.yaml"


def run_seed(stores: Stores, config: str) -> SeedResult:
    """The seed flow with a progress bar per configured revision. Prefect's local API is started first
    (``flows.local_api``); if it will not start, the same seeding runs without Prefect rather than fail."""
    from deployments.progress import RevisionProgress, quiet_prefect_console
    from flows.common import bound_stores
    from flows.local_api import LocalApiStartError, ensure_local_api
    from flows.seed import SeedResult, resolve_seed_config, seed_policies, summarise
    from lib.policies import seeding

    path = resolve_seed_config(stores.policies, config)
    seed_file = seeding.load_seed_config(path)
    targets = [(p.source, r.resolved_revision_id(p.source)) for p in seed_file.policies for r in p.revisions]
    quiet_prefect_console(verbose())
    try:
        ensure_local_api(stores.settings.jobs.local_api_start_timeout_seconds)
        orchestrated = True
    except LocalApiStartError as exc:
        typer.secho(f"Prefect's local API did not start ({exc}): seeding without Prefect.", fg="yellow")
        orchestrated = False
    how = "through the seed flow" if orchestrated else "without Prefect"
    with (
        bound_stores(stores),
        RevisionProgress(stores.policies.registry, targets, title=f"Seeding {len(targets)} revisions {how}"),
    ):
        if orchestrated:
            result = seed_policies(config=config)
        else:
            steps = seeding.seed_policies(stores.policies, path)
            changed, message = summarise(steps)
            result = SeedResult(config=str(path), steps=steps, changed=changed, message=message)
    for step in result.steps:
        print_step(step)
    typer.secho(result.message, bold=True)
    return result


@app.command()
def seed(
    config: Annotated[
        str, typer.Option(help="Seed YAML: the bundled one, or a file inside ALLOWED_FILE_ROOTS")
    ] = SEED_FILE,
) -> None:
    """Register and ingest the policies of a seed file through the seed flow (idempotent)."""
    try:
        run_seed(open_stores_from_env(), config)
    except KBError as exc:
        fail(exc)


@app.command()
def ingest(
    source: Annotated[str, typer.Argument(help="Policy slug, e.g. NPPF")],
    file: Annotated[Path, typer.Argument(help="The revision's PDF", exists=True, dir_okay=False)],
    version_label: Annotated[str, typer.Option("--label", help="Version label, e.g. 'December 2024'")],
    effective_from: Annotated[str, typer.Option("--from", help="First day in force, YYYY-MM-DD")],
    effective_to: Annotated[str | None, typer.Option("--to", help="Last day in force, YYYY-MM-DD")] = None,
    revision_id: Annotated[str | None, typer.Option(help="Default rev_{SOURCE}_{YYYY}_{MM}")] = None,
    notes: Annotated[str, typer.Option(help="Notes on this revision")] = "",
    title: Annotated[str | None, typer.Option(help="Register the policy with this title if it is new")] = None,
    category: Annotated[PolicyCategory, typer.Option(help="Category of a new policy")] = PolicyCategory.NATIONAL_POLICY,
) -> None:
    """Ingest a policy revision from a PDF on this machine (the ingest flow, in this process)."""
    from flows.ingest import ingest_policy_revision
    from lib.policies.models import RevisionCreate

    stores = open_stores_from_env()
    # The operator named this file on their own machine: allow exactly it, whatever ALLOWED_FILE_ROOTS says.
    stores.settings.files.allowed_roots = [*stores.settings.files.allowed_roots, file.resolve()]
    try:
        target = RevisionCreate(revision_id=revision_id, version_label=version_label, effective_from=effective_from)
        result = run_with_progress(
            stores,
            [(source, target.resolved_revision_id(source))],
            ingest_policy_revision,
            source=source,
            version_label=version_label,
            effective_from=effective_from,
            effective_to=effective_to,
            notes=notes,
            file=str(file.resolve()),
            revision_id=revision_id,
            title=title,
            category=category,
        )
    except KBError as exc:
        fail(exc)
    chunks = result.outcome.chunks_created if result.outcome else "no new"
    closed = f"; superseded {', '.join(result.superseded)}" if result.superseded else ""
    typer.echo(
        f"{result.source} {result.revision_id}: {result.action.value}, {result.status.value}, {chunks} chunks{closed}"
    )
    if result.outcome and result.outcome.reading:
        typer.echo(f"  read: {result.outcome.reading.summary()}")


@app.command()
def reindex(source: str, revision_id: str) -> None:
    """Rebuild a revision's chunks from its stored file (the reindex flow, in this process)."""
    from flows.reindex import reindex_policy_revision

    stores = open_stores_from_env()
    try:
        result = run_with_progress(
            stores, [(source, revision_id)], reindex_policy_revision, source=source, revision_id=revision_id
        )
    except KBError as exc:
        fail(exc)
    typer.echo(
        f"{source} {revision_id}: {result.outcome.chunks_created} chunks "
        f"({result.chunks_before} before, {result.outcome.chunks_removed} stale removed)"
    )


@app.command()
def delete(source: str, revision_id: str) -> None:
    """Delete a revision: registry entry, chunks and (unless shared) its file (the delete flow, as REST DELETE)."""
    from flows.delete import delete_policy_revision

    stores = open_stores_from_env()
    try:
        removed = run_with_progress(stores, [], delete_policy_revision, source=source, revision_id=revision_id)
    except KBError as exc:
        fail(exc)
    typer.echo(
        f"deleted {source} {revision_id}: {removed.chunks_removed} chunks, "
        f"file {'deleted' if removed.file_removed else 'kept (shared or absent)'}"
    )


@app.command()
def audit(
    repair: Annotated[bool, typer.Option("--repair", help="Fix what is safe to fix, then audit again")] = False,
) -> None:
    """Compare registry, Chroma and object store (the audit flow); exit 1 if findings remain."""
    from flows.audit import consistency_audit

    stores = open_stores_from_env()
    try:
        result = run_with_progress(stores, [], consistency_audit, repair=repair)
    except KBError as exc:
        fail(exc)
    before = result.before
    typer.echo(f"checked {before.revisions} revisions, {before.chunks} chunks, {before.files} files")
    for finding in before.findings:
        where = " ".join(part for part in (finding.source, finding.revision_id, finding.key) if part)
        typer.echo(f"  {finding.kind.value:<22} {where}: {finding.detail}")
    for action in result.repairs:
        mark = "repaired" if action.ok else "NOT repaired"
        where = " ".join(part for part in (action.source, action.revision_id, action.key) if part)
        typer.echo(f"  {mark:<12} {action.kind.value} {where}: {action.outcome}")
    documents = result.documents_before
    if documents is not None:
        typer.echo(f"checked {documents.documents} application documents, {documents.chunks} chunks")
        for doc_finding in documents.findings:
            where = " ".join(part for part in (doc_finding.document_id, doc_finding.key) if part)
            typer.echo(f"  {doc_finding.kind.value:<22} {where}: {doc_finding.detail}")
    governance = result.governance_before
    if governance is not None:
        typer.echo(f"checked {governance.documents} governance documents, {governance.chunks} chunks")
        for gov_finding in governance.findings:
            typer.echo(f"  {gov_finding.kind.value:<22} {gov_finding.doc_id}: {gov_finding.detail}")
        for gov_action in result.governance_repairs:
            mark = "repaired" if gov_action.ok else "NOT repaired"
            typer.echo(f"  {mark:<12} {gov_action.kind.value} {gov_action.doc_id}: {gov_action.outcome}")
    if not result.remaining:
        typer.secho("consistent", fg=typer.colors.GREEN, bold=True)
        return
    typer.secho(f"{result.remaining} findings remain", fg=typer.colors.RED, bold=True)
    raise typer.Exit(code=1)


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
        result = search_policy(open_stores_from_env().policies, query, sources=source, effective_date=date, n_results=n)
    except KBError as exc:
        fail(exc)
    if as_json:
        typer.echo(json.dumps(result.model_dump(), indent=2))
    else:
        print_result(result)


@app.command()
def revisions(source: str) -> None:
    """List a policy's revisions, newest first."""
    try:
        for rev in open_stores_from_env().policies.registry.list_revisions(source):
            end = rev.effective_to.isoformat() if rev.effective_to else "in force"
            typer.echo(
                f"{rev.revision_id:<28} {rev.effective_from} → {end:<10} {rev.status.value:<10} "
                f"{rev.chunk_count:>5} chunks  {rev.version_label}"
            )
    except KBError as exc:
        fail(exc)
