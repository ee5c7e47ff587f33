"""The ``kb`` server (spec 002) over MCP: ``kb_search`` latency on 10,000 notes in three collections, and the
throughput of a 20 MB PDF uploaded in 1 MB base64 chunks, beside extracting and embedding it directly.

The 10,000 notes are written in-process through ``lib.notes.ingest.ingest_note`` (what each ingestion job
runs: chunk, embed, store, register), not submitted as 10,000 jobs: the jobs' queueing and Prefect runs are
not what this measures, and the corpus is the same either way. Then ``policy-kb serve --servers kb`` runs in
its own process over those stores (engine mounted, auth on) and one SDK client calls ``kb_search``
sequentially: a third of the queries in one collection, a third with a collection and a tag, the rest
across everything.

The PDF: 120 pages of text plus incompressible images (drawn small, so no page counts as a scan) to reach
20 MB. Upload MB/s = size / (``kb_upload_start`` .. ``kb_upload_finish`` returned), as the agent sees it;
then the ingestion job's own time; then ``lib.notes.ingest.file_pieces`` + ``embed_batch`` on the same bytes.

    .venv/bin/python benchmarks/kb.py [--notes 10000] [--requests 200] [--data-dir DIR]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import random
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import numpy as np
import pymupdf
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client

from tests.mcp_http import mcp_http_client

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import Service, free_port, health_ok, percentiles, start_service  # noqa: E402
from lib.composition import open_stores  # noqa: E402
from lib.config import Settings, load_settings  # noqa: E402
from lib.notes.ingest import file_pieces, ingest_note  # noqa: E402
from lib.stores.redis_server import embedded_url, stop_embedded_redis  # noqa: E402

KEY = "bench-kb-key"
COLLECTIONS = ("documents", "memory", "research")
TOPICS = [
    "pension revaluation",
    "email preferences",
    "cycle parking",
    "flood risk",
    "deferred members",
    "bullet points",
    "weekly digest",
    "bus frequency",
    "tree preservation",
    "heritage assets",
    "noise assessment",
    "integration tests",
    "design review",
    "affordable housing",
    "car club",
]
WORDS = [
    "agent",
    "user",
    "prefers",
    "reviews",
    "report",
    "scheme",
    "policy",
    "site",
    "access",
    "junction",
    "budget",
    "meeting",
    "feedback",
    "release",
    "customer",
    "survey",
    "drainage",
    "transport",
    "plan",
    "member",
    "staff",
    "quarterly",
    "concise",
    "summary",
    "evidence",
]
CHUNK = 1024 * 1024


def note_text(rng: random.Random, index: int) -> str:
    topic = rng.choice(TOPICS)
    words = " ".join(rng.choice(WORDS) for _ in range(rng.randint(25, 60)))
    return f"Note {index} on {topic}: {words}. Follow-up about {rng.choice(TOPICS)}."


def load_notes(settings: Settings, count: int) -> float:
    stores = open_stores(settings).notes
    have = stores.registry.counts().get("notes", 0)
    rng = random.Random(7)
    started = time.perf_counter()
    for index in range(have, count):
        collection = COLLECTIONS[index % 3]
        tags = [f"collection:{collection}", rng.choice(["feedback", "todo", "reference"])]
        ingest_note(stores, note_text(rng, index), tags, title=f"note {index}")
    return time.perf_counter() - started


def big_pdf(target_bytes: int) -> bytes:
    rng = np.random.default_rng(3)
    document = pymupdf.open()
    prose = " ".join(
        f"Section {i}: the scheme's {TOPICS[i % len(TOPICS)]} evidence is summarised here." for i in range(40)
    )
    for number in range(120):
        page = document.new_page()
        page.insert_textbox(pymupdf.Rect(40, 40, 560, 700), f"Page {number + 1}. {prose}", fontsize=9)
    page_index = 0
    while len(document.tobytes()) < target_bytes:
        noise = rng.integers(0, 256, size=(900, 900, 3), dtype=np.uint8)
        pixmap = pymupdf.Pixmap(pymupdf.csRGB, 900, 900, noise.tobytes(), False)
        document[page_index % 120].insert_image(pymupdf.Rect(480, 720, 560, 800), pixmap=pixmap)
        page_index += 1
    data: bytes = document.tobytes()
    document.close()
    return data


def start_kb(settings: Settings, port: int) -> Service:
    env = {
        "REDIS_URL": embedded_url(settings.paths.redis_dir),
        "POLICY_KB_DATA_DIR": str(settings.paths.data_dir),
        "KB_MCP_PORT": str(port),
        "KB_MCP_API_KEY": KEY,
        "MCP_API_KEY": KEY + "-engine",
        "ENABLE_OCR": "false",
        "KB_MAX_UPLOAD_BYTES": str(64 * 1024 * 1024),
    }
    command = [sys.executable, "-m", "deployments.cli", "serve", "--servers", "kb"]
    return start_service(command, env, health_ok(f"http://127.0.0.1:{port}"), timeout=180)


async def tool(session: ClientSession, name: str, **arguments: Any) -> dict[str, Any]:
    result = await session.call_tool(name, arguments)
    body = dict(result.structured_content or {})
    if body.get("status") != "success":
        raise SystemExit(f"{name} failed: {body}")
    return body


async def wait_job(session: ClientSession, job_id: str) -> dict[str, Any]:
    while True:
        job = next((j for j in (await tool(session, "kb_jobs"))["jobs"] if j["job_id"] == job_id), None)
        if job is not None and job["status"] in ("completed", "failed"):
            return job
        await asyncio.sleep(0.5)


async def measure(url: str, requests: int, pdf: bytes) -> dict[str, float]:
    rng = random.Random(11)
    async with (
        mcp_http_client(headers={"Authorization": f"Bearer {KEY}"}) as http,
        streamable_http_client(f"{url}/mcp", http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        for _ in range(5):  # warm: the engine's index and the query encoder
            await tool(session, "kb_search", query="warm up", top=10)
        latencies: list[float] = []
        for index in range(requests):
            arguments: dict[str, Any] = {"query": f"{rng.choice(TOPICS)} {rng.choice(WORDS)}", "top": 10}
            if index % 3 == 1:
                arguments["collection"] = rng.choice(COLLECTIONS)
            elif index % 3 == 2:
                arguments |= {"collection": rng.choice(COLLECTIONS), "tags": [rng.choice(["feedback", "todo"])]}
            started = time.perf_counter()
            await tool(session, "kb_search", **arguments)
            latencies.append((time.perf_counter() - started) * 1000)

        # One note first: the engine's first job starts Prefect's local API, which is not upload time.
        await wait_job(session, (await tool(session, "kb_addnote", text="warm-up note", collection="memory"))["job_id"])
        started = time.perf_counter()
        upload_id = (await tool(session, "kb_upload_start", filename="big.pdf", total_size=len(pdf)))["upload_id"]
        for index in range(0, (len(pdf) + CHUNK - 1) // CHUNK):
            data = base64.b64encode(pdf[index * CHUNK : (index + 1) * CHUNK]).decode()
            await tool(session, "kb_upload_chunk", upload_id=upload_id, data=data, chunk_index=index)
        job_id = (await tool(session, "kb_upload_finish", upload_id=upload_id))["job_id"]
        uploaded = time.perf_counter() - started
        job = await wait_job(session, job_id)
        ingested = time.perf_counter() - started - uploaded
    p50, p95 = percentiles(latencies, (50, 95))
    return {
        "p50": p50,
        "p95": p95,
        "upload_s": uploaded,
        "ingest_s": ingested,
        "job_ok": float(job["status"] == "completed"),
    }


def direct(settings: Settings, pdf: bytes) -> tuple[float, int]:
    stores = open_stores(settings).notes
    stores.embedder.warm_up()
    started = time.perf_counter()
    _, pieces = file_pieces(stores, pdf, "big.pdf")
    stores.embedder.embed_batch([text for text, _ in pieces])
    return time.perf_counter() - started, len(pieces)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--notes", type=int, default=10_000)
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--pdf-mb", type=float, default=20.0)
    parser.add_argument("--data-dir", type=Path, help="Reuse (or keep) the store here")
    args = parser.parse_args()
    data_dir = args.data_dir or Path(tempfile.mkdtemp(prefix="kb-bench-"))
    settings = load_settings(data_dir=data_dir, redis_url=None, enable_ocr=False)
    try:
        loaded = load_notes(settings, args.notes)
        print(
            f"corpus: {args.notes} notes in {len(COLLECTIONS)} collections (bulk-loaded in-process via "
            f"lib.notes.ingest.ingest_note in {loaded:.1f} s)"
        )
        pdf = big_pdf(int(args.pdf_mb * 1024 * 1024))
        megabytes = len(pdf) / 1024 / 1024
        port = free_port()
        service = start_kb(settings, port)
        try:
            figures = asyncio.run(measure(f"http://127.0.0.1:{port}", args.requests, pdf))
        finally:
            service.stop(signal.SIGINT)
        direct_s, chunks = direct(settings, pdf)
        print(
            f"kb_search over MCP, 1 client, {args.requests} requests: p50 {figures['p50']:.1f} ms, "
            f"p95 {figures['p95']:.1f} ms"
        )
        print(
            f"upload {megabytes:.1f} MB PDF in {CHUNK // 1024} KiB chunks: {figures['upload_s']:.2f} s = "
            f"{megabytes / figures['upload_s']:.1f} MB/s (start .. finish returned); ingestion job then "
            f"{figures['ingest_s']:.1f} s ({'completed' if figures['job_ok'] else 'FAILED'})"
        )
        print(f"direct extract + embed of the same file: {direct_s:.1f} s ({chunks} chunks)")
        print(f"machine: {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.1f}")
    finally:
        stop_embedded_redis(settings.paths.redis_dir)
        if args.data_dir is None:
            shutil.rmtree(data_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
