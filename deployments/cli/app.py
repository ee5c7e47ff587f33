"""The Typer application every command module registers on, and what they share: logging, errors, flows."""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable
from typing import Annotated, Any, NoReturn, TypeVar

import click
import typer

from lib.config import load_settings
from lib.errors import KBError
from lib.kb import KnowledgeBase, open_kb

T = TypeVar("T")

app = typer.Typer(add_completion=False, no_args_is_help=True)


def configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.INFO if verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s %(message)s",
        stream=sys.stderr,
    )


def open_kb_from_env() -> KnowledgeBase:
    return open_kb(load_settings())


def fail(exc: KBError) -> NoReturn:
    typer.secho(f"error ({exc.error_type}): {exc.message}", fg=typer.colors.RED, err=True)
    raise typer.Exit(code=2)


@app.callback()
def main_options(
    ctx: typer.Context, verbose: Annotated[bool, typer.Option("--verbose", "-v", help="Log at INFO")] = False
) -> None:
    configure_logging(verbose)
    ctx.obj = {"verbose": verbose}


def verbose() -> bool:
    ctx = click.get_current_context(silent=True)
    root = ctx.find_root() if ctx else None
    return bool(root and isinstance(root.obj, dict) and root.obj.get("verbose"))


def run_with_progress(kb: KnowledgeBase, targets: list[tuple[str, str]], flow: Callable[..., T], **params: Any) -> T:
    """Run a flow in this process on ``kb``, with a bar per revision it works on."""
    from deployments.progress import RevisionProgress, quiet_prefect_console
    from flows.common import bound_kb

    quiet_prefect_console(verbose())
    with bound_kb(kb):
        if not targets:
            return flow(**params)
        with RevisionProgress(kb, targets):
            return flow(**params)
