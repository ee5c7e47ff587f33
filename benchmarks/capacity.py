"""Capacity measured the way servers are measured (issue 27): one server process pinned to one core, an open-loop
generator pinned to the other, raw JSON-RPC ``tools/call`` POSTs to the stateless ``/mcp`` at fixed offered rates.

Open loop: request ``i`` of a step is due at ``start + i / rate`` and is sent then, whatever happened to the
ones before it; its latency runs from when it was due, so queueing in the server (or in a late generator) is
never hidden. Every question is new (windows of the local plans' own text, never asked twice in a run), so no
answer or query vector is remembered. Per rate and tool it prints: offered and answered calls/s, refusals
(``overloaded``, with how fast they came back), errors (anything else, timeouts included), latency
p50/p95/p99/max of the answered calls, the server's CPU ms per call (``/proc/<pid>/stat`` utime + stime over
the step, divided by the calls that came back) and how late the generator itself sent (its p99; if that grows,
the generator, not the server, is the limit).

The server (``policy-kb serve --servers policy-kb,document-store,kb,governance``, one process) runs over a store
under ``--data-dir`` holding four local plans (ingested by ``benchmarks/sections.py``'s own ``ingest_plan`` if
missing), this project's decision records as governance documents, one plan as an application's documents and
notes cut from the plans' text. ``--floor`` also runs ``benchmarks/floor_service.py policy-kb`` (and with
``--embed``) at the same rates: the same transport, tool dispatch and serialisation around a search that costs
nothing (or only the question's embedding). ``--overload S`` ends with ``search_policy`` at ``--overload-factor``
(3) times the capacity (the highest rate answered in full within the latency goal) for ``S`` seconds, then a
quarter of capacity: what shedding does (refusals' p50/p99/max, completed calls/s against capacity, admitted p99).

    .venv/bin/python benchmarks/capacity.py --plans ../shared/data/local_plans                 # every tool
    .venv/bin/python benchmarks/capacity.py --plans ../shared/data/local_plans --tools search_policy \\
        --rates 50,100,150,200,250,300 --floor --overload 20
    .venv/bin/python benchmarks/capacity.py --url policy-kb=http://127.0.0.1:3003 --pid 1234 --tools search_policy

Figures: docs/performance.md › "Capacity (benchmarks/capacity.py)" and docs/decisions/0034-capacity-and-admission.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import aiohttp  # noqa: E402
import orjson  # noqa: E402

from benchmarks.harness import Service, free_port, health_ok, percentiles, start_service  # noqa: E402

SERVERS = {  # tool -> the server that has it
    "search_policy": "policy-kb",
    "get_policy_section": "policy-kb",
    "search_application_docs": "document-store",
    "kb_search": "kb",
    "query_governance": "governance",
}
PORT_VARIABLES = {
    "policy-kb": "POLICY_KB_PORT",
    "document-store": "DOCUMENT_STORE_PORT",
    "kb": "KB_MCP_PORT",
    "governance": "GOVERNANCE_PORT",
}
PLAN_FILES = [  # the plans benchmarks/plan_questions.json asks about: ~2,700 chunks
    "babergh_midsuffolk_joint_local_plan_part1_2023.pdf",
    "breckland_local_plan_reg18_preferred_options_2024.pdf",
    "buckinghamshire_draft_local_plan_partB_DM_policies_2025.pdf",
    "fenland_local_plan_adopted_2014.pdf",
]
APPLICATION_FILE = "broxbourne_wharf_road_spd.pdf"
APPLICATION_REF = "CAP/BENCH/1"
NOTES = 1000
LATENCY_GOAL_MS = 50.0
TIMEOUT_S = 30.0
HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
PROFILE: dict[str, Path] = {}
"""``--py-spy``: where each run's profiles go (raw collapsed stacks, one file per tool and rate)."""
TEMPLATES = [
    "What does the plan say about {}?",
    "Is {} acceptable under the local plan?",
    "Which policy covers {}?",
    "{}: what is required?",
    "When is {} permitted?",
    "How should an application address {}?",
]
WORD = re.compile(r"[A-Za-z][A-Za-z'-]{2,}")


# -- the corpus and the questions -----------------------------------------------------------------------


