"""The governance server over stdio (spec 004, for Claude Code): started as a subprocess by its two commands,
spoken to through stdin/stdout. The SDK's stdio client lists the tools and gets an answer; a raw session
checks that stdout carries nothing but protocol lines while the logs (the JSON query line included) go to
stderr."""

from __future__ import annotations

import hashlib
import json
import select
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from tests.conftest import free_port
from tests.mcp_service.conftest import INITIALIZE, Service, service_env
from tests.mcp_service.tool_names import GOVERNANCE_READS

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "How do I declare the dependencies of a single-file Python script inline?"
REPLY_TIMEOUT_S = 120


def stdio_env(service: Service) -> dict[str, str]:
    env = service_env(
        service.settings, free_port(), CHROMA_GOVERNANCE_COLLECTION=service.settings.chroma.governance_collection
    )
    env.pop("MCP_API_KEY")
    return env


def query_log_lines(stderr: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stderr.splitlines() if line.startswith('{"timestamp"')]


@pytest.mark.anyio
async def test_python_m_mcp_service_stdio_lists_the_tools_and_answers(governance_service: Service) -> None:
    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "mcp_service", "--stdio"],
        env=stdio_env(governance_service),
        cwd=ROOT,
    )
    with tempfile.TemporaryFile("w+") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = {t.name for t in (await session.list_tools()).tools}
            result = await session.call_tool("query_governance", {"question": QUESTION, "top_k": 2})
        errlog.seek(0)
        stderr = errlog.read()
    assert tools == GOVERNANCE_READS
    assert not result.is_error and result.structured_content["results"][0]["metadata"]["id"] == "PEP-0723"
    assert result.content[0].text.startswith("[PEP-0723] (")
    [line] = query_log_lines(stderr)
    assert line["interface"] == "stdio" and line["results"] == 2 and line["outcome"] == "ok"
    assert line["question_sha256"] == hashlib.sha256(QUESTION.encode()).hexdigest() and "question" not in line


def _reply(proc: subprocess.Popen[str]) -> dict[str, Any]:
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], REPLY_TIMEOUT_S)
    assert ready, "no reply on stdout"
    line = proc.stdout.readline()
    assert line, f"the server exited with {proc.poll()}"
    message: dict[str, Any] = json.loads(line)
    assert message["jsonrpc"] == "2.0"
    return message


def test_policy_kb_serve_stdio_writes_only_protocol_to_stdout(governance_service: Service) -> None:
    command = [sys.executable, "-m", "deployments.cli", "--verbose", "serve", "--stdio", "--servers", "governance"]
    with tempfile.TemporaryFile("w+") as errlog:
        proc = subprocess.Popen(
            command,
            cwd=ROOT,
            env=stdio_env(governance_service),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=errlog,
            text=True,
            bufsize=1,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            proc.stdin.write(json.dumps(INITIALIZE) + "\n")
            assert _reply(proc)["result"]["serverInfo"]["name"] == "governance-rag"
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}) + "\n")
            call = {"name": "query_governance", "arguments": {"question": QUESTION, "top_k": 1}}
            proc.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call}) + "\n")
            answer = _reply(proc)["result"]
            assert answer["structuredContent"]["results"][0]["metadata"]["id"] == "PEP-0723"
            proc.stdin.close()
            returncode = proc.wait(timeout=60)
            rest_of_stdout = proc.stdout.read()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            proc.stdout.close()
        errlog.seek(0)
        stderr = errlog.read()
    assert returncode == 0, stderr[-2000:]
    assert rest_of_stdout == ""
    assert " INFO " in stderr  # --verbose logging went to stderr, not to the wire
    assert [line["interface"] for line in query_log_lines(stderr)] == ["stdio"]
