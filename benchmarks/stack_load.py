"""Load on running replicas: concurrent MCP clients (the SDK's, over Streamable HTTP) making dated
``search_policy`` calls, with one policy ingestion running in the background through the REST upload (a new
revision of the benchmark's own policy ``LOAD_BENCH``; its older revisions are deleted once it is in).

    .venv/bin/python benchmarks/stack_load.py --urls http://127.0.0.1:3003,http://127.0.0.1:3013 \\
        [--clients 20] [--seconds 60 | --calls 50] [--processes 5] [--pdf FILE | --no-ingest] [--api-key KEY]

It starts nothing: point it at services already running (``policy-kb stack up``'s replicas, or
``policy-kb serve`` processes) over the same stores, holding some policies to search. Clients are shared
out over the URLs in turn and all start together, each calling as soon as its previous answer arrives;
they live in ``--processes`` client processes (each a few SDK clients on one event loop), so the clients'
own CPU does not queue behind one interpreter's lock. Every call's latency counts, the first ones
included: start the services just before to see a cold start.

Printed for the run over every URL, then (with several URLs) again against the first URL alone:
errors (a tool error result, an exception, a timeout; goal 0), how many answers held no passage (goal 0:
the days asked run from the seeded NPPF's first day in force to today), latency p50/p95/p99/max, the first call's
p99 over the clients, calls per second, how long the background ingestion took and how it ended, and the
peak RSS of each replica (the process listening on its port) and of what it started (its children, e.g.
Prefect's temporary local API in the embedded default).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import random
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from urllib.parse import urlsplit

import httpx
import numpy as np
import psutil

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import percentiles  # noqa: E402

QUESTIONS = [q["question"] for q in json.loads((ROOT / "benchmarks" / "nppf_questions.json").read_text())]
DEFAULT_PDF = ROOT / "deployments" / "seed" / "NPPF_December_2024.pdf"
CALL_TIMEOUT_S = 30.0
INGEST_TIMEOUT_S = 600.0


SEARCH_FROM = date(2024, 12, 12)
"""The first day the seeded NPPF (``deployments/seed/seed.yaml``) is in force: searches are dated from then
to today, so each one finds the revision in force and answers with passages (before this, days from 2016
on made most calls find nothing in force and answer an empty list: cheap calls that flattered the figures;
docs/performance.md › Stack load)."""


def random_day(rng: random.Random, first: date = SEARCH_FROM) -> str:
    return (first + timedelta(days=rng.randrange(0, max((date.today() - first).days, 0) + 1))).isoformat()


@dataclass
class ClientResult:
    samples_ms: list[float] = field(default_factory=list)
    empty: int = 0
    """Successful calls that found no passage (no revision in force on the day asked)."""
    errors: list[str] = field(default_factory=list)


async def _one_client(url: str, key: str, seed: int, stop_at: float, calls: int, start_at: float) -> ClientResult:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from tests.mcp_http import mcp_http_client

    rng = random.Random(seed)
    result = ClientResult()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    try:
        async with (
            mcp_http_client(headers=headers) as http,
            streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            await session.list_tools()  # as an agent does first; the client validates results against it
            await asyncio.sleep(max(0.0, start_at - time.time()))
            while (calls and len(result.samples_ms) + len(result.errors) < calls) or (
                not calls and time.time() < stop_at
            ):
                args = {"query": rng.choice(QUESTIONS), "n_results": 10, "effective_date": random_day(rng)}
                started = time.perf_counter()
                try:
                    answer = await asyncio.wait_for(session.call_tool("search_policy", args), CALL_TIMEOUT_S)
                except Exception as exc:  # every failure is a figure here, never a crash of the benchmark
                    result.errors.append(f"{type(exc).__name__}: {exc}"[:200])
                    continue
                elapsed = (time.perf_counter() - started) * 1000
                if answer.is_error:
                    result.errors.append(str(answer.content)[:200])
                else:
                    result.samples_ms.append(elapsed)
                    result.empty += not (answer.structured_content or {}).get("results")
    except Exception as exc:
        result.errors.append(f"session: {type(exc).__name__}: {exc}"[:200])
    return result


def client_process(
    jobs: list[tuple[str, int]], key: str, stop_at: float, calls: int, start_at: float
) -> list[ClientResult]:
    """Several clients (``(url, seed)`` each) on one event loop, in a process of their own."""

    async def run_all() -> list[ClientResult]:
        return list(await asyncio.gather(*(_one_client(u, key, s, stop_at, calls, start_at) for u, s in jobs)))

    return asyncio.run(run_all())


def warm_client_process(_: int = 0) -> int:
    """Import the SDK client in a pool process before the clock starts, with the JSON Schema library it
    imports on its first validated result (a client's start-up, not the service's latency; docs/performance.md)."""
    import jsonschema  # noqa: F401
    import mcp.client.streamable_http  # noqa: F401
    import referencing  # noqa: F401

    return multiprocessing.current_process().pid or 0


def listening_process(url: str) -> psutil.Process | None:
    port = urlsplit(url).port
    for conn in psutil.net_connections(kind="tcp"):
        if conn.status == psutil.CONN_LISTEN and conn.laddr and conn.laddr.port == port and conn.pid:
            return psutil.Process(conn.pid)
    return None


class RssSampler(threading.Thread):
    """The peak RSS of each replica and of its children, sampled every half second."""

    def __init__(self, urls: list[str]) -> None:
        super().__init__(daemon=True)
        self.processes = {url: listening_process(url) for url in urls}
        self.peak: dict[str, tuple[int, int]] = {url: (0, 0) for url in urls}
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.5):
            for url, process in self.processes.items():
                if process is None:
                    continue
                try:
                    own = process.memory_info().rss
                    children = sum(c.memory_info().rss for c in process.children(recursive=True))
                except psutil.Error:
                    continue
                self.peak[url] = (max(self.peak[url][0], own), max(self.peak[url][1], children))


@dataclass
class Ingestion:
    source: str
    revision_id: str = ""
    seconds: float = 0.0
    outcome: str = "not started"


LOAD_SOURCE = "LOAD_BENCH"
FIRST_EFFECTIVE = date(2024, 12, 12)


def ingest_in_background(url: str, key: str, pdf: Path, ingestion: Ingestion) -> None:
    """Upload ``pdf`` as a new revision of the benchmark's own policy (``LOAD_BENCH``, registered on first
    use), wait for it to settle, then delete the policy's older revisions, so the stores hold one revision of
    it however often the benchmark runs (a policy per run made every later run search more chunks). The new
    revision takes effect a day after the newest one there, from 12 December 2024: searches dated after that
    include it from the moment it is ingested."""
    started = time.monotonic()
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    with httpx.Client(base_url=f"{url}/api/v1", headers=headers, timeout=120) as api:
        try:
            found = api.get(f"/policies/{ingestion.source}")
            if found.status_code == 404:
                api.post(
                    "/policies",
                    json={"source": ingestion.source, "title": "Load benchmark policy", "category": "national_policy"},
                ).raise_for_status()
                earlier: list[dict[str, str]] = []
            else:
                found.raise_for_status()
                earlier = found.json()["revisions"]
            latest = max((date.fromisoformat(r["effective_from"]) for r in earlier), default=None)
            effective = FIRST_EFFECTIVE if latest is None else latest + timedelta(days=1)
            accepted = api.post(
                f"/policies/{ingestion.source}/revisions",
                files={"file": (pdf.name, pdf.read_bytes(), "application/pdf")},
                data={
                    "version_label": f"load {effective}",
                    "effective_from": effective.isoformat(),
                    "revision_id": f"rev_{ingestion.source}_{effective:%Y_%m_%d}",
                },
            )
            accepted.raise_for_status()
            ingestion.revision_id = accepted.json()["revision_id"]
            path = f"/policies/{ingestion.source}/revisions/{ingestion.revision_id}/status"
            while time.monotonic() - started < INGEST_TIMEOUT_S:
                status = api.get(path).json()
                if status["status"] != "processing":
                    ingestion.outcome = status["status"] + (f" ({status.get('error')})" if status.get("error") else "")
                    break
                time.sleep(0.5)
            else:
                ingestion.outcome = f"still processing after {INGEST_TIMEOUT_S:.0f} s"
            ingestion.seconds = time.monotonic() - started
            if ingestion.outcome in ("active", "superseded"):
                for revision in earlier:
                    api.delete(f"/policies/{ingestion.source}/revisions/{revision['revision_id']}").raise_for_status()
        except httpx.HTTPError as exc:
            ingestion.outcome = f"error: {exc}"
    ingestion.seconds = ingestion.seconds or time.monotonic() - started


def run_phase(args: argparse.Namespace, urls: list[str], pool: ProcessPoolExecutor) -> None:
    print(
        f"\n== {len(urls)} replica(s): {', '.join(urls)}; {args.clients} clients in {args.processes} processes; "
        + (f"{args.calls} calls each" if args.calls else f"{args.seconds:.0f} s")
    )
    sampler = RssSampler(urls)
    sampler.start()
    start_at = time.time() + 5.0  # the client processes start and initialise their sessions before this
    stop_at = start_at + args.seconds
    jobs = [(urls[i % len(urls)], args.seed + i) for i in range(args.clients)]
    shares = [jobs[p :: args.processes] for p in range(args.processes)]
    futures = [pool.submit(client_process, share, args.api_key, stop_at, args.calls, start_at) for share in shares]
    ingestion = Ingestion(source=LOAD_SOURCE)
    ingester = None
    if not args.no_ingest:
        time.sleep(max(0.0, start_at - time.time()))
        ingester = threading.Thread(target=ingest_in_background, args=(urls[0], args.api_key, args.pdf, ingestion))
        ingester.start()
    results = [r for future in futures for r in future.result()]
    elapsed = time.time() - start_at
    if ingester is not None:
        ingester.join()
    sampler.done.set()
    sampler.join()

    samples = np.asarray([s for r in results for s in r.samples_ms])
    errors = [e for r in results for e in r.errors]
    firsts = np.asarray([r.samples_ms[0] for r in results if r.samples_ms])
    empty = sum(r.empty for r in results)
    print(
        f"calls {len(samples) + len(errors)}, errors {len(errors)} (goal 0), {len(samples) / elapsed:.0f} calls/s, "
        f"{empty} of them answered with no passage (goal 0: every day searched has a revision in force)"
    )
    for error in sorted(set(errors))[:5]:
        print(f"  error: {error}")
    if len(samples):
        p50, p95, p99 = percentiles(samples)
        (first_p99,) = percentiles(firsts, (99,))
        print(
            f"latency ms: p50 {p50:.1f}  p95 {p95:.1f}  p99 {p99:.1f}  max {samples.max():.1f}  "
            f"(first call of each client: p99 {first_p99:.1f}, max {firsts.max():.1f})"
        )
    if ingester is not None:
        print(
            f"background ingestion {ingestion.source}/{ingestion.revision_id}: {ingestion.outcome} "
            f"in {ingestion.seconds:.1f} s"
        )
    for url, (own, children) in sampler.peak.items():
        process = sampler.processes[url]
        pid = process.pid if process is not None else "?"
        print(f"peak RSS {url} (pid {pid}): {own / 2**20:.0f} MB; its children {children / 2**20:.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--urls", required=True, help="comma-separated base URLs of running replicas")
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--processes", type=int, default=5, help="client processes the clients are shared over")
    parser.add_argument("--seconds", type=float, default=60.0, help="how long each phase runs (without --calls)")
    parser.add_argument("--calls", type=int, default=0, help="calls per client instead of a duration")
    parser.add_argument("--pdf", type=Path, default=DEFAULT_PDF, help="the PDF the background ingestion uploads")
    parser.add_argument("--no-ingest", action="store_true", help="searches only")
    parser.add_argument(
        "--single-too",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="with several URLs, run again against the first alone",
    )
    parser.add_argument("--api-key", default="", help="bearer key of the services (MCP_API_KEY)")
    parser.add_argument("--seed", type=int, default=11)
    args = parser.parse_args()
    urls = [u.strip().rstrip("/") for u in args.urls.split(",") if u.strip()]
    args.processes = max(1, min(args.processes, args.clients))
    with ProcessPoolExecutor(args.processes, mp_context=multiprocessing.get_context("spawn")) as pool:
        list(pool.map(warm_client_process, range(args.processes * 2)))
        run_phase(args, urls, pool)
        if len(urls) > 1 and args.single_too:
            run_phase(args, urls[:1], pool)


if __name__ == "__main__":
    main()
