"""``policy-kb``: the command line over the same flows and ``lib`` functions the MCP service and Prefect use.

Commands that change the stores (seed, ingest, reindex, remove, audit) run the Prefect flows in this
process: against ``PREFECT_API_URL`` when set (the runs show in that server's UI), else against
Prefect's local API (about ten seconds to start). Reads (search, revisions) call ``lib`` directly.
"""

from __future__ import annotations

import json
import logging
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import click
import typer

from lib.config import load_settings
from lib.documents.operations import delete_document
from lib.errors import KBError
from lib.kb import KnowledgeBase, open_kb
from lib.policies.search import SearchResult, search_policy
from lib.policies.seeding import SeedStep

if TYPE_CHECKING:
    from flows.seed import SeedResult

SEED_FILE = "deployments/seed/seed.yaml"
T = TypeVar("T")
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
def main_options(
    ctx: typer.Context, verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at INFO")] = False
) -> None:
    configure_logging(verbose)
    ctx.obj = {"verbose": verbose}


def _verbose() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx else None
    return bool(root and isinstance(root.obj, dict) and root.obj.get("verbose"))


def _run_seed(kb: KnowledgeBase, config: str) -> SeedResult:
    """The seed flow with a progress bar per configured revision."""
    from deployments.progress import RevisionProgress, quiet_prefect_console
    from flows.common import bound_kb
    from flows.seed import resolve_seed_config, seed_policies
    from lib.policies.seeding import load_seed_config

    seed_file = load_seed_config(resolve_seed_config(kb, config))
    targets = [(p.source, r.resolved_revision_id(p.source)) for p in seed_file.policies for r in p.revisions]
    quiet_prefect_console(_verbose())
    with bound_kb(kb), RevisionProgress(kb, targets, title=f"Seeding {len(targets)} revisions through the seed flow"):
        result = seed_policies(config=config)
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
        _run_seed(_kb(), config)
    except KBError as exc:
        _fail(exc)


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
    category: Annotated[str, typer.Option(help="Category of a new policy")] = "national_policy",
) -> None:
    """Ingest a policy revision from a PDF on this machine (the ingest flow, in this process)."""
    from flows.ingest import ingest_policy_revision
    from lib.policies.models import PolicyCreate, RevisionCreate

    kb = _kb()
    # The operator named this file on their own machine: allow exactly it, whatever ALLOWED_FILE_ROOTS says.
    kb.settings.allowed_file_roots = [*kb.settings.allowed_file_roots, file.resolve()]
    try:
        if title and not kb.registry.policy_exists(source):
            kb.registry.create_policy(PolicyCreate(source=source, title=title, category=category))
        target = RevisionCreate(revision_id=revision_id, version_label=version_label, effective_from=effective_from)
        result = _run_with_progress(
            kb,
            [(source, target.resolved_revision_id(source))],
            ingest_policy_revision,
            source=source,
            version_label=version_label,
            effective_from=effective_from,
            effective_to=effective_to,
            notes=notes,
            file=str(file.resolve()),
            revision_id=revision_id,
        )
    except KBError as exc:
        _fail(exc)
    chunks = result.outcome.chunks_created if result.outcome else "no new"
    closed = f"; superseded {', '.join(result.superseded)}" if result.superseded else ""
    typer.echo(
        f"{result.source} {result.revision_id}: {result.action.value}, {result.status.value}, {chunks} chunks{closed}"
    )


@app.command()
def reindex(source: str, revision_id: str) -> None:
    """Rebuild a revision's chunks from its stored file (the reindex flow, in this process)."""
    from flows.reindex import reindex_policy_revision

    kb = _kb()
    try:
        result = _run_with_progress(kb, [(source, revision_id)], reindex_policy_revision, source=source,
                                    revision_id=revision_id)  # fmt: skip
    except KBError as exc:
        _fail(exc)
    typer.echo(
        f"{source} {revision_id}: {result.outcome.chunks_created} chunks "
        f"({result.chunks_before} before, {result.outcome.chunks_removed} stale removed)"
    )


@app.command()
def remove(source: str, revision_id: str) -> None:
    """Remove a revision: registry entry, chunks and (unless shared) its file (the remove flow)."""
    from flows.remove import remove_policy_revision

    kb = _kb()
    try:
        removed = _run_with_progress(kb, [], remove_policy_revision, source=source, revision_id=revision_id)
    except KBError as exc:
        _fail(exc)
    typer.echo(
        f"removed {source} {revision_id}: {removed.chunks_removed} chunks, "
        f"file {'deleted' if removed.file_removed else 'kept (shared or absent)'}"
    )


