"""The Typer application every command module registers on, and what they share: logging, errors, flows."""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Annotated, Any, NoReturn, TypeVar

import click
import typer

from lib.composition import Stores, open_stores
from lib.config import load_settings
from lib.errors import KBError
from lib.logs import configure_logging

T = TypeVar("T")

app = typer.Typer(add_completion=False, no_args_is_help=True)


def open_stores_from_env() -> Stores:
    return open_stores(load_settings())


def fail(exc: KBError) -> NoReturn:
    typer.secho(f"error ({exc.error_type}): {exc.message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)


@app.callback()
def main_options(
    ctx: typer.Context, verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at INFO")] = False
) -> None:
    configure_logging(logging.INFO if verbose else logging.WARNING)
    ctx.obj = {"verbose": verbose}


def verbose() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx else None
    return bool(root and isinstance(root.obj, dict) and root.obj.get("verbose"))


def run_with_progress(stores: Stores, targets: list[tuple[str, str]], flow: Callable[..., T], **params: Any) -> T:
    """Run a flow in this process on ``stores``, with a bar per revision it works on. Prefect's local API is
    started first through ``flows.local_api`` (one process at a time, waited for, retried): if it still will not
    start, the command stops there, before the flow has touched anything."""
    from deployments.progress import RevisionProgress, quiet_prefect_console
    from flows.common import bound_stores
    from flows.local_api import LocalApiStartError, ensure_local_api

    quiet_prefect_console(verbose())
    try:
        ensure_local_api(stores.settings.jobs.local_api_start_timeout_seconds)
    except LocalApiStartError as exc:
        typer.secho(f"error: {exc}; nothing was changed, run the command again", fg=typer.colors.RED, err=True)
        raise typer.Exit(code=2) from exc
    with bound_stores(stores):
        if not targets:
            return flow(**params)
        with RevisionProgress(stores.policies.registry, targets):
            return flow(**params)
