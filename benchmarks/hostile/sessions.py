"""Sessions under hostile load: many legacy SSE sessions at once (each initialises over its own stream), and slow
bodies held open (slowloris) while another caller must still be served."""

from __future__ import annotations

import asyncio
import re
import socket
import time
from urllib.parse import urlsplit

import httpx

from benchmarks.hostile.client import LEGACY, Report, Target, mcp_call


def check_sessions(report: Report, target: Target, sessions: int, slow: int) -> None:
    """Many legacy SSE sessions at once (each initialises and lists its tools), then slow bodies held open while
    other callers are served."""
    for server in ("policy-kb", "kb"):
        report.run(
            "sessions",
            server,
            f"{sessions} concurrent SSE sessions",
            lambda s: asyncio.run(many_sessions(target, s, sessions)),
            server,
        )
    report.run("sessions", "policy-kb", f"{slow} slow bodies do not block others", lambda: slow_bodies(target, slow))


ENDPOINT = re.compile(r"data: (/messages/\?session_id=[0-9a-f]+)")


async def one_session(client: httpx.AsyncClient, target: Target, server: str) -> str | None:
    url = target.urls[server]
    async with client.stream("GET", url + "/sse", headers=target.auth(server)) as stream:
        if stream.status_code != 200:
            return f"GET /sse: HTTP {stream.status_code}"
        lines = stream.aiter_lines()
        endpoint = None
        async for line in lines:
            if found := ENDPOINT.match(line):
                endpoint = found.group(1)
                break
        if endpoint is None:
            return "no endpoint event"
        init = {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "h", "version": "0"}},
        }
        posted = await client.post(url + endpoint, json=init, headers=target.auth(server))
        if posted.status_code != 202:
            return f"POST initialize: HTTP {posted.status_code} {posted.text[:120]}"
        async for line in lines:
            if line.startswith("data:") and '"id":1' in line.replace(" ", ""):
                return None if '"result"' in line else line[:150]
        return "the stream ended before the answer"


async def many_sessions(target: Target, server: str, count: int) -> str | None:
    limits = httpx.Limits(max_connections=count * 2, max_keepalive_connections=0)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        outcomes = await asyncio.gather(
            *(one_session(client, target, server) for _ in range(count)), return_exceptions=True
        )
    failures = [repr(o) if isinstance(o, BaseException) else o for o in outcomes if o is not None]
    if not failures:
        return None
    refused = [f for f in failures if "503" in f]
    return f"{len(failures)} of {count} failed ({len(refused)} refused with 503); first: {failures[0][:150]}"


def slow_bodies(target: Target, count: int) -> str | None:
    """``count`` POSTs that announce a 1,000-byte body and send one byte; meanwhile a normal call must answer."""
    parts = urlsplit(target.urls["policy-kb"])
    host, port = parts.hostname or "127.0.0.1", parts.port or 80
    held = []
    try:
        for _ in range(count):
            sock = socket.create_connection((host, port), timeout=10)
            sock.sendall(
                (
                    f"POST /mcp HTTP/1.1\r\nHost: {host}\r\nAuthorization: Bearer {target.key}\r\n"
                    "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"
                ).encode()
            )
            held.append(sock)
        started = time.monotonic()
        with httpx.Client(timeout=30) as client:
            response = mcp_call(client, target, "policy-kb", "tools/list")
        if response.status_code != 200:
            return f"a normal call beside them: HTTP {response.status_code}"
        return None if time.monotonic() - started < 10 else "a normal call waited over 10 s"
    finally:
        for sock in held:
            sock.close()
