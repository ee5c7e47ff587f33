"""The held-out hostile check (issue 46): fire hostile input at running servers over HTTP and print a table of
checks, each PASS or FAIL with what went wrong; exit 1 when any fails.

Start the servers as a user does, then point the check at them::

    MCP_API_KEY=... MCP_READ_API_KEY=... KB_MCP_API_KEY=... POLICY_KB_DATA_DIR=/tmp/h \\
        .venv/bin/policy-kb serve --servers policy-kb,document-store,kb,governance > /tmp/h/serve.log 2>&1 &
    .venv/bin/python -m benchmarks.hostile --url policy-kb=http://127.0.0.1:3003 --url document-store=... \\
        --url kb=... --url governance=... --key $MCP_API_KEY --read-key $MCP_READ_API_KEY --kb-key $KB_MCP_API_KEY \\
        --inbox /tmp/h/inbox --log /tmp/h/serve.log

Groups (``--only``): body, protocol, auth, types, dates, size, paths, missing, gaps (with concurrent PATCHes
and the planted-PDF content check), sessions, logs. The registry, Chroma and the object store must agree at the
end (the deep health's consistency). It writes throwaway policies ``HOSTILE_*`` with revisions, deleted
revisions, failed uploads, kb notes and uploads: run it against a scratch data directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import httpx

from benchmarks.hostile import arguments, sessions, state, transport
from benchmarks.hostile.client import SERVERS, Report, Target

GROUPS = ("body", "protocol", "auth", "types", "dates", "size", "paths", "missing", "gaps", "sessions", "logs")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.hostile", description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", action="append", default=[], help="SERVER=URL for each of " + ", ".join(SERVERS))
    parser.add_argument("--key", required=True, help="MCP_API_KEY (the full key)")
    parser.add_argument("--read-key", help="MCP_READ_API_KEY")
    parser.add_argument("--kb-key", required=True, help="KB_MCP_API_KEY")
    parser.add_argument("--governance-key", help="GOVERNANCE_API_KEY, when set apart")
    parser.add_argument("--inbox", help="the servers' ALLOWED_FILE_ROOTS folder (traversal from inside it)")
    parser.add_argument("--log", action="append", default=[], type=Path, help="a server log to search for keys")
    parser.add_argument("--sessions", type=int, default=300, help="concurrent legacy SSE sessions")
    parser.add_argument("--slow", type=int, default=50, help="slow bodies held open at once")
    parser.add_argument("--huge", action="store_true", help="also 20 MB single arguments to every string argument")
    parser.add_argument("--only", help="comma-separated groups, default all")
    parser.add_argument("--failures", action="store_true", help="print only the failed checks")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    options = parse(argv)
    urls = dict(item.split("=", 1) for item in options.url)
    if missing := [s for s in SERVERS if s not in urls]:
        sys.exit(f"--url missing for {', '.join(missing)}")
    target = Target(urls, options.key, options.read_key, options.kb_key, options.governance_key)
    groups = set(options.only.split(",")) if options.only else set(GROUPS)
    report = Report()
    with httpx.Client(timeout=target.timeout) as client:
        if "body" in groups:
            transport.check_bodies(report, target, client)
        if "protocol" in groups:
            transport.check_protocol(report, target, client)
        if "auth" in groups:
            transport.check_auth(report, target, client)
        if groups & {"types", "dates", "size"}:
            arguments.check_tool_arguments(report, target, client, options.huge)
            arguments.check_rest_fields(report, target, client)
        if "paths" in groups:
            arguments.check_traversal(report, target, client, options.inbox)
        if "missing" in groups:
            state.check_missing(report, target, client)
        if "gaps" in groups:
            state.check_gaps_and_content(report, target, client)
            state.check_concurrent_patches(report, target, client)
            state.check_document_marking(report, target, client, options.inbox)
        if "sessions" in groups:
            sessions.check_sessions(report, target, options.sessions, options.slow)
        report.run(
            "stores", "policy-kb", "registry, Chroma and object store agree", lambda: consistency(client, target)
        )
    if "logs" in groups:
        state.check_logs(report, target, options.log)
    return print_table(report, options.failures)


def consistency(client: httpx.Client, target: Target) -> str | None:
    health = client.get(target.urls["policy-kb"] + "/api/v1/health", headers=target.auth("policy-kb")).json()
    found = health.get("consistency") or {}
    return None if found.get("ok") and found.get("complete") else f"deep health: {str(found)[:250]}"


def print_table(report: Report, failures_only: bool) -> int:
    rows = [r for r in report.results if not (failures_only and r.ok)]
    width = max((len(r.check) for r in rows), default=10)
    print(f"{'group':9} {'server':15} {'check':{width}} result")
    for r in rows:
        print(f"{r.group:9} {r.server:15} {r.check:{width}} {'PASS' if r.ok else 'FAIL  ' + r.detail}")
    failed = sum(not r.ok for r in report.results)
    print(f"\n{len(report.results)} checks, {len(report.results) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
