"""Soak: a running stack under a mixed load for a long time, watched for errors and for what leaks.

    policy-kb stack up --free-ports --dir /tmp/soak-stack            # or a stack already up
    .venv/bin/python benchmarks/soak.py --stack /tmp/soak-stack [--minutes 30] [--warmup-minutes M] \\
        [--clients 6] [--pdf FILE]

Over the stack's stores it starts one more service with the ``document-store`` and ``kb`` servers (the stack's
replicas serve ``policy-kb``), registers a policy of its own with one revision, then for ``--minutes`` runs
``--clients`` MCP clients (the SDK's, over Streamable HTTP), each pausing up to 0.2 s between calls, mixing:
dated ``search_policy`` through either replica (50%), ``get_policy_section`` of a section a search found
(20%), ``search_application_docs`` (10%), and kb work (20%: ``kb_search``, ``kb_addnote``,
``kb_update_note``, a small file through ``kb_upload_start``/``_chunk``/``_finish``). Every
``--upload-every`` minutes a new revision of a second policy (``SOAK_UPLOADS``) goes up over REST (the Prefect
worker ingests it) and the older one is deleted, as ``benchmarks/stack_load.py`` does.

Every 10 s it samples, for each replica and the extra service (the process listening on its port), RSS, open
file descriptors, threads and child processes; every 5 minutes it also sends each one ``SIGUSR2``, so the
replicas' logs say what their heaps hold (``lib.observability.memory``; with ``POLICY_KB_TRACE_ALLOCATIONS``
set when the stack starts, tracemalloc snapshots too). Printed at the end: calls and errors per tool (goal: 0
errors), latency p50/p99 per tool, and per process the figures at the end of the warm-up and at the end with
the growth (goal: RSS growth <= 5% after warm-up; descriptors, threads and children flat), then the consistency
audit's verdict (``policy-kb audit`` over the stack's stores; goal: nothing found). Exit status 1 if a goal
is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
from collections import defaultdict
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any

import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import free_port, health_ok, percentiles, start_service  # noqa: E402
from benchmarks.stack_load import (  # noqa: E402
    DEFAULT_PDF,
    QUESTIONS,
    Ingestion,
    ingest_in_background,
    listening_process,
    random_day,
)
from deployments.stack import StackLayout  # noqa: E402

SOURCE = "SOAK_BENCH"
"""The policy read by searches and section reads: one revision, ingested at the start and left alone."""
UPLOADS = "SOAK_UPLOADS"
"""The policy the periodic uploads go to (a new revision each time, the older deleted). Kept apart from
``SOURCE``: while a new revision is processing, the days after its start have no revision in force (spec 000
FR-007 resolves only active and superseded revisions), so a section read dated then is rightly
``revision_not_found``, which is not what a soak looks for."""
CALL_TIMEOUT_S = 60.0
SAMPLE_EVERY_S = 10.0
REPORT_EVERY_SAMPLES = 30
"""Every 5 minutes each watched process is also asked (``SIGUSR2``) to log what its heap holds."""
RSS_GROWTH_GOAL = 0.05
PLATEAU_WINDOW_S = 300.0
PLATEAU_TOLERANCE = 0.01
"""Without ``--warmup-minutes``, the warm-up ends at the first sample where every watched process's RSS grew less
than 1% over the 5 minutes before it: the caches (answers, query vectors, searched blocks) have filled. A leak
never gets there, or keeps growing after; either way the goal is missed. At least half the run must remain
after the warm-up, or the run is too short to say."""
SEARCH_FROM = date(2025, 6, 1)
"""Searches are dated from here to today: after every revision of ``SOAK_BENCH`` starts (each upload starts a
day after the last, from 12 December 2024), so a dated read always has a revision in force."""


@dataclass
class Sample:
    at: float
    rss: int
    fds: int
    threads: int
    children: int


@dataclass
class Tally:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    sections: list[str] = field(default_factory=list)
    notes: list[int] = field(default_factory=list)


class Sampler(threading.Thread):
    """Each watched process's figures every ``SAMPLE_EVERY_S``."""

    def __init__(self, urls: dict[str, str]) -> None:
        super().__init__(daemon=True)
        self.processes = {name: listening_process(url) for name, url in urls.items()}
        self.samples: dict[str, list[Sample]] = {name: [] for name in urls}
        self.done = threading.Event()

    def sample(self) -> None:
        for name, process in self.processes.items():
            if process is None:
                continue
            try:
                if len(self.samples[name]) % REPORT_EVERY_SAMPLES == 0:
                    process.send_signal(signal.SIGUSR2)  # lib.observability.memory
                with process.oneshot():
                    figures = Sample(
                        time.monotonic(),
                        process.memory_info().rss,
                        process.num_fds(),
                        process.num_threads(),
                        len(process.children(recursive=True)),
                    )
            except psutil.Error:
                continue
            self.samples[name].append(figures)

    def run(self) -> None:
        self.sample()
        while not self.done.wait(SAMPLE_EVERY_S):
            self.sample()


