"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned in ``.ci/conformance``, with
the Node 22 it needs from npm's ``node`` package) against each of the four servers, twice: the default suite and
``--requirements 2026-07-28``.

Each server is started as a deployment starts it (``python -m mcp_service --servers NAME``) over empty stores in
a temp dir, open on loopback (``ALLOW_UNAUTHENTICATED``: the suite sends no credentials). Every check of every
scenario must pass, except the ones that test the suite's own fixture server: they call tools, resources and
prompts only that server has (``test_simple_text``, ``test://static-text``, ``test_missing_capability``, ...),
listed in ``FIXTURE_ONLY`` with the reason; and the scenarios the requirement set itself does not score
(extensions and pending ones, ``NOT_SCORED``). Exit status 1 on any other failure, which is printed.

    .venv/bin/python .ci/conformance.py [--servers policy-kb,kb]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / ".ci" / "conformance"
SERVERS = {"policy-kb": "POLICY_KB_PORT", "document-store": "DOCUMENT_STORE_PORT", "kb": "KB_MCP_PORT",
           "governance": "GOVERNANCE_PORT"}  # fmt: skip
FIXTURE_ONLY = {
    **dict.fromkeys(
        ["tools-call-image", "tools-call-audio", "tools-call-embedded-resource", "tools-call-mixed-content",
         "tools-call-with-logging", "tools-call-with-progress", "tools-call-sampling", "tools-call-elicitation",
         "elicitation-sep1034-defaults", "elicitation-sep1330-enums", "completion-complete", "logging-set-level"],
        "calls a tool (or a completion, a log level) of the suite's fixture server",
    ),
    **dict.fromkeys(
        ["resources-read-text", "resources-read-binary", "resources-templates-read", "resources-subscribe",
         "resources-unsubscribe"],
        "reads or subscribes to a test:// resource of the fixture server",
    ),
    **dict.fromkeys(
        ["prompts-get-simple", "prompts-get-with-args", "prompts-get-embedded-resource", "prompts-get-with-image"],
        "gets a prompt of the fixture server",
    ),
    **dict.fromkeys(
        [f"input-required-result-{name}" for name in (
            "basic-elicitation", "basic-sampling", "basic-list-roots", "request-state", "multiple-input-requests",
            "multi-round", "non-tool-request", "result-type", "tampered-state", "capability-check")],
        "calls a fixture tool that answers InputRequiredResult",
    ),
    "sep-2575-server-rejects-undeclared-capability": "calls the fixture's diagnostic tool test_missing_capability",
    "sep-2575-missing-capability-http-400": "the same diagnostic tool, over HTTP",
}  # fmt: skip
"""Scenario names or check ids -> why they cannot pass against a real server."""
NOT_SCORED = ("tasks-", "json-schema-2020-12", "http-header-validation", "http-custom-header-server-validation")
"""Scenarios the suite runs but does not score (the tasks extension, which no server offers; pending ones)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start(name: str, data_dir: Path, port: int, log: Path) -> subprocess.Popen[bytes]:
    env = os.environ | {"POLICY_KB_DATA_DIR": str(data_dir), "ALLOW_UNAUTHENTICATED": "true", "HF_HUB_OFFLINE": "1",
                        "POLICY_KB_HOST": "127.0.0.1", SERVERS[name]: str(port)}  # fmt: skip
    with log.open("ab") as out:
        proc = subprocess.Popen([sys.executable, "-m", "mcp_service", "--servers", name], cwd=ROOT, env=env,
                                stdout=out, stderr=subprocess.STDOUT)  # fmt: skip
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"{name} exited with {proc.returncode}; see {log}")
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1) as answer:
                if answer.status == 200:
                    return proc
        except OSError:
            time.sleep(0.5)
    proc.terminate()
    raise SystemExit(f"{name} did not answer /health within 180 s; see {log}")


def failures(results: Path) -> list[str]:
    """Every failed check under ``results`` that is neither fixture-only nor in a scenario not scored."""
    found = []
    for checks in sorted(results.glob("*/checks.json")):
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", checks.parent.name.removeprefix("server-"))
        if scenario in FIXTURE_ONLY or scenario.startswith(NOT_SCORED):
            continue
        for check in json.loads(checks.read_text()):
            if check.get("status") == "FAILURE" and check.get("id") not in FIXTURE_ONLY:
                found.append(f"{scenario}: {check.get('id')}: {check.get('errorMessage', '')}")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--servers", default=",".join(SERVERS))
    args = parser.parse_args()
    subprocess.run(["npm", "ci", "--no-audit", "--no-fund", "--prefix", str(SUITE)], check=True)
    suite = [str(SUITE / "node_modules" / ".bin" / "conformance")]
    path = os.environ | {"PATH": f"{SUITE / 'node_modules' / '.bin'}{os.pathsep}{os.environ['PATH']}"}
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix="conformance-") as folder:
        for name in args.servers.split(","):
            port = free_port()
            proc = start(name, Path(folder) / name, port, Path(folder) / f"{name}.log")
            try:
                for label, extra in (("default", []), ("2026-07-28", ["--requirements", "2026-07-28"])):
                    out = Path(folder) / f"{name}-{label}"
                    url = f"http://127.0.0.1:{port}/mcp"
                    subprocess.run([*suite, "server", "--url", url, "-o", str(out), *extra], env=path,
                                   stdout=subprocess.DEVNULL, check=False)  # fmt: skip
                    found = failures(out)
                    print(f"{name} {label}: {len(list(out.glob('*/checks.json')))} scenarios, "
                          f"{len(found)} unexpected failures")  # fmt: skip
                    problems += [f"{name} {label}: {line}" for line in found]
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    for line in problems:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
