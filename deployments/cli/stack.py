"""``policy-kb stack up|down|status``: the distributed shape on one machine, without Docker.

redis-server (AOF), the ChromaDB server, moto's S3 server, the Prefect server, a process worker on the
``policy-kb`` pool with the deployments of ``prefect.yaml`` registered, two policy-kb replicas sharing
them, and the three other MCP servers (document-store, kb in front of replica-a's engine, governance) in one
process; the processes are the lines of ``deployments/stack/Procfile``, kept by supervisord in the background:
one that dies is restarted with backoff while the others keep running.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from deployments.cli.app import app
from deployments.cli.keys import local_keys, print_keys
from deployments.stack.layout import DEFAULT_PORTS, OTHER_SERVERS, StackLayout
from lib.config import load_settings

stack_app = typer.Typer(help=__doc__, no_args_is_help=True, add_completion=False)
app.add_typer(stack_app, name="stack")

DirOption = Annotated[Path | None, typer.Option("--dir", help="Stack folder (default $POLICY_KB_DATA_DIR/stack)")]


def _directory(directory: Path | None) -> Path:
    return (directory or load_settings().paths.data_dir / "stack").resolve()


def print_status(directory: Path) -> bool:
    """Print one row per process; True when every process is healthy."""
    from deployments.stack.manager import status, supervisor_pid

    rows = status(directory)
    pid = supervisor_pid(directory)
    typer.secho(f"policy-kb stack in {directory} (supervisord pid {pid or '-'})", bold=True)
    typer.echo(
        f"  {'process':<10} {'pid':>8} {'port':>6} {'RSS MB':>7}  {'state':<8} {'restarts':>8}  "
        f"{'last exit':<20} health"
    )
    for row in rows:
        mark = "up  " if row.health.ok else "DOWN"
        rss = f"{row.rss_mb:.0f}" if row.rss_mb is not None else "-"
        detail = row.health.detail + (f" ({row.spawn_error})" if row.spawn_error and not row.health.ok else "")
        typer.echo(
            f"  {row.name:<10} {row.pid or '-':>8} {row.port or '-':>6} {rss:>7}  {row.state:<8} {row.restarts:>8}  "
            f"{row.last_exit or '-':<20} {mark} {detail}"
        )
    return all(row.health.ok for row in rows)


@stack_app.command("up")
def stack_up(
    directory: DirOption = None,
    free_ports: Annotated[
        bool, typer.Option("--free-ports", help=f"Pick free ports instead of the defaults {DEFAULT_PORTS}")
    ] = False,
) -> None:
    """Start every process in the background and wait until all are healthy (a minute or two)."""
    from deployments.stack.manager import up

    folder = _directory(directory)
    made = local_keys()  # every server of the stack serves with a key (decision 0045)
    layout = StackLayout.with_free_ports(folder, made) if free_ports else StackLayout(folder, extra_env=made)
    typer.echo(f"starting the stack in {folder} (logs: {layout.logs})…")
    try:
        up(layout)
    except (RuntimeError, TimeoutError) as exc:
        typer.secho(f"error: {exc}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=1) from exc
    print_status(folder)
    urls = ", ".join(f"{u}/mcp" for u in [*layout.replica_urls(), *(layout.url(n) for n in OTHER_SERVERS)])
    typer.echo(f"\nMCP: {urls}   Prefect UI: {layout.url('prefect')}   env: {folder / 'stack.env'}")
    print_keys(made, url=layout.url("replica-a"))


@stack_app.command("down")
def stack_down(directory: DirOption = None) -> None:
    """Stop every process of the stack and whatever they started."""
    from deployments.stack.manager import down

    folder = _directory(directory)
    stopped = down(folder)
    typer.echo(f"stack in {folder} stopped" + (f" ({len(stopped)} stragglers stopped)" if stopped else ""))


@stack_app.command("status")
def stack_status(directory: DirOption = None) -> None:
    """Each process with its pid, port, memory, supervisord state, restarts, last exit and health; exit 1
    unless all are healthy."""
    folder = _directory(directory)
    if not (folder / "stack.json").exists():
        typer.secho(f"no stack was set up in {folder}", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=1)
    if not print_status(folder):
        raise typer.Exit(code=1)