async def call(session: Any, tool: str, args: dict[str, Any], tally: Tally) -> dict[str, Any] | None:
    started = time.perf_counter()
    try:
        result = await asyncio.wait_for(session.call_tool(tool, args), CALL_TIMEOUT_S)
    except Exception as exc:  # a timeout or a transport failure is an error of the run, counted
        tally.errors[tool].append(repr(exc)[:200])
        return None
    tally.latencies[tool].append((time.perf_counter() - started) * 1000)
    content = result.structured_content or {}
    if result.is_error or content.get("status") == "error":
        tally.errors[tool].append(str(content.get("error_type") or content)[:200])
        return None
    return content


async def kb_work(kb: Any, rng: random.Random, tally: Tally, n: int) -> None:
    choice = rng.random()
    if choice < 0.4 or not tally.notes:
        await call(kb, "kb_search", {"query": rng.choice(QUESTIONS), "top": 5}, tally)
    if choice < 0.2:
        job = await call(kb, "kb_addnote", {"text": f"Soak note {n}: {rng.choice(QUESTIONS)}", "tags": ["soak"]}, tally)
        if job is not None:
            for _ in range(30):
                jobs = await call(kb, "kb_jobs", {}, tally)
                done = [j for j in (jobs or {}).get("jobs", []) if j.get("job_id") == job["job_id"]]
                if done and done[0].get("document_id"):
                    tally.notes.append(int(done[0]["document_id"]))
                    break
                await asyncio.sleep(2.0)
    elif choice < 0.6 and tally.notes:
        text = f"Soak note rewritten {n}: {rng.choice(QUESTIONS)}"
        await call(kb, "kb_update_note", {"document_id": rng.choice(tally.notes), "text": text}, tally)
    elif choice > 0.9:
        data = f"# Soak file {n}\n\n{rng.choice(QUESTIONS)}\n".encode()
        started = await call(kb, "kb_upload_start", {"filename": f"soak-{n}.md", "total_size": len(data)}, tally)
        if started is not None:
            chunk = {"upload_id": started["upload_id"], "data": base64.b64encode(data).decode(), "chunk_index": 0}
            if await call(kb, "kb_upload_chunk", chunk, tally) is not None:
                await call(kb, "kb_upload_finish", {"upload_id": started["upload_id"]}, tally)


@contextlib.asynccontextmanager
async def connected(urls: dict[str, str], key: str) -> AsyncIterator[dict[str, Any]]:
    """One SDK session per server, initialised."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from tests.mcp_http import mcp_http_client

    headers = {"Authorization": f"Bearer {key}"} if key else {}
    async with contextlib.AsyncExitStack() as stack:
        sessions = {}
        for name, url in urls.items():
            http = await stack.enter_async_context(mcp_http_client(headers=headers))
            read, write = await stack.enter_async_context(streamable_http_client(f"{url}/mcp", http_client=http))
            sessions[name] = await stack.enter_async_context(ClientSession(read, write))
            await sessions[name].initialize()
        yield sessions


async def client(urls: dict[str, str], key: str, seed: int, stop_at: float, tally: Tally) -> None:
    rng = random.Random(seed)
    n = 0
    while time.monotonic() < stop_at:
        try:
            async with connected(urls, key) as sessions:
                while time.monotonic() < stop_at:
                    n += 1
                    await one_call(sessions, rng, tally, seed * 1_000_000 + n)
                    await asyncio.sleep(rng.random() * 0.2)
        except Exception as exc:  # a lost connection ends the SDK's session: an error of the run; reconnect
            tally.errors["(connection)"].append(repr(exc)[:200])
            await asyncio.sleep(1.0)


async def one_call(sessions: dict[str, Any], rng: random.Random, tally: Tally, n: int) -> None:
    replica = sessions[rng.choice(["replica-a", "replica-b"])]
    roll = rng.random()
    if roll < 0.5:
        args = {"query": rng.choice(QUESTIONS), "effective_date": random_day(rng, SEARCH_FROM), "n_results": 5}
        found = await call(replica, "search_policy", args, tally)
        hits = (found or {}).get("results", [])[:2]
        tally.sections.extend(h["section_ref"] for h in hits if h["source"] == SOURCE)
        del tally.sections[:-200]
    elif roll < 0.7 and tally.sections:
        day = random_day(rng, SEARCH_FROM)
        args = {"source": SOURCE, "section_ref": rng.choice(tally.sections), "effective_date": day}
        await call(replica, "get_policy_section", args, tally)
    elif roll < 0.8:
        await call(sessions["documents"], "search_application_docs", {"query": rng.choice(QUESTIONS)}, tally)
    else:
        await kb_work(sessions["kb"], rng, tally, n)


def uploads(url: str, key: str, pdf: Path, every_s: float, stop_at: float, done: list[Ingestion]) -> None:
    """A new revision of ``SOAK_BENCH`` every ``every_s`` until ``stop_at`` (the older one deleted)."""
    while time.monotonic() < stop_at:
        ingestion = Ingestion(UPLOADS)
        ingest_in_background(url, key, pdf, ingestion)
        done.append(ingestion)
        time.sleep(max(0.0, min(every_s, stop_at - time.monotonic())))


def plateau(samples: dict[str, list[Sample]], started: float) -> float | None:
    """When the warm-up ended (``PLATEAU_WINDOW_S``, ``PLATEAU_TOLERANCE``), or ``None`` if it never did."""
    watched = [s for s in samples.values() if s]
    if not watched:
        return None
    for probe in watched[0]:
        if probe.at < started + PLATEAU_WINDOW_S:
            continue
        if all(_flat_before(series, probe.at) for series in watched):
            return probe.at
    return None


def _flat_before(series: list[Sample], at: float) -> bool:
    now = [s for s in series if s.at <= at]
    then = [s for s in now if s.at <= at - PLATEAU_WINDOW_S]
    return bool(now and then) and now[-1].rss <= then[-1].rss * (1 + PLATEAU_TOLERANCE)


def growth(samples: list[Sample], warm_at: float) -> tuple[Sample, Sample] | None:
    after = [s for s in samples if s.at >= warm_at]
    return (after[0], after[-1]) if len(after) >= 2 else None


def documents_log(stack: Path) -> Path:
    """Where the soak's own document-store and kb service logs (its ``service.memory`` lines among them)."""
    return stack / "logs" / "soak-documents.log"


