"""One ``search_policy`` call split into its phases: transport and SDK, auth, rate limit, admission (the search
lane), metrics and traces, embedding, search, serialisation.

The real server (``python -m mcp_service``, one worker, ``/mcp`` Streamable HTTP stateless) over the NPPF December
2024 alone (``nppf_store``), one SDK client, every question new, three measurements:

1. **Whole servers, one layer on at a time**, question by question in turn so the machine's load hits each alike:
   open (no key: the least the settings allow), with a key (auth), with a key and ``RATE_LIMIT_PER_MINUTE``
   (the Redis window per call), with a key and ``OTEL_EXPORTER_OTLP_ENDPOINT`` (spans made and batched; the
   endpoint is a closed loopback port, so exports fail in the background), and ``sdk_floor.py`` (the SDK's own
   server with a fixed answer of the same size: transport, SDK and serialisation, nothing of ours). Printed: the
   client's latency p50/p95 and the server's CPU per call (``/proc`` utime + stime over the run).
2. **py-spy** (``--py-spy``) on the server with a key, raw stacks attributed to the phases (``PHASES``), as ms of
   its CPU per call.
3. **In process**, the pieces timed directly (this thread's CPU, over new questions): the question's embedding,
   the search without it, the result's serialisation (the envelope, the SDK's wire dump, JSON), the metrics of a
   call, the search lane's admission and thread hop (wall time: it is a wait, not work).

    .venv/bin/python benchmarks/call_phases.py [--calls 200] [--data-dir .bench/nppf-543] [--py-spy]

Figures: docs/performance.md › "The cost of one call"; decision 0049.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import psutil  # noqa: E402

from benchmarks.harness import Service, free_port, percentiles, start_service  # noqa: E402
from benchmarks.nppf_store import (  # noqa: E402
    API_KEY,
    NppfStore,
    distinct_questions,
    http_session,
    prepare,
    start_policy_kb,
    stop,
)

TRANSPORT = "transport and SDK"
INT8_SEARCH = "search, int8 path (small path off)"
"""The search with the dense leg's small path off (``lib.retrieval.float_rows``): what it cost before it."""
PHASES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("embedding", ("lib/stores/embeddings", "lib/stores/onnx_encoder", "tokenizers/")),
    ("search", ("lib/policies/", "lib/retrieval/", "lib/stores/", "lib/registry", "redis/", "chromadb/")),
    (
        "serialisation",
        (
            "mcp_service/tools/envelope",
            "mcp_service/tools/renderings",
            "mcp_service/tools/policies/",
            "mcp_service/tools/document_content",
            "mcp/server/mcpserver/utilities/func_metadata",
        ),
    ),
    ("auth", ("mcp_service/auth/", "mcp/server/auth/")),
    ("rate limit", ("mcp_service/rate_limit",)),
    ("admission (search lane)", ("mcp_service/search_lane",)),
    (
        "metrics and traces",
        (
            "prometheus_client/",
            "mcp_service/observability/",
            "lib/observability/",
            "opentelemetry/",
            "mcp/server/_otel",
        ),
    ),
    ("logging", ("stdlib/logging/", "lib/logs")),
    (
        TRANSPORT,
        (
            "mcp/",
            "mcp_types/",
            "starlette/",
            "uvicorn/",
            "h11/",
            "httptools/",
            "anyio/",
            "stdlib/asyncio/",
            "mcp_service/",
        ),
    ),
)
"""(phase, module paths). A sample counts for the phase of the innermost frame of its stack that one of these
names, so a middleware around everything (auth, metrics) counts only for its own work, numpy under the search
as search, pydantic under the envelope as serialisation. Module paths as ``profile_split.py`` makes them."""
SERIALISING = re.compile(r"^\s*\S*(dump|to_json|to_jsonable|encode|iterencode)\w* \(")
"""A frame (pydantic's, the JSON encoder's) that turns objects into JSON: serialisation wherever it is called."""
IDLE = re.compile(r"^\s*(Condition\.wait|Event\.wait|Queue\.get|\w+Selector\.select|sleep|select) \(")
"""A stack whose innermost frame is one of these waits: py-spy cannot tell these threads are idle under load."""
HOP = re.compile(r"^\s*Condition\.notify \(")
"""The event loop handing a search to a worker thread, then waiting there for the interpreter lock."""