@app.command()
def audit(
    repair: Annotated[bool, typer.Option("--repair", help="Fix what is safe to fix, then audit again")] = False,
) -> None:
    """Compare registry, Chroma and object store (the audit flow); exit 1 if findings remain."""
    from flows.audit import consistency_audit

    kb = _kb()
    try:
        result = _run_with_progress(kb, [], consistency_audit, repair=repair)
    except KBError as exc:
        _fail(exc)
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
    if not result.remaining:
        typer.secho("consistent", fg=typer.colors.GREEN, bold=True)
        return
    typer.secho(f"{result.remaining} findings remain", fg=typer.colors.RED, bold=True)
    raise typer.Exit(code=1)


def _run_with_progress(kb: KnowledgeBase, targets: list[tuple[str, str]], flow: Callable[..., T], **params: Any) -> T:
    """Run a flow in this process on ``kb``, with a bar per revision it works on."""
    from deployments.progress import RevisionProgress, quiet_prefect_console
    from flows.common import bound_kb

    quiet_prefect_console(_verbose())
    with bound_kb(kb):
        if not targets:
            return flow(**params)
        with RevisionProgress(kb, targets):
            return flow(**params)


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


@app.command("delete-document")
def delete_application_document(document_id: str) -> None:
    """Delete an application document everywhere: registry entry, chunks and original file."""
    try:
        removed = delete_document(_kb(), document_id)
    except KBError as exc:
        _fail(exc)
    typer.echo(
        f"deleted {removed.document_id} of {removed.application_ref}: {removed.chunks_removed} chunks, "
        f"file {'removed' if removed.file_removed else 'not found'}"
    )


@app.command()
def demo() -> None:
    """Seed the bundled NPPF revisions through the seed flow and answer one question as of two dates."""
    typer.secho("Seeding the bundled policies (first run: a minute or two; Prefect's local API starts first)…",
                bold=True)  # fmt: skip
    kb = _kb()
    try:
        _run_seed(kb, SEED_FILE)
        for day in DEMO_DATES:
            print_result(search_policy(kb, DEMO_QUESTION, sources=["NPPF"], effective_date=day, n_results=3))
    except KBError as exc:
        _fail(exc)


@app.command()
def serve(
    host: Annotated[str | None, typer.Option(help="Bind address (default POLICY_KB_HOST)")] = None,
    port: Annotated[int | None, typer.Option(help="Port (default POLICY_KB_PORT, 3003)")] = None,
    servers: Annotated[
        str,
        typer.Option(
            help="Comma-separated: policy-kb (POLICY_KB_PORT, 3003), document-store (DOCUMENT_STORE_PORT, 3002)"
        ),
    ] = "policy-kb",
) -> None:
    """Serve the MCP server (/mcp, /sse), the REST API (/api/v1) and /health until interrupted.

    With several --servers, each has its own port with its own /mcp, /sse, /messages/ and /health."""
    from mcp_service.__main__ import serve as run_service

    try:
        run_service(load_settings(), host=host, port=port, servers=[s.strip() for s in servers.split(",") if s.strip()])
    except KBError as exc:
        _fail(exc)


@app.command()
def up(
    servers: Annotated[
        str, typer.Option(help="Comma-separated MCP servers: policy-kb (3003), document-store (3002)")
    ] = "policy-kb,document-store",
) -> None:
    """The embedded stack in the foreground: Redis (started if needed) and the MCP service; prints the URLs."""
    from lib.stores.objects import open_object_store
    from lib.stores.redis_server import ensure_embedded_redis
    from mcp_service.__main__ import check_servers
    from mcp_service.__main__ import serve as run_service

    settings = load_settings()
    try:
        names = check_servers([s.strip() for s in servers.split(",") if s.strip()])
        redis_url = settings.redis_url or ensure_embedded_redis(settings.redis_dir, settings.redis_server_binary)
        objects = open_object_store(settings, create_bucket=True).describe()
    except KBError as exc:
        _fail(exc)
    chroma = str(settings.chroma_persist_dir)
    if settings.chroma_host:
        chroma = f"http://{settings.chroma_host}:{settings.chroma_port}"
    ports = {"policy-kb": settings.policy_kb_port, "document-store": settings.document_store_port}
    typer.secho("policy-kb embedded stack", bold=True)
    typer.echo(f"  redis         {redis_url}")
    typer.echo(f"  chroma        {chroma}")
    typer.echo(f"  object store  {objects}")
    for name in names:
        base = f"http://{settings.host}:{ports[name]}"
        typer.echo(f"  {name:<13} {base}/mcp  (SSE {base}/sse, health {base}/health, REST {base}/api/v1)")
    prefect = settings.prefect_api_url or "none: ingestions run in this process (set PREFECT_API_URL for a server)"
    typer.echo(f"  prefect       {prefect}")
    try:
        run_service(settings, servers=names)
    except KBError as exc:
        _fail(exc)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