def memory_reports(log: Path) -> list[dict[str, str]]:
    """The figures of each ``service.memory`` line in a service's log, oldest first."""
    lines = log.read_text(errors="replace").splitlines() if log.exists() else []
    return [
        dict(re.findall(r"(\w+)=(\S+)", line.split("service.memory ", 1)[1]))
        for line in lines
        if "service.memory " in line
    ]


def report(
    args: argparse.Namespace,
    tally: Tally,
    sampler: Sampler,
    started: float,
    ingestions: list[Ingestion],
    audit: subprocess.CompletedProcess[str],
) -> bool:
    ok = True
    total = sum(len(v) for v in tally.latencies.values())
    errors = sum(len(v) for v in tally.errors.values())
    if args.warmup_minutes is not None:
        warm_at: float | None = started + args.warmup_minutes * 60
        warm_up = f"warm-up {args.warmup_minutes:g} min, fixed"
    else:
        warm_at = plateau(sampler.samples, started)
        warm_up = (
            f"warm-up {(warm_at - started) / 60:.1f} min, until RSS grew <{PLATEAU_TOLERANCE:.0%} in "
            f"{PLATEAU_WINDOW_S / 60:g} min"
            if warm_at is not None
            else "RSS never levelled off"
        )
    if warm_at is None or warm_at > started + args.minutes * 30:
        ok = False
        warm_up += ": too little of the run left after it to measure growth"
        warm_at = warm_at or started + args.minutes * 30
    print(f"soak: {args.minutes:g} min, {args.clients} clients, {total} calls answered, {errors} errors ({warm_up})")
    print(f"  {'tool':<26}{'calls':>8}{'errors':>8}{'p50 ms':>9}{'p99 ms':>9}")
    for tool in sorted(set(tally.latencies) | set(tally.errors)):
        samples = tally.latencies.get(tool, [])
        p50, p99 = percentiles(samples, (50, 99)) if samples else (float("nan"), float("nan"))
        print(f"  {tool:<26}{len(samples):>8}{len(tally.errors.get(tool, [])):>8}{p50:>9.1f}{p99:>9.1f}")
        for message in sorted(set(tally.errors.get(tool, [])))[:3]:
            print(f"      {message}")
    ok &= errors == 0
    print(f"  uploads: {len(ingestions)}, " + ", ".join(f"{i.outcome} in {i.seconds:.0f} s" for i in ingestions))
    ok &= all(i.outcome in ("active", "superseded") for i in ingestions)
    print(
        f"  {'process':<12}{'RSS MB warm':>12}{'RSS MB end':>11}{'growth':>8}{'fds':>10}{'threads':>10}{'children':>10}"
    )
    for name, watched in sampler.samples.items():
        pair = growth(watched, warm_at)
        if pair is None:
            print(f"  {name:<12} not sampled")
            ok = False
            continue
        warm, end = pair
        grew = end.rss / warm.rss - 1
        print(
            f"  {name:<12}{warm.rss / 2**20:>12.0f}{end.rss / 2**20:>11.0f}{grew:>8.1%}"
            f"{f'{warm.fds}->{end.fds}':>10}{f'{warm.threads}->{end.threads}':>10}"
            f"{f'{warm.children}->{end.children}':>10}"
        )
        ok &= grew <= RSS_GROWTH_GOAL and end.children <= warm.children and end.fds <= warm.fds + 5
        ok &= end.threads <= warm.threads + 2
    print("  RSS MB every 5 minutes (a leak keeps climbing; caches filling level off):")
    for name, watched in sampler.samples.items():
        marks = [s for i, s in enumerate(watched) if i % int(300 / SAMPLE_EVERY_S) == 0] + watched[-1:]
        print(f"  {name:<12}" + " ".join(f"{s.rss / 2**20:.0f}" for s in marks))
    print(
        "  each server's heap every 5 minutes: Python's blocks (thousands) / glibc's freed-but-held MB"
        + (" / tracemalloc's MB" if os.environ.get("POLICY_KB_TRACE_ALLOCATIONS") else "")
    )
    logs = {name: args.stack / "logs" / f"{name}.log" for name in ("replica-a", "replica-b")}
    for name, log in (logs | {"documents": documents_log(args.stack)}).items():
        reports = memory_reports(log)
        print(
            f"  {name:<12}"
            + " ".join(
                f"{int(r['python_blocks']) // 1000}/{int(r.get('malloc_free', 0)) / 2**20:.0f}"
                + (f"/{int(r['traced']) / 2**20:.0f}" if "traced" in r else "")
                for r in reports
            )
        )
    verdict = "clean" if audit.returncode == 0 else f"findings (exit {audit.returncode})"
    print(f"  audit: {verdict}")
    if audit.returncode != 0:
        print(audit.stdout[-2000:], audit.stderr[-2000:])
    ok &= audit.returncode == 0
    print(f"  goals {'met' if ok else 'MISSED'}")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--stack", type=Path, required=True, help="folder of a running `policy-kb stack up`")
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument(
        "--warmup-minutes",
        type=float,
        default=None,
        help="a fixed warm-up; unset: until RSS levels off (PLATEAU_WINDOW_S)",
    )
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--upload-every", type=float, default=5.0, help="minutes between policy uploads")
    parser.add_argument("--pdf", type=Path, default=DEFAULT_PDF)
    parser.add_argument("--seed", type=int, default=23)
    args = parser.parse_args()

    layout = StackLayout.load(args.stack.resolve())
    key = layout.extra_env.get("MCP_API_KEY", "")
    port = free_port()
    env = layout.env({}) | {
        "DOCUMENT_STORE_PORT": str(port),
        "KB_MCP_PORT": str(free_port()),
        "POLICY_KB_PORT": str(free_port()),
    }
    documents = start_service(
        [sys.executable, "-m", "deployments.cli", "serve", "--servers", "document-store,kb"],
        env,
        health_ok(f"http://127.0.0.1:{port}"),
        log=documents_log(args.stack),
    )
    urls = {
        "replica-a": layout.url("replica-a"),
        "replica-b": layout.url("replica-b"),
        "documents": f"http://127.0.0.1:{port}",
        "kb": f"http://127.0.0.1:{env['KB_MCP_PORT']}",
    }
    try:
        first = Ingestion(SOURCE)
        ingest_in_background(urls["replica-a"], key, args.pdf, first)
        print(f"soak: policy {SOURCE} ready ({first.outcome} in {first.seconds:.0f} s); load starts", flush=True)
        sampler = Sampler({name: url for name, url in urls.items() if name != "kb"})  # kb: the same process
        sampler.start()
        started = time.monotonic()
        stop_at = started + args.minutes * 60
        ingestions: list[Ingestion] = []
        uploader = threading.Thread(
            target=uploads,
            daemon=True,
            args=(urls["replica-a"], key, args.pdf, args.upload_every * 60, stop_at, ingestions),
        )
        uploader.start()
        tally = Tally()

        async def run() -> None:
            await asyncio.gather(*(client(urls, key, args.seed + i, stop_at, tally) for i in range(args.clients)))

        asyncio.run(run())
        uploader.join(timeout=900)
        sampler.done.set()
        sampler.join()
        sampler.sample()
        audit = subprocess.run(
            [sys.executable, "-m", "deployments.cli", "audit"],
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=900,
            cwd=ROOT,
        )
        ok = report(args, tally, sampler, started, ingestions, audit)
    finally:
        documents.stop()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
