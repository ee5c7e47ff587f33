"""Hostile bodies, headers and protocol messages on every server's HTTP paths: deep nesting, huge and malformed
bodies, wrong content types, batches, odd ids, unknown methods/tools/prompts/resources, missing or wrong keys,
wrong HTTP methods (sessions under load: ``sessions``)."""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlsplit

import httpx

from benchmarks.hostile.client import (
    SERVERS,
    Report,
    Target,
    common_problem,
    envelope_problem,
    json_rpc_answer,
    legacy_headers,
    mcp_call,
    modern_headers,
    rest_error,
    rpc,
    rpc_error,
    tool,
    tool_refusal,
)

PARSE_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND, INVALID_PARAMS = -32700, -32600, -32601, -32602


def deep(levels: int) -> bytes:
    return ("[" * levels + "]" * levels).encode()


def huge_call(size: int) -> bytes:
    return json.dumps(rpc("tools/call", {"name": "search_policy", "arguments": {"query": "x" * size}})).encode()


BODIES: dict[str, bytes] = {
    "nested 1,000 levels": deep(1000),
    "nested 100,000 levels": deep(100_000),
    "object nested 1,000 levels": ('{"a":' * 1000 + "1" + "}" * 1000).encode(),
    "invalid UTF-8": b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}',
    "not JSON": b"{not json",
    "empty body": b"",
    "a 20 MB body": b'{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "pad": "' + b"x" * 20_000_000 + b'"}',
}


def check_bodies(report: Report, target: Target, client: httpx.Client) -> None:
    """Every server's ``/mcp`` and REST body parser: a 4xx in the path's envelope, never a 5xx or a traceback."""
    for server in SERVERS:
        url = target.urls[server]
        for label, body in BODIES.items():
            headers = modern_headers(target, server, "tools/list")

            def probe(body: bytes = body, headers: dict[str, str] = headers, url: str = url) -> str | None:
                response = client.post(url + "/mcp", content=body, headers=headers)
                if response.status_code == 413:
                    return common_problem(response) or envelope_or_rpc(response)
                return rpc_error(response, (PARSE_ERROR, INVALID_REQUEST))

            report.run("body", server, f"/mcp {label}", probe)
        report.run("body", server, "/mcp NUL bytes in a string", lambda s: nul_bytes(client, target, s), server)
        report.run(
            "body", server, "/mcp a lone surrogate in a string", lambda s: lone_surrogate(client, target, s), server
        )
        report.run("body", server, "/mcp text/plain content type", lambda s: wrong_type(client, target, s), server)
    rest = target.urls["policy-kb"] + "/api/v1"
    for path, method in (("/policies", "POST"), ("/policies/NPPF", "PATCH"), ("/search", "POST"), ("/jobs", "POST")):
        for label in ("nested 1,000 levels", "nested 100,000 levels", "invalid UTF-8", "a 20 MB body"):
            report.run(
                "body",
                "policy-kb",
                f"REST {method} {path} {label}",
                lambda p, m, b: rest_error(
                    client.request(m, rest + p, content=b, headers=target.auth("policy-kb") | JSON)
                ),
                path,
                method,
                BODIES[label],
            )
        report.run(
            "body",
            "policy-kb",
            f"REST {method} {path} a lone surrogate",
            lambda p, m: rest_error(
                client.request(
                    m,
                    rest + p,
                    content=b'{"query": "\\ud800", "title": "\\udfff"}',
                    headers=target.auth("policy-kb") | JSON,
                )
            ),
            path,
            method,
        )
        report.run(
            "body",
            "policy-kb",
            f"REST {method} {path} text/plain",
            lambda p, m: rest_error(
                client.request(m, rest + p, content=b"source=X", headers=target.auth("policy-kb") | PLAIN)
            ),
            path,
            method,
        )


JSON = {"Content-Type": "application/json"}
PLAIN = {"Content-Type": "text/plain"}


def envelope_or_rpc(response: httpx.Response) -> str | None:
    return envelope_problem(response) and rpc_error(response)


def nul_bytes(client: httpx.Client, target: Target, server: str) -> str | None:
    name, arguments = {
        "policy-kb": ("search_policy", {"query": "cycle\u0000lanes"}),
        "document-store": ("search_application_docs", {"query": "parking\u0000"}),
        "kb": ("kb_search", {"query": "note\u0000"}),
        "governance": ("query_governance", {"question": "why\u0000"}),
    }[server]
    response = tool(client, target, server, name, arguments)
    return common_problem(response) or (None if "result" in json_rpc_answer(response) else rpc_error(response))


SEARCHES = {
    "policy-kb": ("search_policy", "query"),
    "document-store": ("search_application_docs", "query"),
    "kb": ("kb_search", "query"),
    "governance": ("query_governance", "question"),
}