def phase_of(stack: str) -> str:
    """The phase one raw py-spy stack counts for (``PHASES``), ``idle`` or ``background: ...``."""
    from benchmarks.profile_split import _FRAME, module_path

    frames = stack.split(";")
    if IDLE.match(frames[-1]):
        return "idle"
    if HOP.match(frames[-1]) and "run_sync_in_worker_thread" in stack:
        return "admission (search lane)"  # the hop to the lane's thread: the loop waits for the interpreter lock
    if "IndexLoader._refresh" in stack:
        return "background: index slices checked against Chroma"
    for frame in reversed(frames):
        found = _FRAME.search(frame.strip())
        if found is None:
            continue
        module = module_path(found["file"])
        if module.startswith(("pydantic", "stdlib/json/", "orjson")) and SERIALISING.match(frame):
            return "serialisation"
        for phase, starts in PHASES:
            if module.startswith(starts):
                return phase
    return TRANSPORT


def split_profile(profile: Path) -> tuple[Counter[str], int]:
    phases: Counter[str] = Counter()
    for line in profile.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if stack and count.isdigit():
            phases[phase_of(stack)] += int(count)
    return phases, sum(phases.values())


def report_profile(profile: Path, cpu_ms: float, spied_cpu_ms: float) -> None:
    """The busy samples by phase, as shares and as ms of the server's CPU per call unprofiled (``cpu_ms``)."""
    phases, total = split_profile(profile)
    busy = total - phases.pop("idle", 0)
    print(
        f"\npy-spy of the server with a key, a pass of its own: {busy} busy samples of {total}; its CPU per call "
        f"{spied_cpu_ms:.2f} ms profiled, {cpu_ms:.2f} ms unprofiled (the shares below are of the latter)"
    )
    for phase, count in phases.most_common():
        print(f"  {phase:<52}{count / busy:>7.1%}{count / busy * cpu_ms:>9.2f} ms")


# -- whole servers --------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    process = psutil.Process(pid)
    return sum(sum(p.cpu_times()[:2]) for p in [process, *process.children(recursive=True)] if p.is_running())


IDLE_S = 10.0
VARIANTS: dict[str, tuple[dict[str, str], str | None]] = {
    "open (no key)": ({"ALLOW_UNAUTHENTICATED": "true"}, None),
    "key (auth)": ({"MCP_API_KEY": API_KEY}, API_KEY),
    "key + rate limit": ({"MCP_API_KEY": API_KEY, "RATE_LIMIT_PER_MINUTE": "100000000"}, API_KEY),
    "key + tracing": ({"MCP_API_KEY": API_KEY, "OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:{closed}"}, API_KEY),
}


async def interleaved(
    servers: dict[str, tuple[str, str | None, int]], questions: list[str], warm: int, profile: Callable[[], None] | None
) -> dict[str, tuple[list[float], float]]:
    """Each question to every server in turn (a new question each time: never the same text twice); latency per
    call as the client sees it, and each server's CPU per measured call."""
    from contextlib import AsyncExitStack

    async with AsyncExitStack() as stack:
        sessions = {
            name: await stack.enter_async_context(http_session(url, key)) for name, (url, key, _) in servers.items()
        }
        samples: dict[str, list[float]] = {name: [] for name in servers}
        cpu: dict[str, float] = {}
        for i, question in enumerate(questions):
            if i == warm:
                cpu = {name: cpu_seconds(pid) for name, (_, _, pid) in servers.items()}
                if profile is not None:
                    profile()
            for n, (name, session) in enumerate(sessions.items()):
                text = f"{question} [{n}]" if n else question
                started = time.perf_counter()
                result = await session.call_tool("search_policy", {"query": text, "n_results": 10})
                took = (time.perf_counter() - started) * 1000
                assert not result.is_error, result.content
                if i >= warm:
                    samples[name].append(took)
        measured = len(questions) - warm
        return {
            name: (samples[name], (cpu_seconds(pid) - cpu[name]) * 1000 / measured)
            for name, (_, _, pid) in servers.items()
        }