@dataclass
class Corpus:
    texts: list[str]
    sections: list[tuple[str, str]]
    """(source, section_ref) of the policy sections the plans hold."""
    stores: Any = None
    """The store's ``PolicyStores``, opened in this process (for the in-process split)."""


def prepare_store(data_dir: Path, plans: Path) -> Corpus:
    """Ingest what is missing (the product's own paths), then read the plans' chunks back from Chroma."""
    from benchmarks.sections import ingest_plan
    from lib.composition import open_stores
    from lib.config import load_settings
    from lib.documents.ingest import ingest_document_bytes
    from lib.governance.ingest import ingest_governance_corpus_files
    from lib.notes.ingest import ingest_note

    settings = load_settings(data_dir=data_dir, redis_url=None)
    stores = open_stores(settings)
    for name in PLAN_FILES:
        ingest_plan(stores.policies, plans / name)
    collection = stores.chroma.get_collection(settings.chroma.policy_collection)
    got = collection.get(include=["documents", "metadatas"])
    texts = [text for text in got["documents"] or [] if text]
    sections = sorted(
        {
            (str(m["source"]), str(m["section_ref"]))
            for m in got["metadatas"] or []
            if m and str(m.get("section_ref", "")).startswith("Policy ")
        }
    )
    if not stores.governance.registry.ids():
        ingest_governance_corpus_files(stores.governance, ROOT / "docs" / "decisions")
    if not stores.documents.registry.application_ids(APPLICATION_REF):
        ingest_document_bytes(
            stores.documents,
            (plans / APPLICATION_FILE).read_bytes(),
            file_name=APPLICATION_FILE,
            application_ref=APPLICATION_REF,
        )
    have = stores.notes.registry.counts().get("notes", 0)
    rng = random.Random(11)
    for index in range(have, NOTES):
        ingest_note(stores.notes, rng.choice(texts)[:1500], [f"collection:bench{index % 3}"], title=f"note {index}")
    print(
        f"store {data_dir}: {len(texts)} plan chunks, {len(sections)} policy sections, {NOTES} notes, "
        f"decision records as governance documents, {APPLICATION_FILE} as {APPLICATION_REF}"
    )
    return Corpus(texts, sections, stores.policies)


def new_questions(texts: list[str], seed: int) -> Iterator[str]:
    """Questions never asked before in this run: a window of 3 to 7 words of a chunk, in a template."""
    rng = random.Random(seed)
    words = [WORD.findall(text) for text in texts]
    words = [w for w in words if len(w) >= 12]
    asked: set[str] = set()
    while True:
        chunk = rng.choice(words)
        width = rng.randint(3, 7)
        start = rng.randrange(0, len(chunk) - width)
        question = rng.choice(TEMPLATES).format(" ".join(chunk[start : start + width]).lower())
        if question not in asked:
            asked.add(question)
            yield question


def in_process(corpus: Corpus, calls: int) -> None:
    """Where a call's server time goes below the MCP/HTTP layer: the dated hybrid ``search_policy`` of new
    questions called directly, and the question's embedding alone (CPU of this thread, ms per call)."""
    from lib.policies.search import search_policy

    stores = corpus.stores
    stores.embedder.warm_up()  # the ONNX query encoder, as the service's warm-up loads it
    stores.embedder.query_cache_size = 0
    make = argument_maker("search_policy", corpus, seed=5)
    others = new_questions(corpus.texts, seed=6)  # embedded alone: never the question searched next
    embed_ms: list[float] = []
    search_ms: list[float] = []
    for i in range(calls + 20):
        args, other = make(), next(others)
        started = time.thread_time()
        stores.embedder.embed_queries([other])
        embedded = time.thread_time()
        search_policy(stores, args["query"], effective_date=args["effective_date"], n_results=10, mode="hybrid")
        if i >= 20:  # the first calls load the blocks
            embed_ms.append((embedded - started) * 1000)
            search_ms.append((time.thread_time() - embedded) * 1000)
    print(
        f"  in process, one thread, {calls} new questions, CPU ms per call (mean / p50): dated hybrid search_policy "
        f"{sum(search_ms) / calls:.2f} / {percentiles(search_ms, (50,))[0]:.2f}, of which embedding the question "
        f"{sum(embed_ms) / calls:.2f} / {percentiles(embed_ms, (50,))[0]:.2f}"
    )


