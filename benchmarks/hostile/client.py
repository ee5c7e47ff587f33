"""How the held-out check talks to running servers and judges each answer: the four servers' URLs and keys, raw
HTTP calls to REST, ``/mcp`` (stateless 2026-07-28 with its per-request envelope, and the 2025-11-25 handshake)
and legacy SSE, and the rules every answer to hostile input must keep (no 5xx, no traceback, the spec's error
envelope, a bounded size).

Raw HTTP on purpose: an SDK client would refuse to send most of what this check sends.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx

MODERN = "2026-07-28"
LEGACY = "2025-11-25"
MAX_ERROR_BYTES = 16_384
"""An error answer larger than this echoes the caller's input (the servers bound messages to 1,000 characters)."""
SERVERS = ("policy-kb", "document-store", "kb", "governance")


@dataclass
class Target:
    """Where the servers listen and the keys a caller holds."""

    urls: dict[str, str]
    key: str
    read_key: str | None
    kb_key: str
    governance_key: str | None = None
    timeout: float = 60.0

    def key_of(self, server: str) -> str:
        if server == "kb":
            return self.kb_key
        if server == "governance" and self.governance_key:
            return self.governance_key
        return self.key

    def auth(self, server: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.key_of(server)}"}


@dataclass
class Result:
    group: str
    server: str
    check: str
    ok: bool
    detail: str = ""


@dataclass
class Report:
    results: list[Result] = field(default_factory=list)

    def add(self, group: str, server: str, check: str, ok: bool, detail: str = "") -> bool:
        self.results.append(Result(group, server, check, ok, detail[:300]))
        return ok

    def run(self, group: str, server: str, check: str, probe: Callable[..., str | None], *args: Any) -> bool:
        """Run ``probe(*args)``; it returns ``None`` when the check holds, else what went wrong. An exception is a
        failure of the check (a dropped connection, a timeout), never of the script."""
        try:
            problem = probe(*args)
        except (httpx.HTTPError, OSError, ValueError, KeyError, TypeError) as error:
            problem = f"{type(error).__name__}: {error}"
        return self.add(group, server, check, problem is None, problem or "")


def modern_headers(target: Target, server: str, method: str, name: str | None = None) -> dict[str, str]:
    headers = target.auth(server) | {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": MODERN,
        "Mcp-Method": method,
    }
    if name is not None:
        headers["Mcp-Name"] = name
    return headers