def whole_servers(store: NppfStore, calls: int, warm: int, py_spy: Path | None, logs: Path) -> None:
    services: list[Service] = []
    servers: dict[str, tuple[str, str | None, int]] = {}
    spy: subprocess.Popen[bytes] | None = None
    try:
        closed = free_port()
        for name, (env, key) in VARIANTS.items():
            port = free_port()
            settings = {k: v.format(closed=closed) for k, v in env.items()}
            service = start_policy_kb(store, port, settings, logs / f"{name.split()[0]}-{port}.log")
            services.append(service)
            servers[name] = (f"http://127.0.0.1:{port}/mcp", key, service.pid)
        port = free_port()
        floor = start_service(
            [sys.executable, "benchmarks/sdk_floor.py", "--port", str(port)], {}, lambda: _listening(port), 60
        )
        services.append(floor)
        servers["SDK floor (sdk_floor.py)"] = (f"http://127.0.0.1:{port}/mcp", None, floor.pid)
        time.sleep(20)  # each server's warm-up (query encoder, index) runs in the background after /health
        profiled = servers["key (auth)"][2]

        def start_spy() -> None:
            nonlocal spy
            assert py_spy is not None
            spy = subprocess.Popen(
                [
                    str(Path(sys.executable).parent / "py-spy"),
                    "record",
                    "-p",
                    str(profiled),
                    "--subprocesses",
                    "-f",
                    "raw",
                    "-r",
                    "250",
                    "-o",
                    str(py_spy),
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            time.sleep(1.5)

        questions = distinct_questions(store.texts, seed=47)
        asked = [next(questions) for _ in range(calls + warm)]
        load = os.getloadavg()
        idle_before = {name: cpu_seconds(pid) for name, (_, _, pid) in servers.items()}
        time.sleep(IDLE_S)  # what each server spends with no call at all (its threads' own timers and checks)
        idle = {name: (cpu_seconds(pid) - idle_before[name]) * 1000 / IDLE_S for name, (_, _, pid) in servers.items()}
        started = time.perf_counter()
        results = asyncio.run(interleaved(servers, asked, warm, None))
        seconds_per_call = (time.perf_counter() - started) / (calls + warm)  # each server's share of the run
        print(
            f"\nwhole servers, one SDK client over HTTP, {calls} new questions each, interleaved; load average "
            f"{load[0]:.1f} before, {os.getloadavg()[0]:.1f} after; {os.cpu_count()} CPUs"
        )
        print(
            f"  {'server':<28}{'p50 ms':>9}{'p95 ms':>9}{'server CPU ms/call':>21}{'of it idle work':>17}"
            f"   (idle work: the server's CPU with no call, {IDLE_S:.0f} s, per second x seconds per call)"
        )
        base = results["open (no key)"]
        for name, (samples, cpu_ms) in results.items():
            p50, p95 = percentiles(samples, (50, 95))
            idle_ms = idle[name] * seconds_per_call
            print(
                f"  {name:<28}{p50:>9.2f}{p95:>9.2f}{cpu_ms:>21.2f}{idle_ms:>17.2f}   vs open: "
                f"CPU {cpu_ms - base[1]:+.2f} ms, p50 {p50 - percentiles(base[0], (50,))[0]:+.2f} ms"
            )
        if py_spy is not None:  # a pass of its own: py-spy's sampling costs the profiled process CPU
            profiled_server = {"key (auth)": servers["key (auth)"]}
            more = [next(questions) for _ in range(calls + warm)]
            spied = asyncio.run(interleaved(profiled_server, more, warm, start_spy))
            if spy is not None:
                spy.send_signal(signal.SIGINT)
                spy.wait(60)
            report_profile(py_spy, results["key (auth)"][1], spied["key (auth)"][1])
    finally:
        if spy is not None and spy.poll() is None:
            spy.kill()
        for service in services:
            service.stop()


def _listening(port: int) -> bool:
    import socket

    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


# -- in process -------------------------------------------------------------------------------------------


def in_process(store: NppfStore, calls: int) -> None:
    """The pieces a call runs below the transport, timed directly on this thread (CPU ms per call)."""
    import anyio
    import mcp_types
    from pydantic import TypeAdapter

    from lib.observability.metrics import operation_duration, tool_calls
    from mcp_service.search_lane import run_search
    from mcp_service.tools.envelope import success
    from mcp_service.tools.policies import work
    from mcp_service.tools.policies.outputs import SearchOutput
    from mcp_service.tools.policies.resources import linked

    stores = store.stores
    small = stores.vectors.indexes.float_rows  # the dense leg's small path (lib.retrieval.float_rows)
    small_rows = small.most_rows
    output = TypeAdapter(SearchOutput)  # the SDK validates a tool's structured result against its output schema
    stores.embedder.warm_up()
    stores.embedder.query_cache_size = 0  # every question new: never a remembered vector
    questions = distinct_questions(store.texts, seed=48)
    parts: dict[str, list[float]] = {
        k: [] for k in ("embedding", "search", INT8_SEARCH, "envelope, links, output check", "wire", "metrics")
    }
    for i in range(calls + 20):
        q1, q2, q3 = next(questions), next(questions), next(questions)
        t0 = time.thread_time()
        stores.embedder.embed_queries([q1])
        t1 = time.thread_time()
        result = work.search(stores, query=q2, n_results=10)  # the tool's own work; embeds q2: the search is the rest
        t2 = time.thread_time()
        small.most_rows = 0  # the same search by the int8 codes alone, as before the small path
        try:
            work.search(stores, query=q3, n_results=10)
        finally:
            small.most_rows = small_rows
        t2_int8 = time.thread_time()
        envelope = linked(success(result))
        output.validate_python(envelope.structured_content)
        t3 = time.thread_time()
        wire = json.dumps(envelope.model_dump(by_alias=True, mode="json", exclude_none=True))
        t4 = time.thread_time()
        tool_calls.labels("policy-kb", "search_policy", "success").inc()
        operation_duration.labels("policy-kb", "tools/call", "search_policy", "").observe(t4 - t3)
        t5 = time.thread_time()
        if i >= 20:
            embed = (t1 - t0) * 1000
            for key, ms in (
                ("embedding", embed),
                ("search", (t2 - t1) * 1000 - embed),
                (INT8_SEARCH, (t2_int8 - t2) * 1000 - embed),
                ("envelope, links, output check", (t3 - t2_int8) * 1000),
                ("wire", (t4 - t3) * 1000),
                ("metrics", (t5 - t4) * 1000),
            ):
                parts[key].append(ms)
    assert isinstance(envelope, mcp_types.CallToolResult) and len(wire) > 1000

    async def lane() -> list[float]:
        waits = []
        for _ in range(calls):
            started = time.perf_counter()
            await run_search(lambda: None, stores.settings.search)
            waits.append((time.perf_counter() - started) * 1000)
        return waits

    parts["admission + thread hop (wall)"] = anyio.run(lane)
    print(f"\nin process, one thread, {calls} new questions, ms per call (CPU of this thread; the lane: wall time)")
    print(f"  {'piece':<34}{'mean':>8}{'p50':>8}{'p95':>8}")
    for key, samples in parts.items():
        p50, p95 = percentiles(samples, (50, 95))
        print(f"  {key:<34}{sum(samples) / len(samples):>8.3f}{p50:>8.3f}{p95:>8.3f}")
    print(f"  (a result on the wire: {len(wire)} bytes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200, help="measured calls per server")
    parser.add_argument("--warm", type=int, default=20, help="calls per server before measuring")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "nppf-543")
    parser.add_argument("--py-spy", action="store_true", help="profile the server with a key (needs ptrace)")
    parser.add_argument("--skip-servers", action="store_true", help="only the in-process pieces")
    args = parser.parse_args()
    store = prepare(args.data_dir.resolve())
    logs = args.data_dir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    try:
        in_process(store, args.calls)
        if not args.skip_servers:
            profile = args.data_dir / "call_phases.pyspy.txt" if args.py_spy else None
            whole_servers(store, args.calls, args.warm, profile, logs)
    finally:
        stop(store)


if __name__ == "__main__":
    main()
