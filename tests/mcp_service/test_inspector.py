"""A third-party client: the MCP Inspector's CLI (Node.js, installed by ``make inspector``) lists the tools
and calls ``search_policy`` against the running service, over both transports, with the bearer header."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.mcp_service.conftest import FULL_KEY, Service

INSPECTOR = Path(__file__).resolve().parents[2] / ".tools" / "inspector" / "node_modules" / ".bin" / "mcp-inspector"


def inspector(url: str, *args: str) -> dict:
    if shutil.which("node") is None or not INSPECTOR.exists():
        pytest.fail("The MCP Inspector is not installed: run `make inspector` (needs Node.js 20+)", pytrace=False)
    done = subprocess.run(
        [str(INSPECTOR), "--cli", url, "--header", f"Authorization: Bearer {FULL_KEY}", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


@pytest.mark.parametrize("endpoint", ["/mcp", "/sse"])
def test_the_mcp_inspector_lists_the_tools_and_searches_as_of_a_date(nppf_service: Service, endpoint: str) -> None:
    url = nppf_service.url + endpoint
    listed = inspector(url, "--method", "tools/list")
    assert {t["name"] for t in listed["tools"]} >= {
        "search_policy",
        "get_policy_section",
        "list_policy_documents",
        "list_policy_revisions",
        "ingest_policy_revision",
        "remove_policy_revision",
    }
    found = inspector(
        url,
        "--method",
        "tools/call",
        "--tool-name",
        "search_policy",
        "--tool-arg",
        "query=When should development be refused on highways grounds?",
        "effective_date=2025-06-01",
        "n_results=3",
    )
    top = found["structuredContent"]["results"][0]
    assert (top["revision_id"], top["section_ref"], top["page_number"]) == ("rev_NPPF_2024_12", "Para 116", 33)
    assert not found.get("isError")