def random_day(rng: random.Random) -> str:
    """A day the plans are in force (they are registered from 2000-01-01)."""
    return (date(2000, 1, 2) + timedelta(days=rng.randrange(0, (date.today() - date(2000, 1, 2)).days))).isoformat()


def argument_maker(tool: str, corpus: Corpus, seed: int) -> Callable[[], dict[str, Any]]:
    """Each call's arguments: a new question (or, for sections, a section and a day) every time."""
    questions = new_questions(corpus.texts, seed)
    rng = random.Random(seed)
    if tool == "search_policy":
        return lambda: {"query": next(questions), "effective_date": random_day(rng), "n_results": 10, "mode": "hybrid"}
    if tool == "get_policy_section":

        def section() -> dict[str, Any]:
            source, ref = rng.choice(corpus.sections)
            return {"source": source, "section_ref": ref, "effective_date": random_day(rng)}

        return section
    if tool == "search_application_docs":
        return lambda: {"query": next(questions), "application_ref": APPLICATION_REF, "max_results": 10}
    if tool == "kb_search":
        return lambda: {"query": next(questions), "top": 10, "collection": f"bench{rng.randrange(3)}"}
    if tool == "query_governance":
        return lambda: {"question": next(questions), "top_k": 5, "as_of": random_day(rng)}
    raise SystemExit(f"unknown tool {tool}")


# -- the server ------------------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """utime + stime of the process (all its threads), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def minor_faults(pid: int) -> int:
    """Minor page faults of the process so far (all its threads): pages first touched, each ~4 µs here."""
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[7])


def pin(pid: int, core: int) -> None:
    """Pin every thread of ``pid`` (threads started later inherit it from the thread that starts them)."""
    for task in Path(f"/proc/{pid}/task").iterdir():
        os.sched_setaffinity(int(task.name), {core})


def start_server(
    data_dir: Path, command: list[str], names: list[str], env_extra: dict[str, str]
) -> tuple[Service, dict[str, str]]:
    from lib.stores.redis_server import embedded_url

    ports = {name: free_port() for name in names}
    env = {
        "POLICY_KB_DATA_DIR": str(data_dir),
        "REDIS_URL": embedded_url(data_dir / "redis"),
        "ENABLE_OCR": "false",
        "SEARCH_THREADS": "1",  # the one core it is pinned to (the default agrees: it starts on the generator's core)
        **{PORT_VARIABLES[name]: str(port) for name, port in ports.items()},
        **env_extra,
    }
    urls = {name: f"http://127.0.0.1:{port}" for name, port in ports.items()}
    checks = [health_ok(url) for url in urls.values()]
    service = start_service(command, env, lambda: all(check() for check in checks), timeout=600)
    return service, urls


def redis_pid(data_dir: Path) -> int | None:
    pid_file = data_dir / "redis" / "redis.pid"
    return int(pid_file.read_text().strip()) if pid_file.exists() else None


# -- the open-loop generator ----------------------------------------------------------------------------


@dataclass
class Step:
    label: str
    rate: float
    seconds: float
    answered_ms: list[float] = field(default_factory=list)
    refused_ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    send_late_ms: list[float] = field(default_factory=list)
    cpu_s: float = 0.0
    wall_s: float = 0.0


def classify(status: int, body: bytes) -> str:
    """``answered``, ``refused`` (overloaded: 503 or the tool error ``overloaded``) or an error's text."""
    if status == 503:
        return "refused"
    if status != 200:
        return f"HTTP {status}: {body[:120]!r}"
    message = orjson.loads(body)
    if "error" in message:
        error = message["error"]
        return "refused" if (error.get("data") or {}).get("error_type") == "overloaded" else f"JSON-RPC {error}"[:200]
    result = message["result"]
    if result.get("isError"):
        kind = (result.get("structuredContent") or {}).get("error_type")
        return "refused" if kind == "overloaded" else f"tool error {kind}"
    return "answered"


