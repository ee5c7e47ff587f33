"""Hostile tool arguments and REST fields: values of the wrong JSON type in every argument of every tool, odd
dates, huge single arguments, and path traversal wherever a path, file, key, id or URI is taken (tools, REST
paths, ``resources/read``). A secret file's text must never come back."""

from __future__ import annotations

import os
from typing import Any

import httpx

from benchmarks.hostile.client import SERVERS, Report, Target, common_problem, mcp_call, rest_error, tool, tool_refusal

WRONG_TYPES: dict[str, Any] = {"number": 12345, "boolean": True, "null": None, "array": ["a"], "object": {"a": 1}}
BAD_DATES: dict[str, Any] = {
    "0": 0,
    "2024-02-30": "2024-02-30",
    "+002024-01-01": "+002024-01-01",
    "2024-13-01": "2024-13-01",
    "a 1 MB date": "2" * 1_000_000,
    "2024-01-01\\u0000": "2024-01-01\u0000",
}
FAR_DATES = ("0001-01-01", "9999-12-31")
SECRET = "root:x:0:"
"""What ``/etc/passwd`` starts with: any answer holding it read a file it must not."""
INPUT_ERRORS = ("invalid_argument", "invalid_date", "invalid_source", "invalid_revision_id")
"""The error types that say "your argument is wrong": a wrong type or an impossible date must get one of these
(or JSON-RPC -32602), not a later error such as ``index_not_built`` that a valid call would get too."""
TRAVERSALS = ("../../../../etc/passwd", "/etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "..\\..\\etc\\passwd", "~/.ssh")


def tools_of(client: httpx.Client, target: Target, server: str) -> list[dict[str, Any]]:
    tools: list[dict[str, Any]] = mcp_call(client, target, server, "tools/list").json()["result"]["tools"]
    return tools


def valid_arguments(schema: dict[str, Any]) -> dict[str, Any]:
    """Plausible values for the required arguments, so one wrong argument is judged alone."""
    values: dict[str, Any] = {}
    for name in schema.get("required", []):
        spec = schema["properties"].get(name, {})
        kinds = spec.get("type", "string")
        kind = kinds[0] if isinstance(kinds, list) else kinds
        values[name] = {"integer": 1, "number": 1, "boolean": False, "array": ["x"], "object": {}}.get(
            kind, "2024-06-01" if "date" in name else "x-value"
        )
    return values


def no_secret(response: httpx.Response) -> str | None:
    if SECRET in response.text:
        return "the answer holds /etc/passwd"
    return common_problem(response)


def check_tool_arguments(report: Report, target: Target, client: httpx.Client, huge: bool) -> None:
    """Each argument of each tool given every wrong JSON type; date arguments given bad dates (refused) and far
    dates (answered or refused, never a crash); string arguments of 1 MB (and 20 MB with ``huge``)."""
    for server in SERVERS:
        for spec in tools_of(client, target, server):
            name, schema = spec["name"], spec["inputSchema"]
            base = valid_arguments(schema)
            for argument, prop in schema.get("properties", {}).items():
                allowed = prop.get("type") or [t.get("type") for t in prop.get("anyOf", [])]
                allowed = allowed if isinstance(allowed, list) else [allowed]
                for label, value in WRONG_TYPES.items():
                    if label in allowed or (label == "number" and "integer" in allowed):
                        continue
                    report.run(
                        "types",
                        server,
                        f"{name}.{argument} = {label}",
                        lambda a, v, n, b, s: tool_refusal(tool(client, target, s, n, b | {a: v}), INPUT_ERRORS),
                        argument,
                        value,
                        name,
                        base,
                        server,
                    )
                if "date" in argument or prop.get("format") == "date":
                    for label, value in BAD_DATES.items():
                        report.run(
                            "dates",
                            server,
                            f"{name}.{argument} = {label}",
                            lambda a, v, n, b, s: tool_refusal(tool(client, target, s, n, b | {a: v}), INPUT_ERRORS),
                            argument,
                            value,
                            name,
                            base,
                            server,
                        )
                    for value in FAR_DATES:
                        report.run(
                            "dates",
                            server,
                            f"{name}.{argument} = {value}",
                            lambda a, v, n, b, s: no_secret(tool(client, target, s, n, b | {a: v})),
                            argument,
                            value,
                            name,
                            base,
                            server,
                        )
                if "string" in allowed:
                    sizes = (1_000_000, 20_000_000) if huge else (1_000_000,)
                    for size in sizes:
                        report.run(
                            "size",
                            server,
                            f"{name}.{argument} of {size // 1_000_000} MB",
                            lambda a, z, n, b, s: no_secret(tool(client, target, s, n, b | {a: "x" * z})),
                            argument,
                            size,
                            name,
                            base,
                            server,
                        )


def check_rest_fields(report: Report, target: Target, client: httpx.Client) -> None:
    """REST dates and types: PATCH and query dates of the wrong type or impossible are 422 in the envelope."""
    rest = target.urls["policy-kb"] + "/api/v1"
    auth = target.auth("policy-kb")
    for label, value in (BAD_DATES | {"true": True, "[]": [], "{}": {}}).items():
        report.run(
            "dates",
            "policy-kb",
            f"REST PATCH revision effective_from = {label}",
            lambda v: rest_error(
                client.patch(rest + "/policies/NPPF/revisions/rev_x", json={"effective_from": v}, headers=auth),
                (404, 422),
            ),
            value,
        )
    for label, value in BAD_DATES.items():
        if isinstance(value, str) and len(value) < 100:
            report.run(
                "dates",
                "policy-kb",
                f"REST GET /policies/effective?date={label}",
                lambda v: rest_error(
                    client.get(rest + "/policies/effective", params={"date": v}, headers=auth), (400, 422)
                ),
                value,
            )
    for label, body in (
        ("title as a number", {"source": "HOSTILE_T", "title": 5, "category": "national_policy"}),
        ("source with a path", {"source": "../../etc", "title": "t", "category": "national_policy"}),
        ("unknown category", {"source": "HOSTILE_T", "title": "t", "category": "x" * 5000}),
        ("a list body", [1, 2]),
    ):
        report.run(
            "types",
            "policy-kb",
            f"REST POST /policies {label}",
            lambda b: rest_error(client.post(rest + "/policies", json=b, headers=auth), (400, 422)),
            body,
        )


def symlinks(inbox: str | None) -> tuple[str, ...]:
    """Links planted in the servers' inbox (when this machine can write it) that lead out of it: a file link to
    ``/etc/passwd`` and a folder link to ``/etc``, each named by its absolute path and relative to the inbox."""
    if inbox is None or not os.access(inbox, os.W_OK):
        return ()
    for name, points_to in (("hostile_link.pdf", "/etc/passwd"), ("hostile_dir", "/etc")):
        link = os.path.join(inbox, name)
        if not os.path.islink(link):
            os.symlink(points_to, link)
    return (f"{inbox}/hostile_link.pdf", f"{inbox}/hostile_dir/passwd", "hostile_link.pdf", "hostile_dir/passwd")


def check_traversal(report: Report, target: Target, client: httpx.Client, inbox: str | None) -> None:
    """Paths and keys that point outside what a server may read, through ``..``, encodings, absolute paths and
    links in the inbox: refused, and ``/etc/passwd`` never returned."""
    for path in symlinks(inbox):
        arguments = {"file_path": path, "application_ref": "25/00001/FUL"}
        report.run(
            "paths",
            "document-store",
            f"ingest_document via link {path[-30:]}",
            lambda a: tool_refusal(tool(client, target, "document-store", "ingest_document", a), ("path_not_allowed",)),
            arguments,
        )
    cases: list[tuple[str, str, dict[str, Any]]] = []
    for path in TRAVERSALS + ((f"{inbox}/../../../../etc/passwd", f"{inbox}/escape.pdf") if inbox else ()):
        cases += [
            ("policy-kb", "ingest_policy_revision", {"source": "NPPF", "revision_id": "rev_x", "file_path": path}),
            ("document-store", "ingest_document", {"file_path": path, "application_ref": "25/00001/FUL"}),
            ("document-store", "get_document_text", {"document_id": path}),
            ("kb", "kb_get", {"source_path": path}),
            ("kb", "kb_upload_start", {"filename": path + ".md", "total_size": 10}),
            ("governance", "get_governance_document", {"id": path}),
            ("policy-kb", "get_policy_section", {"source": path, "section_ref": "Para 1"}),
            ("policy-kb", "get_page_image", {"source": "NPPF", "revision_id": path, "page_number": 1}),
        ]
    for server, name, arguments in cases:
        shown = next(v for v in arguments.values() if isinstance(v, str) and any(c in v for c in "/\\~"))
        judge = kept_inside if name in LOOKUPS else traversal
        report.run(
            "paths",
            server,
            f"{name} {shown[:40]}",
            lambda s, n, a, j: j(tool(client, target, s, n, a)),
            server,
            name,
            arguments,
            judge,
        )
    for uri in (
        "policy://../../etc/passwd",
        "policy://NPPF/revisions/..%2f..%2f..%2fetc%2fpasswd",
        "policy://NPPF/revisions/rev_x/sections/../../../../etc/passwd",
        "ui://policy-kb/../../../etc/passwd",
        "ui://policy-kb/%2e%2e/%2e%2e/etc/passwd",
        "file:///etc/passwd",
        "policy://" + "a" * 100_000,
    ):
        for server in ("policy-kb", "document-store"):
            report.run(
                "paths",
                server,
                f"resources/read {uri[:45]}",
                lambda s, u: resource_refusal(mcp_call(client, target, s, "resources/read", {"uri": u})),
                server,
                uri,
            )
    rest = target.urls["policy-kb"] + "/api/v1"
    for path in (
        "/policies/..%2f..%2fetc%2fpasswd",
        "/policies/NPPF/revisions/..%2f..%2f..%2fetc%2fpasswd",
        "/policies/NPPF/revisions/%2e%2e/status",
        "/policies/NPPF/revisions/rev_x/pages/..%2f..%2fetc%2fpasswd.png",
        "/documents/..%2f..%2fetc%2fpasswd",
        "/jobs/..%2f..%2fetc%2fpasswd",
    ):
        report.run(
            "paths",
            "policy-kb",
            f"REST GET {path[:50]}",
            lambda p: (
                no_secret(client.get(rest + p, headers=target.auth("policy-kb")))
                or rest_error(client.get(rest + p, headers=target.auth("policy-kb")), (400, 404, 422))
            ),
            path,
        )


LOOKUPS = ("kb_get", "kb_upload_start")
"""Tools that read no file by the argument: ``kb_get`` matches it as a stored name, ``kb_upload_start`` keeps only
its last part as the upload's name. They may answer, but never with the secret or a path that climbs."""


def kept_inside(response: httpx.Response) -> str | None:
    if problem := no_secret(response):
        return problem
    answer = response.json()
    result = answer.get("result") or {}
    named = str((result.get("structuredContent") or {}).get("filename", ""))
    return f"the upload keeps the path {named!r}" if "/" in named or ".." in named or "\\" in named else None


def traversal(response: httpx.Response) -> str | None:
    return no_secret(response) or tool_refusal(response)


def resource_refusal(response: httpx.Response) -> str | None:
    if problem := no_secret(response):
        return problem
    answer = response.json()
    if "error" not in answer:
        return f"answered: {response.text[:150]}"
    code = answer["error"].get("code")
    return None if code in (-32602, -32002) else f"JSON-RPC code {code}: {answer['error'].get('message', '')[:100]}"
