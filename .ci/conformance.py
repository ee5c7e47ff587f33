"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, pinned in ``.ci/conformance``, with
the Node 22 it needs from npm's ``node`` package) against each of the four servers, twice: the default suite and
``--requirements 2026-07-28``.

Each server is started as a deployment starts it (``python -m mcp_service --servers NAME``) over empty stores in
a temp dir, open on loopback (``ALLOW_UNAUTHENTICATED``: the suite sends no credentials). Every check of every
scenario must pass, except the ones that test the suite's own fixture server: they call tools, resources and
prompts only that server has (``test_simple_text``, ``test://static-text``, ``test_missing_capability``, ...),
listed in ``FIXTURE_ONLY`` with the reason; and the scenarios the requirement set itself does not score
(pending ones, ``NOT_SCORED``). The tasks extension's scenarios (``tasks-*``, run with ``--requirements
2026-07-28``) are scored on the servers that offer tasks (``TASK_SERVERS``), and the tasks checks that passed are
printed. Exit status 1 on any other failure, which is printed.

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
    "tools-call-simple-text": "calls the fixture's tool test_simple_text",
    "tools-call-error": "calls the fixture's tool test_error_handling",
    "sep-2575-http-server-no-independent-requests-on-stream": "needs the fixture's tool test_streaming_elicitation",
    "sep-2575-server-no-log-without-loglevel": "needs the fixture's tool test_logging_tool",
    # The tasks extension (SEP-2663), scored on the servers that offer it (TASK_SERVERS). Scored and passing
    # there: tasks-extension-advertised, sep-2663-tasks-methods-non-declaring (-32021 without the extension),
    # sep-2663-tasks-result-removed-method-not-found, tasks-removed-tasks-list (-32601),
    # sep-2663-tasks-get-invalid-task-id-32602, tasks-headers-reject-mismatched-method. The rest drive the
    # fixture's task tools (greet, slow_compute, failing_job, protocol_error_job, confirm_delete, ...); the same
    # behaviour with the real ingestions is tested in tests/mcp_service/test_long_work.py.
    **dict.fromkeys(
        ["tasks-lifecycle", "tasks-wire-fields", "tasks-request-state-removal",
         "sep-2663-server-rejects-undeclared-client", "tasks-per-request-meta-opt-in",
         "tasks-server-directed-creation-no-hint", "sep-2663-legacy-task-param-ignored",
         "tasks-immediate-result-shortcut", "tasks-result-type-complete-on-non-task-responses",
         "sep-2663-durable-create-strong-consistency", "tasks-headers-tolerate-mcp-method-on-tools-call",
         "sep-2663-routing-headers-accepted-on-tasks-get", "sep-2663-server-rejects-mismatched-mcp-name-on-tasks-get"],
        "drives the fixture's task tools (slow_compute, greet, failing_job, protocol_error_job)",
    ),
    **dict.fromkeys(
        ["tasks-mrtr-input", "tasks-mrtr-composition"],
        "a fixture task that asks for input (these servers' tasks never do: tasks/update only acknowledges)",
    ),
    "tasks-required-task-error": "a fixture tool that only runs as a task; every task tool here also answers "
    "synchronously a client without the extension",
}  # fmt: skip
"""Scenario names or check ids -> why they cannot pass against a real server."""
NOT_SCORED = ("json-schema-2020-12", "http-header-validation", "http-custom-header-server-validation")
"""Scenarios the suite runs but does not score (pending ones)."""
TASKS = "tasks-"
TASK_SERVERS = frozenset({"policy-kb", "document-store"})
"""The servers that offer the tasks extension (their ingestions, ``mcp_service.tools.tasks``): the ``tasks-*``
scenarios are scored on them; the kb and governance servers have no long call to make a task of (kb's uploads are
already jobs the kb engine runs), so the scenarios do not apply there."""


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


def failures(results: Path, tasks: bool) -> list[str]:
    """Every failed check under ``results`` that is neither fixture-only nor in a scenario not scored (nor a tasks
    scenario, unless the server offers ``tasks``)."""
    found = []
    for checks in sorted(results.glob("*/checks.json")):
        scenario = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", checks.parent.name.removeprefix("server-"))
        if scenario in FIXTURE_ONLY or scenario.startswith(NOT_SCORED) or (scenario.startswith(TASKS) and not tasks):
            continue
        for check in json.loads(checks.read_text()):
            if check.get("status") == "FAILURE" and check.get("id") not in FIXTURE_ONLY:
                found.append(f"{scenario}: {check.get('id')}: {check.get('errorMessage', '')}")
    return found


def passed_task_checks(results: Path) -> list[str]:
    """The ids of the tasks scenarios' checks that passed (printed, so a scored check cannot silently vanish)."""
    return sorted(
        {
            check.get("id", "")
            for checks in results.glob("server-tasks-*/checks.json")
            for check in json.loads(checks.read_text())
            if check.get("status") == "SUCCESS" and check.get("id") != "wire-schema-valid"
        }
    )


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
                    found = failures(out, name in TASK_SERVERS)
                    print(f"{name} {label}: {len(list(out.glob('*/checks.json')))} scenarios, "
                          f"{len(found)} unexpected failures")  # fmt: skip
                    if name in TASK_SERVERS and (passed := passed_task_checks(out)):
                        print(f"  tasks checks passed: {', '.join(passed)}")
                    problems += [f"{name} {label}: {line}" for line in found]
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    for line in problems:
        print("  " + line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