async def run_step(
    http: aiohttp.ClientSession,
    url: str,
    tool: str,
    make_args: Callable[[], dict[str, Any]],
    step: Step,
    pid: int | None,
    profile: Path | None = None,
) -> Step:
    loop = asyncio.get_running_loop()
    total = int(step.rate * step.seconds)
    bodies = [
        orjson.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": tool, "arguments": make_args()}}
        )
        for i in range(total)
    ]

    async def one(body: bytes, due: float) -> None:
        step.send_late_ms.append((loop.time() - due) * 1000)
        try:
            async with http.post(url, data=body, headers=HEADERS) as response:
                payload = await response.read()
                outcome = classify(response.status, payload)
        except Exception as exc:  # every failure is a figure here, never a crash of the benchmark
            outcome = f"{type(exc).__name__}: {exc}"[:200]
        elapsed = (loop.time() - due) * 1000
        if outcome == "answered":
            step.answered_ms.append(elapsed)
        elif outcome == "refused":
            step.refused_ms.append(elapsed)
        else:
            step.errors.append(outcome)

    profiler = None
    if profile is not None and pid:  # py-spy (the venv's) samples the server over the step without pausing it
        spy = str(Path(sys.executable).with_name("py-spy"))
        command = [
            spy,
            "record",
            "-p",
            str(pid),
            "-d",
            str(int(step.seconds)),
            "--nonblocking",
            "-r",
            "200",
            "-f",
            "raw",
            "-o",
            str(profile.with_name(f"{profile.stem}-{tool}-{step.rate:.0f}.txt")),
        ]
        profiler = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
    cpu_before = cpu_seconds(pid) if pid else 0.0
    start = loop.time() + 0.05
    tasks = []
    for i, body in enumerate(bodies):
        due = start + i / step.rate
        delay = due - loop.time()
        if delay > 0:
            await asyncio.sleep(delay)
        tasks.append(asyncio.create_task(one(body, due)))
    await asyncio.gather(*tasks)
    step.wall_s = loop.time() - start
    step.cpu_s = (cpu_seconds(pid) - cpu_before) if pid else 0.0
    if profiler is not None:
        await profiler.wait()
    return step


async def until_idle(pid: int | None, settle: float, most: float = 120.0) -> None:
    """Wait until the server has drained what it still holds (it answers calls their clients gave up on): its CPU
    below 5% of a core over ``settle`` seconds, or ``most`` seconds. Else a step would pay for the one before."""
    waited = 0.0
    while True:
        before = cpu_seconds(pid) if pid else 0.0
        await asyncio.sleep(settle)
        waited += settle
        if not pid or cpu_seconds(pid) - before < 0.05 * settle or waited >= most:
            return


HEADER = (
    f"  {'step':<34}{'offered/s':>10}{'answered/s':>11}{'refused (p99 ms)':>18}{'err':>6}{'p50':>8}{'p95':>8}"
    f"{'p99':>8}{'max':>9}{'cpu ms/call':>12}{'late p99':>9}"
)


def report(step: Step) -> None:
    done = len(step.answered_ms) + len(step.refused_ms)
    p50, p95, p99, top = percentiles(step.answered_ms, (50, 95, 99, 100)) if step.answered_ms else (0, 0, 0, 0)
    cpu = f"{step.cpu_s * 1000 / done:.2f}" if done and step.cpu_s else "-"
    late = percentiles(step.send_late_ms, (99,))[0]
    refused = f"{len(step.refused_ms)}"
    if step.refused_ms:
        refused += f" ({percentiles(step.refused_ms, (99,))[0]:.0f})"
    answered = len(step.answered_ms) / max(step.wall_s, step.seconds)
    print(
        f"  {step.label:<34}{step.rate:>10.0f}{answered:>11.1f}{refused:>18}{len(step.errors):>6}{p50:>8.1f}"
        f"{p95:>8.1f}{p99:>8.1f}{top:>9.1f}{cpu:>12}{late:>9.1f}",
        flush=True,
    )
    for error in sorted(set(step.errors))[:3]:
        print(f"      e.g. {error}")