def lone_surrogate(client: httpx.Client, target: Target, server: str) -> str | None:
    """A string holding ``\\ud800`` (valid JSON, not Unicode text): a parse error, never an ``internal`` error."""
    name, argument = SEARCHES[server]
    body = json.dumps(rpc("tools/call", {"name": name, "arguments": {argument: "\ud800 parking"}}))
    response = client.post(
        target.urls[server] + "/mcp", content=body, headers=modern_headers(target, server, "tools/call", name)
    )
    return (
        rpc_error(response, (PARSE_ERROR, INVALID_PARAMS))
        if "error" in response.json()
        else tool_refusal(response, ("invalid_argument", "validation_error"))
    )


def wrong_type(client: httpx.Client, target: Target, server: str) -> str | None:
    headers = modern_headers(target, server, "tools/list") | PLAIN
    response = client.post(target.urls[server] + "/mcp", content=json.dumps(rpc("tools/list")), headers=headers)
    if response.status_code not in (400, 406, 415):
        return f"HTTP {response.status_code}: {response.text[:150]}"
    return common_problem(response) or rpc_error(response)


def check_protocol(report: Report, target: Target, client: httpx.Client) -> None:
    """JSON-RPC codes (method not found, invalid params), batches, duplicate keys, odd ids, 405 with ``Allow``."""
    for server in SERVERS:
        url = target.urls[server]
        cases = {
            "unknown method is -32601": ("no/such_method", {}, (METHOD_NOT_FOUND,)),
            "unknown tool is -32602": ("tools/call", {"name": "no_such_tool", "arguments": {}}, (INVALID_PARAMS,)),
            "unknown prompt is -32602": ("prompts/get", {"name": "no_such_prompt"}, (INVALID_PARAMS,)),
            "unknown resource is -32602/-32002": (
                "resources/read",
                {"uri": "policy://NO_SUCH/revisions/rev_x"},
                (INVALID_PARAMS, -32002),
            ),
            "tools/call without a name is -32602": ("tools/call", {"arguments": {}}, (INVALID_PARAMS,)),
            "arguments as a list is -32602": ("tools/call", {"name": "x", "arguments": [1, 2]}, (INVALID_PARAMS,)),
        }
        for label, (method, params, codes) in cases.items():
            report.run(
                "protocol",
                server,
                label,
                lambda m, p, c, s: rpc_error(mcp_call(client, target, s, m, p), c),
                method,
                params,
                codes,
                server,
            )
        headers = modern_headers(target, server, "tools/list")
        batch = json.dumps([rpc("tools/list", id_=1), rpc("tools/list", id_=2)])
        report.run(
            "protocol",
            server,
            "a batch array is refused",
            lambda u, h, b: rpc_error(client.post(u + "/mcp", content=b, headers=h)),
            url,
            headers,
            batch,
        )
        duplicate = (
            '{"jsonrpc": "2.0", "id": 1, "method": "tools/list", "method": "no/such", "params": '
            + json.dumps(rpc("tools/list")["params"])
            + "}"
        )
        report.run(
            "protocol",
            server,
            "duplicate JSON keys",
            lambda u, h, d: common_problem(client.post(u + "/mcp", content=d, headers=h)),
            url,
            headers,
            duplicate,
        )
        for label, id_ in (("object id", {"a": 1}), ("array id", [1]), ("float id", 1.5), ("bool id", True)):
            report.run(
                "protocol",
                server,
                f"{label} is refused",
                lambda u, h, i: rpc_error(
                    client.post(u + "/mcp", content=json.dumps(rpc("tools/list", id_=i)), headers=h)
                ),
                url,
                headers,
                id_,
            )
        report.run(
            "protocol", server, "a 100 kB string id stays bounded", lambda u, h: long_id(client, u, h), url, headers
        )
        report.run(
            "protocol", server, "a prompt without its arguments is -32602", missing_arguments, client, target, server
        )
        for method in ("tools/call", "prompts/get"):
            report.run(
                "protocol",
                server,
                f"{method} of a 1 MB unknown name is bounded",
                long_name,
                client,
                target,
                server,
                method,
            )
        for method, path in (
            ("PUT", "/mcp"),
            ("DELETE", "/mcp"),
            ("PUT", "/sse"),
            ("GET", "/messages/"),
            ("POST", "/health"),
        ):
            report.run(
                "protocol",
                server,
                f"{method} {path} is 405 with Allow",
                lambda m, p, u, s: not_allowed(client.request(m, u + p, headers=target.auth(s))),
                method,
                path,
                url,
                server,
            )
    rest = target.urls["policy-kb"] + "/api/v1"
    for method, path in (("PUT", "/policies"), ("DELETE", "/policies"), ("POST", "/policies/NPPF/compare")):
        report.run(
            "protocol",
            "policy-kb",
            f"REST {method} {path} is 405 with Allow",
            lambda m, p: not_allowed(client.request(m, rest + p, headers=target.auth("policy-kb"))),
            method,
            path,
        )


