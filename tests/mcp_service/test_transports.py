"""Both MCP transports end to end, the routes FR-009 names, the service's two start commands, and SSE
sessions spread over two replicas."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from mcp_types import TextContent

from mcp_service.policy_kb import create_app
from tests.conftest import free_port
from tests.mcp_service.conftest import (
    INITIALIZE,
    MCP_HEADERS,
    Service,
    bearer,
    mcp_session,
    running,
    service_env,
    sse_events,
    wait_healthy,
)
from tests.mcp_service.test_metrics import parse
from tests.mcp_service.tool_names import POLICY_READS, POLICY_WRITES
from tests.mcp_service.tools import text_is_a_rendering
from tests.polling import eventually

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.anyio
@pytest.mark.parametrize("transport", ["http", "sse"])
async def test_each_transport_lists_every_tool_with_described_arguments_and_calls_them(
    nppf_service: Service, transport: str
) -> None:
    async with mcp_session(nppf_service.url, transport=transport) as session:
        assert session.server_info is None or session.server_info.name == "policy-kb-mcp"
        tools = {t.name: t for t in (await session.list_tools()).tools}
        assert set(tools) == POLICY_READS | POLICY_WRITES
        for tool in tools.values():
            assert tool.description and len(tool.description) > 60, tool.name
            assert tool.output_schema is not None, tool.name
            for name, prop in tool.input_schema.get("properties", {}).items():
                assert prop.get("description"), (tool.name, name)
        assert tools["search_policy"].input_schema["properties"]["n_results"]["maximum"] == 50
        assert tools["search_policy"].annotations.read_only_hint is True
        result = await session.call_tool("search_policy", {"query": "highways grounds", "n_results": 2})
        assert result.structured_content["results_count"] == 2
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        text_is_a_rendering(text, result.structured_content)
        assert "  [1] NPPF " in text and "  [2] NPPF " in text


def test_health_answers_without_credentials(nppf_service: Service) -> None:
    response = httpx.get(f"{nppf_service.url}/health")
    assert (response.status_code, response.json()) == (200, {"status": "ok"})


def test_mcp_route_takes_post_get_and_delete_without_a_redirect(nppf_service: Service) -> None:
    with httpx.Client(base_url=nppf_service.url, headers=bearer(), follow_redirects=False, timeout=10) as client:
        response = client.post("/mcp", json=INITIALIZE, headers=MCP_HEADERS)
        assert response.status_code == 200 and response.headers["content-type"].startswith("application/json")
        assert response.json()["result"]["serverInfo"]["name"] == "policy-kb-mcp"
        assert "mcp-session-id" not in response.headers  # stateless: nothing to pin to a replica
        with client.stream("GET", "/mcp", headers={"Accept": "text/event-stream"}) as stream:
            assert stream.status_code == 200 and stream.headers["content-type"].startswith("text/event-stream")
        deleted = client.delete("/mcp", headers=MCP_HEADERS)
        assert deleted.status_code == 405  # no session to end: the SDK client treats 405 as "nothing to do"
        assert client.put("/mcp", json={}).status_code == 405
        slash = client.post("/mcp/", json=INITIALIZE, headers=MCP_HEADERS)  # a client configured with "/mcp/"
        assert (slash.status_code, slash.headers["location"]) == (307, f"{nppf_service.url}/mcp")


def test_sse_session_on_one_replica_takes_messages_posted_to_another(fresh_service: Service) -> None:
    """Replica A holds the stream; the client's POSTs land on replica B (a load balancer's choice)."""
    replica_b = create_app(fresh_service.settings, stores=fresh_service.stores, warm=False)
    with (
        running(replica_b) as url_b,
        httpx.Client(headers=bearer(), timeout=httpx.Timeout(10, read=15)) as client,
        client.stream("GET", f"{fresh_service.url}/sse") as stream,
    ):
        events = sse_events(stream)
        kind, endpoint = next(events)
        assert kind == "endpoint" and endpoint.startswith("/messages/?session_id=")
        posted = client.post(f"{url_b}{endpoint}", json=INITIALIZE, headers=MCP_HEADERS)
        assert posted.status_code == 202
        kind, data = next(events)
        assert kind == "message" and json.loads(data)["result"]["serverInfo"]["name"] == "policy-kb-mcp"
        client.post(f"{url_b}{endpoint}", json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        call = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_policy_documents"}}
        assert client.post(f"{url_b}{endpoint}", json=call).status_code == 202
        kind, data = next(events)
        assert json.loads(data)["result"]["structuredContent"] == {
            "status": "success",
            "policy_count": 0,
            "policies": [],
        }
        unknown = client.post(f"{url_b}/messages/?session_id={'0' * 32}", json=call)
        assert unknown.status_code == 404


def worker_memory(url: str) -> dict[str, float]:
    """``process_resident_memory_bytes`` on ``/metrics`` by ``pid`` (one process: no label, key "")."""
    samples = parse(httpx.get(f"{url}/metrics", headers=bearer(), timeout=10).text)
    return {
        dict(labels).get("pid", ""): v
        for (name, labels), v in samples.items()
        if name == "process_resident_memory_bytes"
    }


@pytest.mark.parametrize(
    ("command", "workers"),
    [(["-m", "mcp_service"], 1), (["-m", "deployments.cli", "serve"], 1), (["-m", "mcp_service"], 2)],
    ids=["python -m mcp_service", "policy-kb serve", "two worker processes"],
)
def test_the_service_starts_from_its_commands_with_settings_from_the_environment(
    nppf_service: Service, command: list[str], workers: int
) -> None:
    settings = nppf_service.settings
    port = free_port()
    env = service_env(settings, port, POLICY_KB_WORKERS=str(workers))
    proc = subprocess.Popen(
        [sys.executable, *command], cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    url = f"http://127.0.0.1:{port}"
    try:
        wait_healthy(url, proc)
        response = httpx.post(f"{url}/mcp", json=INITIALIZE, headers=MCP_HEADERS | bearer(), timeout=10)
        assert response.json()["result"]["serverInfo"]["name"] == "policy-kb-mcp"
        for _ in range(2 * workers):  # stateless: whichever worker takes a request answers it
            assert httpx.get(f"{url}/api/v1/policies", headers=bearer(), timeout=10).json()["total"] == 1
        assert httpx.get(f"{url}/api/v1/policies", timeout=10).status_code == 401
        eventually(lambda: len(worker_memory(url)) == workers, within=30, every=0.2, what="every worker's memory")
        assert all(rss > 0 for rss in worker_memory(url).values())
    finally:
        proc.send_signal(signal.SIGINT)
        _, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 0, stderr.decode()[-2000:]