async def sweep(
    urls: dict[str, str],
    tools: list[str],
    corpus: Corpus,
    rates: list[float],
    seconds: float,
    pid: int | None,
    label: str,
    settle: float,
) -> dict[str, list[Step]]:
    connector = aiohttp.TCPConnector(limit=4000, keepalive_timeout=2.0)  # under uvicorn's 5 s: no reuse race
    timeout = aiohttp.ClientTimeout(total=TIMEOUT_S)
    steps: dict[str, list[Step]] = {}
    async with aiohttp.ClientSession(connector=connector, timeout=timeout) as http:
        for tool_index, tool in enumerate(tools):
            url = f"{urls[SERVERS[tool]]}/mcp"
            make_args = argument_maker(tool, corpus, seed=hash((label, tool_index)) & 0xFFFF)
            await run_step(http, url, tool, make_args, Step("warm", 20, 2), pid)  # connections open, code paths hot
            for rate in rates:
                step = Step(f"{label} {tool}", rate, seconds)
                await run_step(http, url, tool, make_args, step, pid, PROFILE.get(label))
                report(step)
                steps.setdefault(tool, []).append(step)
                await until_idle(pid, settle)
    return steps


async def overload(url: str, corpus: Corpus, found: float, factor: float, seconds: float, pid: int | None) -> None:
    """``factor`` × the capacity ``found`` for ``seconds``: how fast the refusals come back, how many calls are
    still answered (against the capacity) and how late; then a quarter of capacity at once: normal again?"""
    connector = aiohttp.TCPConnector(limit=8000, keepalive_timeout=2.0)
    async with aiohttp.ClientSession(connector=connector, timeout=aiohttp.ClientTimeout(total=TIMEOUT_S)) as http:
        make_args = argument_maker("search_policy", corpus, seed=99)
        step = Step(f"overload {factor:g}x search_policy", factor * found, seconds)
        report(await run_step(http, url, "search_policy", make_args, step, pid))
        print(overload_summary(step, found), flush=True)
        after = Step("right after, at capacity/4", found / 4, 5)
        report(await run_step(http, url, "search_policy", make_args, after, pid))


def overload_summary(step: Step, found: float) -> str:
    """The figures the overload goal is stated in: refusals' latency, completed calls/s against capacity, and the
    admitted calls' p99."""
    completed = len(step.answered_ms) / max(step.wall_s, step.seconds)
    refused = "none"
    if step.refused_ms:
        p50, p99, top = percentiles(step.refused_ms, (50, 99, 100))
        refused = f"{len(step.refused_ms)}, p50 {p50:.1f} / p99 {p99:.1f} / max {top:.1f} ms"
    admitted = percentiles(step.answered_ms, (99,))[0] if step.answered_ms else 0.0
    share = f"; the server had {100 * step.cpu_s / step.wall_s:.0f}% of a core" if step.cpu_s else ""
    return (
        f"    refusals: {refused}; completed {completed:.1f} calls/s = {100 * completed / found:.0f}% of capacity "
        f"({found:.0f}/s); admitted p99 {admitted:.1f} ms; errors {len(step.errors)}{share}"
    )