def long_id(client: httpx.Client, url: str, headers: dict[str, str]) -> str | None:
    """JSON-RPC answers with the request's id, so only what comes on top of the echoed id is bounded."""
    id_ = "i" * 100_000
    response = client.post(url + "/mcp", content=json.dumps(rpc("no/such", id_=id_)), headers=headers)
    if response.status_code >= 500 or "Traceback" in response.text:
        return f"HTTP {response.status_code}: {response.text[:150]}"
    extra = len(response.content) - (len(id_) if id_ in response.text else 0)
    return None if extra <= 16_384 else f"{extra} bytes besides the id"


def legacy_call(
    client: httpx.Client, target: Target, server: str, method: str, params: dict[str, Any]
) -> httpx.Response:
    """A stateless 2025-11-25 request: no per-request envelope, so no header repeats a long name."""
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
    return client.post(target.urls[server] + "/mcp", content=body, headers=legacy_headers(target, server))


def missing_arguments(client: httpx.Client, target: Target, server: str) -> str | None:
    prompts = mcp_call(client, target, server, "prompts/list").json()["result"]["prompts"]
    needy = [p for p in prompts if any(a.get("required") for a in p.get("arguments") or [])]
    if not needy:
        return None
    return rpc_error(legacy_call(client, target, server, "prompts/get", {"name": needy[0]["name"]}), (INVALID_PARAMS,))


def long_name(client: httpx.Client, target: Target, server: str, method: str) -> str | None:
    response = legacy_call(client, target, server, method, {"name": "n" * 1_000_000, "arguments": {}})
    return rpc_error(response, (INVALID_PARAMS,)) or (
        None if len(response.content) < 4_000 else f"an error of {len(response.content)} bytes"
    )


def not_allowed(response: httpx.Response) -> str | None:
    if response.status_code != 405:
        return f"HTTP {response.status_code}: {response.text[:120]}"
    if not response.headers.get("allow"):
        return "405 without an Allow header"
    return common_problem(response) or envelope_or_rpc(response)


def check_auth(report: Report, target: Target, client: httpx.Client) -> None:
    """No key, a wrong key, another scheme: 401 in the path's envelope; ``/health`` open; the read key refused
    a write tool as a tool error (an SSE session survives it)."""
    for server in SERVERS:
        url = target.urls[server]
        call = json.dumps(rpc("tools/list"))
        for label, headers in (
            ("no Authorization", {}),
            ("a wrong key", {"Authorization": "Bearer wrong-" + "k" * 40}),
            ("Basic scheme", {"Authorization": "Basic dXNlcjpwYXNz"}),
            ("a bare scheme", {"Authorization": "Bearer"}),
            ("a 1 MB bearer", {"Authorization": "Bearer " + "k" * 1_000_000}),
        ):
            base = modern_headers(target, server, "tools/list")
            base.pop("Authorization")
            report.run(
                "auth",
                server,
                f"/mcp with {label} is 401",
                lambda u, h, c: unauthorized(client.post(u + "/mcp", content=c, headers=h)),
                url,
                base | headers,
                call,
            )
            report.run(
                "auth",
                server,
                f"GET /sse with {label} is 401",
                lambda u, h: unauthorized(client.get(u + "/sse", headers=h)),
                url,
                headers,
            )
        if (urlsplit(url).hostname or "").startswith(("127.", "localhost", "::1")):
            for label, extra, status in (
                ("a foreign Host", {"Host": "evil.example"}, 421),
                ("a foreign Origin", {"Origin": "http://evil.example"}, 403),
            ):
                report.run(
                    "auth",
                    server,
                    f"/mcp with {label} (DNS rebinding) is {status}",
                    lambda s, h, code: rebinding(client, target, s, h, code),
                    server,
                    extra,
                    status,
                )
    rest = target.urls["policy-kb"] + "/api/v1"
    report.run("auth", "policy-kb", "REST without a key is 401", lambda: unauthorized(client.get(rest + "/policies")))
    if target.read_key:
        read = {"Authorization": f"Bearer {target.read_key}"}
        report.run(
            "auth",
            "policy-kb",
            "REST write with the read key is 403",
            lambda: rest_error(client.post(rest + "/policies", json={"source": "X"}, headers=read), (403,)),
        )
        readonly = Target(target.urls, target.read_key, None, target.kb_key)
        report.run(
            "auth",
            "policy-kb",
            "a write tool with the read key is a tool error",
            lambda: tool_refusal(
                tool(client, readonly, "policy-kb", "remove_policy_revision", {"source": "X", "revision_id": "r"})
            ),
        )


def rebinding(client: httpx.Client, target: Target, server: str, extra: dict[str, str], status: int) -> str | None:
    """A server on loopback refuses a request named for another host or sent from another origin, key or not."""
    headers = modern_headers(target, server, "tools/list") | extra
    response = client.post(target.urls[server] + "/mcp", content=json.dumps(rpc("tools/list")), headers=headers)
    if response.status_code != status:
        return f"HTTP {response.status_code}: {response.text[:120]}"
    return common_problem(response)


def unauthorized(response: httpx.Response) -> str | None:
    if response.status_code != 401:
        return f"HTTP {response.status_code}: {response.text[:120]}"
    return common_problem(response) or envelope_or_rpc(response)
