"""The governance corpus (spec 004) end to end: ingest a whole folder, then ``query_governance`` top_k=5 over
each interface an agent uses, and hit@5 of 20 questions about the PEPs per retrieval mode.

Printed:
- ingest: documents, chunks, seconds and chunks/s of ``ingest_governance_corpus_files`` over ``--corpus``
  (incremental: with ``--data-dir`` of an earlier run, unchanged files are skipped and say so);
- hit@5 per mode (hybrid, dense, lexical) of the questions in ``benchmarks/governance_questions.json``
  (each names the PEP(s) that answer it), searching the documents in force today as an agent would;
- latency p50/p95/p99 in ms of ``query_governance`` top_k=5 as the client sees it: in process (1 thread),
  over MCP Streamable HTTP from 4 concurrent SDK clients (each its own process) against
  ``policy-kb serve --servers governance`` in its own process, the same from 1 client, ``GET /query`` from
  4 concurrent httpx clients, and over stdio (the SDK's stdio client starting
  ``python -m mcp_service --stdio``). Goal: p95 <= 25 ms over HTTP with 4 clients (PRD: 500 ms).

Every measured question is new to the server (the documents' titles, phrased differently per interface),
so each request pays for its query embedding: the encoder's memo of recent questions is not what is timed.

    .venv/bin/python benchmarks/governance.py --corpus ../shared/data/governance [--requests 200] [--data-dir DIR]
        [--floor answer|embed]

``--floor`` measures the HTTP interfaces of ``benchmarks/floor_service.py`` instead, which answers without
searching: the floor this machine puts under the goal (docs/performance.md › Governance).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import httpx  # noqa: E402

from benchmarks.harness import Service, clients_start_together, free_port, row, start_service, wait_until  # noqa: E402
from lib.composition import open_stores  # noqa: E402
from lib.config import Settings, load_settings  # noqa: E402
from lib.governance.ingest import ingest_governance_corpus_files  # noqa: E402
from lib.governance.reads import list_governance_documents  # noqa: E402
from lib.governance.search import query_governance  # noqa: E402
from lib.governance.stores import GovernanceStores  # noqa: E402
from lib.stores.redis_server import embedded_url, stop_embedded_redis  # noqa: E402

CLIENTS = 4
TOP_K = 5
STARTUP_TIMEOUT_S = 600
MODES = ("hybrid", "dense", "lexical")
QUESTIONS_FILE = ROOT / "benchmarks" / "governance_questions.json"
PHRASINGS = {
    "inproc": "{title}",
    "mcp4": "What does '{title}' decide, and why?",
    "mcp1": "Summarise the motivation of {title}",
    "rest": "{title}: what does it specify?",
    "stdio": "Which rules does '{title}' set out?",
}
"""One phrasing per measurement, so no measured question was asked before."""


# -- ingest and relevance -------------------------------------------------------------------------


def ingest(stores: GovernanceStores, corpus: Path) -> None:
    files = sum(1 for p in corpus.rglob("*") if p.is_file())
    started = time.perf_counter()
    report = ingest_governance_corpus_files(stores, corpus)
    seconds = time.perf_counter() - started
    print(
        f"ingest of {corpus} ({files} files): {len(report.added)} added, {len(report.changed)} changed, "
        f"{len(report.unchanged)} unchanged, {len(report.removed)} removed, {len(report.failed)} failed"
    )
    for failed in report.failed[:10]:
        print(f"  failed: {failed.file}: {failed.error}")
    rate = report.chunks_written / seconds if seconds else 0.0
    print(
        f"  {report.chunks_written} chunks written in {seconds:.1f} s = {rate:.1f} chunks/s "
        f"({os.cpu_count()} CPUs, encoder {stores.settings.embeddings.encoder})"
    )


def hit_at_5(stores: GovernanceStores) -> None:
    questions = json.loads(QUESTIONS_FILE.read_text())["questions"]
    print(f"\nhit@{TOP_K} of {len(questions)} questions about the PEPs (documents in force today)")
    misses: dict[str, list[str]] = {}
    for mode in MODES:
        hits = 0
        for item in questions:
            answer = query_governance(stores, item["question"], top_k=TOP_K, mode=mode)
            found = [hit.metadata.id for hit in answer.results]
            if set(found) & set(item["answers"]):
                hits += 1
            else:
                misses.setdefault(mode, []).append(f"{item['answers'][0]} <- {found}")
        print(f"  {mode:<8} {hits}/{len(questions)} = {hits / len(questions):.2f}")
    for mode, missed in misses.items():
        for miss in missed:
            print(f"    {mode} missed {miss}")


def questions_for(titles: list[str], kind: str, n: int) -> list[str]:
    return [PHRASINGS[kind].format(title=title) for title in titles[:n]]


def in_process(stores: GovernanceStores, questions: list[str]) -> list[float]:
    samples = []
    for question in questions:
        started = time.perf_counter()
        query_governance(stores, question, top_k=TOP_K)
        samples.append((time.perf_counter() - started) * 1000)
    return samples


# -- clients --------------------------------------------------------------------------------------


async def _mcp_http(url: str, questions: list[str], start_at: float) -> list[float]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    samples: list[float] = []
    async with streamable_http_client(url) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        await session.list_tools()  # the client validates results against the output schema it lists
        await wait_until(start_at)
        for question in questions:
            started = time.perf_counter()
            result = await session.call_tool("query_governance", {"question": question, "top_k": TOP_K})
            samples.append((time.perf_counter() - started) * 1000)
            assert not result.is_error, result
    return samples


async def _rest(url: str, questions: list[str], start_at: float) -> list[float]:
    samples: list[float] = []
    async with httpx.AsyncClient(timeout=60) as http:
        await http.get(url.replace("/query", "/health"))
        await wait_until(start_at)
        for question in questions:
            started = time.perf_counter()
            response = await http.get(url, params={"q": question, "top_k": TOP_K})
            samples.append((time.perf_counter() - started) * 1000)
            assert response.status_code == 200, response.text
    return samples


def client_process(kind: str, url: str, questions: list[str], start_at: float) -> list[float]:
    """One client in its own process, as agents are: 4 clients in one interpreter would share one GIL."""
    return asyncio.run((_mcp_http if kind == "mcp" else _rest)(url, questions, start_at))


def concurrent(pool: ProcessPoolExecutor, kind: str, url: str, questions: list[str], clients: int) -> list[float]:
    start_at = clients_start_together()
    futures = [pool.submit(client_process, kind, url, questions[i::clients], start_at) for i in range(clients)]
    return [sample for future in futures for sample in future.result()]


async def _stdio(env: dict[str, str], questions: list[str]) -> list[float]:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=sys.executable, args=["-m", "mcp_service", "--stdio"], env=os.environ | env, cwd=ROOT
    )
    samples: list[float] = []
    with open(os.devnull, "w") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            tools = [t.name for t in (await session.list_tools()).tools]
            warm = await session.call_tool("query_governance", {"question": "warm up the catalog", "top_k": TOP_K})
            assert not warm.is_error, warm
            print(f"  (stdio session: tools {tools})")
            for question in questions:
                started = time.perf_counter()
                result = await session.call_tool("query_governance", {"question": question, "top_k": TOP_K})
                samples.append((time.perf_counter() - started) * 1000)
                assert not result.is_error, result
    return samples


# -- the service ----------------------------------------------------------------------------------


def service_env(settings: Settings, port: int) -> dict[str, str]:
    return {
        "POLICY_KB_DATA_DIR": str(settings.paths.data_dir),
        "REDIS_URL": embedded_url(settings.paths.redis_dir),
        "GOVERNANCE_PORT": str(port),
        "CHROMA_GOVERNANCE_COLLECTION": settings.chroma.governance_collection,
    }


def start_governance(env: dict[str, str], port: int, floor: str | None = None) -> Service:
    """The service in its own process, once it answers: the first query loads the catalog (every chunk's vector).
    With ``floor``, ``benchmarks/floor_service.py``'s service instead (``answer``, or ``embed`` then answer)."""
    command = [sys.executable, "-m", "deployments.cli", "serve", "--servers", "governance"]
    if floor is not None:
        command = [sys.executable, str(ROOT / "benchmarks" / "floor_service.py"), "governance"]
        command += ["--embed"] if floor == "embed" else []
    base = f"http://127.0.0.1:{port}"

    def warm() -> bool:
        health = httpx.get(f"{base}/health", timeout=5).json()
        if not health.get("index", {}).get("built"):
            return False
        httpx.get(f"{base}/query", params={"q": "warm up", "top_k": 1}, timeout=STARTUP_TIMEOUT_S).raise_for_status()
        return True

    return start_service(command, env, warm, timeout=STARTUP_TIMEOUT_S)


def measure(label: str, run: Callable[[], list[float]], results: dict[str, float]) -> None:
    results[label] = row(label, run(), width=48)[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--corpus", type=Path, required=True, help="the folder of governance documents")
    parser.add_argument("--requests", type=int, default=200, help="measured requests per interface")
    parser.add_argument("--data-dir", type=Path, default=None, help="reuse (or build) the store here")
    parser.add_argument("--keep", action="store_true", help="keep the temporary store")
    parser.add_argument(
        "--floor",
        choices=["answer", "embed"],
        default=None,
        help="measure the HTTP interfaces of benchmarks/floor_service.py instead: one precomputed answer "
        "('answer'), or that answer after embedding the question ('embed'); no search at all",
    )
    args = parser.parse_args()

    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="bench-governance-"))
    settings = load_settings(data_dir=data_dir, redis_url=None)
    stores = open_stores(settings).governance
    service = None
    try:
        ingest(stores, args.corpus.resolve())
        if args.floor is None:
            hit_at_5(stores)
        titles = [d.title for d in list_governance_documents(stores)]
        n = min(args.requests, len(titles))
        results: dict[str, float] = {}
        floor = "" if args.floor is None else f" -- FLOOR '{args.floor}': no search"
        print(f"\nquery_governance top_k={TOP_K}, distinct questions (ms){floor}         p50     p95     p99")
        if args.floor is None:
            measure("in process, 1 thread", lambda: in_process(stores, questions_for(titles, "inproc", n)), results)
        port = free_port()
        env = service_env(settings, port)
        service = start_governance(env, port, args.floor)
        base = f"http://127.0.0.1:{port}"
        with ProcessPoolExecutor(CLIENTS, mp_context=multiprocessing.get_context("spawn")) as pool:
            measure(
                f"MCP Streamable HTTP, {CLIENTS} concurrent clients",
                lambda: concurrent(pool, "mcp", f"{base}/mcp", questions_for(titles, "mcp4", n), CLIENTS),
                results,
            )
            measure(
                "MCP Streamable HTTP, 1 client",
                lambda: concurrent(pool, "mcp", f"{base}/mcp", questions_for(titles, "mcp1", n), 1),
                results,
            )
            measure(
                f"GET /query, {CLIENTS} concurrent clients",
                lambda: concurrent(pool, "rest", f"{base}/query", questions_for(titles, "rest", n), CLIENTS),
                results,
            )
        service.stop()
        service = None
        if args.floor is not None:
            return
        measure("MCP stdio, 1 client", lambda: asyncio.run(_stdio(env, questions_for(titles, "stdio", n))), results)
        goal = results[f"MCP Streamable HTTP, {CLIENTS} concurrent clients"]
        verdict = "met" if goal <= 25 else "NOT met"
        print(f"\ngoal p95 <= 25 ms over HTTP with {CLIENTS} clients: {goal:.2f} ms -> {verdict}")
    finally:
        if service is not None:
            service.stop()
        stop_embedded_redis(settings.paths.redis_dir)
        if args.data_dir is None and not args.keep:
            shutil.rmtree(data_dir, ignore_errors=True)
        elif args.data_dir is None:
            print(f"store kept in {data_dir}")


if __name__ == "__main__":
    threading.current_thread().name = "benchmark"
    main()