def capacity(steps: list[Step]) -> tuple[float, bool]:
    """The highest offered rate answered in full (≥ 98%) with p99 within the goal, and True; if none met the
    goal (a loaded machine), the highest rate answered in full, and False (0 if none)."""
    full = [s for s in steps if len(s.answered_ms) >= 0.98 * s.rate * s.seconds]
    good = [s.rate for s in full if percentiles(s.answered_ms, (99,))[0] <= LATENCY_GOAL_MS]
    return (max(good), True) if good else (max((s.rate for s in full), default=0.0), False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "--plans",
        type=Path,
        default=ROOT.parent / "shared" / "data" / "local_plans",
        help="the local plan PDFs (read where they lie)",
    )
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "capacity")
    parser.add_argument("--url", action="append", default=[], help="NAME=URL of a running server (skip starting one)")
    parser.add_argument("--pid", type=int, help="the running server's pid (for CPU per call and pinning)")
    parser.add_argument("--tools", default=",".join(SERVERS), help="comma-separated")
    parser.add_argument("--rates", default="25,50,100,150,200,250", help="offered calls/s, comma-separated")
    parser.add_argument("--seconds", type=float, default=10.0, help="per step")
    parser.add_argument("--settle", type=float, default=2.0, help="idle window the server must show between steps")
    parser.add_argument("--floor", action="store_true", help="also floor_service.py (plain and --embed)")
    parser.add_argument("--overload", type=float, default=0.0, help="seconds at --overload-factor × the capacity")
    parser.add_argument("--overload-factor", type=float, default=3.0, help="the overload step's rate ÷ capacity")
    parser.add_argument("--in-process", type=int, default=300, help="calls of the in-process split (0: none)")
    parser.add_argument("--py-spy", type=Path, help="record the server with py-spy during each step, to FILE-*.txt")
    parser.add_argument("--server-core", type=int, default=0)
    parser.add_argument("--client-core", type=int, default=1)
    parser.add_argument("--env", action="append", default=[], help="NAME=VALUE for the started server")
    args = parser.parse_args()
    tools = [t.strip() for t in args.tools.split(",") if t.strip()]
    rates = [float(r) for r in args.rates.split(",")]
    env_extra = dict(item.split("=", 1) for item in args.env)
    if args.py_spy:
        PROFILE.update(
            {
                label: args.py_spy.with_name(f"{args.py_spy.stem}-{label.replace('+', '-')}")
                for label in ("service", "floor", "floor+embed")
            }
        )
    corpus = prepare_store(args.data_dir, args.plans)
    os.sched_setaffinity(0, {args.server_core})
    if args.in_process:
        in_process(corpus, args.in_process)
    os.sched_setaffinity(0, {args.client_core})
    if (pid := redis_pid(args.data_dir)) is not None:
        pin(pid, args.client_core)
    print(
        f"{date.today()}, {os.cpu_count()} CPUs, load average {os.getloadavg()}; server on core {args.server_core}, "
        f"generator and Redis on core {args.client_core}; {args.seconds:.0f} s per step; latency from when each "
        f"call was due (ms); answered/s over the time until the step's last answer"
    )
    print(HEADER)

    def run(command: list[str] | None, label: str) -> dict[str, list[Step]]:
        names = sorted({SERVERS[t] for t in tools}) if command is None or "floor" not in label else ["policy-kb"]
        if args.url and command is None:
            urls = dict(item.split("=", 1) for item in args.url)
            if args.pid:
                pin(args.pid, args.server_core)
            return asyncio.run(
                sweep(
                    urls,
                    [t for t in tools if SERVERS[t] in urls],
                    corpus,
                    rates,
                    args.seconds,
                    args.pid,
                    label,
                    args.settle,
                )
            )
        service, urls = start_server(args.data_dir, command or serve_command(names), names, env_extra)
        try:
            pin(service.pid, args.server_core)
            wanted = tools if "floor" not in label else ["search_policy"]
            steps = asyncio.run(sweep(urls, wanted, corpus, rates, args.seconds, service.pid, label, args.settle))
            if args.overload and "search_policy" in steps and "floor" not in label:
                found, in_goal = capacity(steps["search_policy"])
                print(
                    f"  capacity: {found:.0f} calls/s answered in full, "
                    + (f"p99 ≤ {LATENCY_GOAL_MS:.0f} ms" if in_goal else "none within the latency goal")
                )
                if not found:  # a starved core answers no rate in full: overload what it did answer
                    found = max(len(s.answered_ms) / max(s.wall_s, s.seconds) for s in steps["search_policy"])
                    print(f"  overloading the most answered instead: {found:.1f} calls/s")
                if found:
                    overloaded = overload(
                        f"{urls['policy-kb']}/mcp", corpus, found, args.overload_factor, args.overload, service.pid
                    )
                    asyncio.run(overloaded)
            return steps
        finally:
            service.stop()

    run(None, "service")
    if args.floor:
        floor = [sys.executable, str(ROOT / "benchmarks" / "floor_service.py"), "policy-kb"]
        run(floor, "floor")
        run([*floor, "--embed"], "floor+embed")
    print(f"load average after: {os.getloadavg()}")


def serve_command(names: list[str]) -> list[str]:
    return [sys.executable, "-m", "deployments.cli", "serve", "--servers", ",".join(names)]


if __name__ == "__main__":
    main()
