"""The serve command's arguments, one parser for both entry points: ``python -m mcp_service [OPTIONS]`` and
``policy-kb serve [OPTIONS]`` take the same options, answer ``--help`` the same way and refuse anything else with
a usage error (exit 2), so a typo never starts a server with defaults."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from dataclasses import dataclass

from lib.errors import InvalidArgumentError, KBError

DEFAULT_SERVER = "policy-kb"
DEFAULT_STDIO_SERVER = "governance"
SERVERS_HELP = (
    "comma-separated MCP servers, each on its own port: policy-kb (POLICY_KB_PORT, 3003), document-store "
    "(DOCUMENT_STORE_PORT, 3002), kb (KB_MCP_PORT, 3004), governance (GOVERNANCE_PORT, 3005); "
    f"default {DEFAULT_SERVER} ({DEFAULT_STDIO_SERVER} with --stdio)"
)


@dataclass(frozen=True)
class ServeArguments:
    servers: list[str]
    host: str | None
    port: int | None
    stdio: bool


def serve_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Serve MCP servers (/mcp, /sse, /messages/, /health; REST /api/v1) until interrupted, or one "
        "server over stdin/stdout with --stdio. Settings come from the environment (lib/config/).",
        allow_abbrev=False,
    )
    parser.add_argument("--servers", metavar="S[,S...]", help=SERVERS_HELP)
    parser.add_argument("--host", metavar="HOST", help="bind address (default POLICY_KB_HOST, 127.0.0.1)")
    parser.add_argument("--port", metavar="PORT", type=int, help="port of a single server (default: its variable)")
    parser.add_argument(
        "--stdio", action="store_true", help=f"serve one server ({DEFAULT_STDIO_SERVER}) over stdin/stdout"
    )
    return parser


def parse_serve_arguments(argv: Sequence[str], prog: str) -> ServeArguments:
    """``argv`` read by the one parser; ``--help`` exits 0 after printing, anything unknown exits 2."""
    parser = serve_parser(prog)
    parsed = parser.parse_args(list(argv))
    default = DEFAULT_STDIO_SERVER if parsed.stdio else DEFAULT_SERVER
    names = [s.strip() for s in (parsed.servers or default).split(",") if s.strip()]
    if parsed.stdio and (parsed.host is not None or parsed.port is not None):
        parser.error("--host and --port do not apply with --stdio")
    if len(names) > 1 and parsed.port is not None:
        parser.error("--port applies to one server; with several, set each one's port variable")
    return ServeArguments(servers=names, host=parsed.host, port=parsed.port, stdio=parsed.stdio)


def run_serve_command(argv: Sequence[str], prog: str) -> None:
    """Parse ``argv`` and serve; a refused setting (unknown server, --port with several) is a usage error too."""
    from mcp_service.__main__ import check_servers, serve, serve_stdio

    arguments = parse_serve_arguments(argv, prog)
    try:
        check_servers(arguments.servers)  # before anything starts
        if arguments.stdio:
            serve_stdio(servers=arguments.servers)
        else:
            serve(host=arguments.host, port=arguments.port, servers=arguments.servers)
    except InvalidArgumentError as exc:
        serve_parser(prog).error(exc.message)
    except KBError as exc:
        print(f"error ({exc.error_type}): {exc.message}", file=sys.stderr)
        raise SystemExit(2) from None