def envelope_meta() -> dict[str, Any]:
    return {"io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {}}


def rpc(method: str, params: dict[str, Any] | None = None, id_: Any = 1) -> dict[str, Any]:
    """A 2026-07-28 request: ``params._meta`` carries the per-request envelope."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    body["params"] = dict(params or {}) | {"_meta": envelope_meta()}
    return body


def name_of(method: str, params: dict[str, Any] | None) -> str | None:
    key = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}.get(method)
    value = (params or {}).get(key) if key else None
    return value if isinstance(value, str) and value.isascii() and value.isprintable() else None


def mcp_call(
    client: httpx.Client, target: Target, server: str, method: str, params: dict[str, Any] | None = None
) -> httpx.Response:
    """One stateless 2026-07-28 JSON-RPC request to ``/mcp``."""
    return client.post(
        target.urls[server] + "/mcp",
        content=json.dumps(rpc(method, params)).encode(),
        headers=modern_headers(target, server, method, name_of(method, params)),
    )


def tool(client: httpx.Client, target: Target, server: str, name: str, arguments: Any) -> httpx.Response:
    return mcp_call(client, target, server, "tools/call", {"name": name, "arguments": arguments})


def legacy_headers(target: Target, server: str) -> dict[str, str]:
    return target.auth(server) | {
        "Accept": "application/json, text/event-stream",
        "Content-Type": "application/json",
        "MCP-Protocol-Version": LEGACY,
    }


def common_problem(response: httpx.Response) -> str | None:
    """What every answer must keep: below 500, no traceback, bounded when it is an error."""
    text = response.text
    if response.status_code >= 500 and response.status_code != 503:
        return f"HTTP {response.status_code}: {text[:200]}"
    if "Traceback (most recent call last)" in text or 'File "/' in text:
        return f"a traceback in the answer (HTTP {response.status_code})"
    if response.status_code >= 400 and len(response.content) > MAX_ERROR_BYTES:
        return f"an error of {len(response.content)} bytes"
    return None


def rest_error(response: httpx.Response, statuses: tuple[int, ...] = ()) -> str | None:
    """A REST refusal: 4xx (one of ``statuses`` when given) in ``{"error": {"code", "message"[, "details"]}}``."""
    if problem := common_problem(response):
        return problem
    if response.status_code < 400:
        return f"accepted (HTTP {response.status_code}): {response.text[:150]}"
    if statuses and response.status_code not in statuses:
        return f"HTTP {response.status_code}, expected {statuses}: {response.text[:150]}"
    return envelope_problem(response)


def envelope_problem(response: httpx.Response) -> str | None:
    try:
        error = response.json()["error"]
    except (ValueError, KeyError, TypeError):
        return f"not the error envelope (HTTP {response.status_code}): {response.text[:150]}"
    if not isinstance(error, dict) or not isinstance(error.get("code"), str | int):
        return f"not the error envelope: {response.text[:150]}"
    if not isinstance(error.get("message"), str) or not set(error) <= {"code", "message", "details", "data"}:
        return f"not the error envelope: {response.text[:150]}"
    return None


def rpc_error(response: httpx.Response, codes: tuple[int, ...] = ()) -> str | None:
    """A JSON-RPC error object (one of ``codes`` when given), never a 5xx or a result."""
    if problem := common_problem(response):
        return problem
    try:
        answer = json_rpc_answer(response)
    except ValueError as exc:
        return f"not JSON-RPC (HTTP {response.status_code}): {exc}"
    error = answer.get("error") if isinstance(answer, dict) else None
    if (
        not isinstance(error, dict)
        or not isinstance(error.get("code"), int)
        or not isinstance(error.get("message"), str)
    ):
        return f"no JSON-RPC error: {response.text[:200]}"
    if codes and error["code"] not in codes:
        return f"JSON-RPC code {error['code']}, expected {codes}: {error['message'][:120]}"
    return None


def json_rpc_answer(response: httpx.Response) -> Any:
    """The JSON-RPC message of a JSON or single-event SSE answer."""
    if response.headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
        if not data:
            raise ValueError("an empty event stream")
        return json.loads(data[-1])
    return response.json()


def tool_refusal(response: httpx.Response, error_types: tuple[str, ...] = ()) -> str | None:
    """A tool's refusal of bad arguments: a JSON-RPC ``-32602``, or a result with ``isError`` whose structured
    content is the spec's ``{"status": "error", "error_type", "message"}`` (one of ``error_types`` when given)."""
    if problem := common_problem(response):
        return problem
    answer = json_rpc_answer(response)
    if "error" in answer:
        return rpc_error(response, (-32602,))
    result = answer.get("result") or {}
    if not result.get("isError"):
        return f"accepted: {json.dumps(result)[:200]}"
    if len(response.content) > MAX_ERROR_BYTES:
        return f"an error result of {len(response.content)} bytes"
    payload = result.get("structuredContent")
    if payload is None:
        texts = [block.get("text", "") for block in result.get("content", []) if block.get("type") == "text"]
        try:
            payload = json.loads(texts[0]) if texts else None
        except ValueError:
            payload = None
    if not isinstance(payload, dict):
        return f"an error result without a structured envelope: {json.dumps(result)[:200]}"
    if payload.get("status") != "error" and "error" not in payload:
        return f"an error result out of the envelope: {json.dumps(payload)[:200]}"
    kind = payload.get("error_type") or (payload.get("error") or {}).get("code")
    if error_types and kind not in error_types:
        return f"error_type {kind}, expected {error_types}: {str(payload.get('message'))[:150]}"
    return None


def tool_ok(response: httpx.Response) -> dict[str, Any]:
    """The structured content of a successful tool call; ``ValueError`` otherwise."""
    answer = json_rpc_answer(response)
    result = answer.get("result") or {}
    if "error" in answer or result.get("isError"):
        raise ValueError(f"tool call failed: {response.text[:300]}")
    payload = result.get("structuredContent")
    if not isinstance(payload, dict):
        raise ValueError(f"no structured content: {response.text[:200]}")
    return payload
