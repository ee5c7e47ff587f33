"""Both ways to start the service, ``python -m mcp_service`` (its ``main``) and ``policy-kb serve`` (the Typer app
the console script runs), answer ``--help``, refuse unknown arguments with a usage error (exit 2) before starting
anything, and take the same options."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from deployments.cli import app
from mcp_service.__main__ import main

OPTIONS = ("--servers", "--host", "--port", "--stdio")


def run_module(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    captured = capsys.readouterr()
    return int(exited.value.code or 0), captured.out + captured.err


def run_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    with capsys.disabled():
        result = CliRunner().invoke(app, ["serve", *argv])
    return result.exit_code, result.output


RUNNERS = pytest.mark.parametrize("run", [run_module, run_cli], ids=["python -m mcp_service", "policy-kb serve"])


@RUNNERS
def test_help_lists_every_option_and_exits_0(run, capsys: pytest.CaptureFixture[str]) -> None:  # type: ignore[no-untyped-def]
    code, output = run(["--help"], capsys)
    assert code == 0
    assert "usage:" in output
    for option in OPTIONS:
        assert option in output


@RUNNERS
@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--bogus"], "unrecognized arguments: --bogus"),
        (["governance"], "unrecognized arguments: governance"),
        (["--port", "many"], "invalid int value"),
        (["--servers", "policy-kb,nope"], "unknown: nope"),
        (["--servers", "policy-kb,kb", "--port", "4000"], "--port applies to one server"),
        (["--stdio", "--servers", "kb"], "--stdio serves one server"),
        (["--stdio", "--port", "4000"], "do not apply with --stdio"),
    ],
)
def test_a_wrong_argument_is_a_usage_error_before_anything_starts(  # type: ignore[no-untyped-def]
    run, argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, output = run(argv, capsys)
    assert code == 2
    assert "usage:" in output
    assert says in output


def test_both_entry_points_print_the_same_options(capsys: pytest.CaptureFixture[str]) -> None:
    _, module_help = run_module(["--help"], capsys)
    _, cli_help = run_cli(["--help"], capsys)
    assert module_help.split("options:")[1] == cli_help.split("options:")[1]
