"""The cost curve (issue 27, part 4): corpora of 10k, 100k (and, given the time, 1M) chunks through the product's
own stores, and what each size costs.

The chunks are the four local plans' real chunks (read from ``benchmarks/capacity.py``'s store, which holds them
with their real embeddings) recombined: each new chunk is the first half of one real chunk and the second half
of another, with the section of the first, and a vector derived from their real embeddings (0.7 and 0.3 of
them plus a little noise, renormalised), so building a million chunks needs no encoder call. Queries are new
questions embedded for real. Revisions of ``--revision-size`` chunks, one per policy, all in force today, are
written by ``lib.policies.ingest.store_chunks`` (the ingestion's own upsert, registry and metadata steps) into
Redis and Chroma under ``--data-dir``/N (embedded Chroma; ``CHROMA_HOST`` for a Chroma server).

Per size: build rate; then a replica (``policy-kb serve``, its own process) started twice: warm-up (start until
``/health`` answers: every searchable revision loaded and indexed) and RSS, first from Chroma (the index snapshots
removed before), then from the snapshots that start wrote; the dated hybrid ``search_policy`` p50/p95 in
this process (its index warmed first) and over ``/mcp`` (one client, raw JSON-RPC, sequential); the consistency
audit's time. ``SEARCH_CACHE_MB`` is raised so the whole corpus is held (the question is what holding it costs).
Then where the memory goes: each held part of the in-process index measured (``held_bytes``), per chunk, so every
cost that grows linearly with the corpus is named with its size.

    .venv/bin/python benchmarks/scale.py [--sizes 10000,100000,1000000] [--data-dir .bench/scale]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import aiohttp  # noqa: E402
import httpx  # noqa: E402
import numpy as np  # noqa: E402
import orjson  # noqa: E402
import psutil  # noqa: E402

from benchmarks.capacity import HEADERS, cpu_seconds, minor_faults, new_questions  # noqa: E402
from benchmarks.harness import Service, free_port, health_ok, percentiles, start_service  # noqa: E402
from lib.composition import open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.glibc_heap import MMAP_THRESHOLD  # noqa: E402
from lib.models import Chunk  # noqa: E402
from lib.policies.audit import audit_store  # noqa: E402
from lib.policies.ingest import store_chunks  # noqa: E402
from lib.policies.lifecycle import register_revision  # noqa: E402
from lib.policies.models import PolicyCreate, RevisionCreate  # noqa: E402
from lib.policies.search import search_policy, searchable_revisions  # noqa: E402
from lib.retrieval import CorpusIndex, lexical_text  # noqa: E402
from lib.stores.redis_server import embedded_url, stop_embedded_redis  # noqa: E402

ORIGINAL = ROOT / "deployments" / "seed" / "NPPF_December_2024.pdf"
"""Each revision's stored original (the registry requires one; its chunks are the recombined ones)."""
CACHE_MB = 16384
QUERIES = 200


def real_chunks(capacity_dir: Path) -> tuple[list[Chunk], np.ndarray]:
    """The plans' chunks and their real embeddings, as ``benchmarks/capacity.py`` stored them."""
    settings = load_settings(data_dir=capacity_dir, redis_url=None)
    stores = open_stores(settings)
    got = stores.chroma.get_collection(settings.chroma.policy_collection).get(
        include=["documents", "metadatas", "embeddings"]
    )
    chunks = []
    for text, meta in zip(got["documents"] or [], got["metadatas"] or [], strict=True):
        page = int(str(meta["page_number"]))
        kind, title = str(meta.get("section_kind", "")), str(meta.get("section_title", ""))
        chunks.append(
            Chunk(
                text=text,
                section_ref=str(meta["section_ref"]),
                chapter=str(meta.get("chapter", "")),
                page_number=page,
                page_numbers=[page],
                chunk_index=0,
                kind=kind,
                title=title,
            )
        )
    vectors = np.asarray(got["embeddings"], dtype=np.float32)
    stop_embedded_redis(settings.paths.redis_dir)
    if len(chunks) < 100:
        raise SystemExit(f"{capacity_dir} holds {len(chunks)} chunks: run benchmarks/capacity.py first")
    return chunks, vectors


def recombined(
    base: list[Chunk], vectors: np.ndarray, count: int, rng: np.random.Generator
) -> tuple[list[Chunk], np.ndarray]:
    """``count`` new chunks (indexed 0..count-1) and their derived unit vectors."""
    a = rng.integers(0, len(base), count)
    b = rng.integers(0, len(base), count)
    mixed = 0.7 * vectors[a] + 0.3 * vectors[b] + rng.normal(0, 0.01, (count, vectors.shape[1])).astype(np.float32)
    mixed /= np.linalg.norm(mixed, axis=1, keepdims=True)
    chunks = []
    for index, (i, j) in enumerate(zip(a, b, strict=True)):
        first, second = base[i].text, base[j].text
        text = first[: len(first) // 2] + " " + second[len(second) // 2 :]
        chunks.append(base[i].model_copy(update={"text": text, "chunk_index": index}))
    return chunks, mixed


def held_bytes(indexes: list[CorpusIndex]) -> Counter[str]:
    """What the held slices hold, by part, measured (each Python object counted once, by identity): the
    vectors, the BM25 postings, the texts, the metadata columns (codes and distinct values:
    ``MetadataTable.nbytes``), the ids, the filter columns and anything derived."""
    seen: set[int] = set()

    def size(obj: object) -> int:
        if id(obj) in seen:
            return 0
        seen.add(id(obj))
        return sys.getsizeof(obj)

    parts: Counter[str] = Counter()
    for index in indexes:
        parts["vectors (int8 codes + bounds; exact rows if held)"] += index.vectors.nbytes
        parts["BM25 postings and vocabulary"] += index.lexical.nbytes
        offsets = getattr(index.texts, "nbytes", None)  # texts read from the snapshot file: only their offsets held
        if offsets is not None:
            parts["texts"] += offsets
        else:
            parts["texts"] += size(index.texts) + sum(size(t) for t in index.texts)
        parts["ids"] += size(index.ids) + sum(size(i) for i in index.ids)
        parts["metadata columns"] += index.metadatas.nbytes
        parts["filter columns"] += sum(c.nbytes for c in index._columns.values())
        parts["derived"] += sum(getattr(d, "nbytes", 0) for d in index._derived.values())
    return parts


def revisions(
    base: list[Chunk], vectors: np.ndarray, size: int, revision_size: int
) -> Iterator[tuple[str, list[Chunk], np.ndarray]]:
    """The corpus of ``size`` chunks, revision by revision: each source, its chunks and their vectors (one
    generator for the product's build and for ``--export``, so every engine measures the same chunks)."""
    rng = np.random.default_rng(size)
    for number in range((size + revision_size - 1) // revision_size):
        count = min(revision_size, size - number * revision_size)
        chunks, mixed = recombined(base, vectors, count, rng)
        yield f"SCALE_{number:05d}", chunks, mixed


def build(stores: Any, base: list[Chunk], vectors: np.ndarray, size: int, revision_size: int) -> float:
    """Write ``size`` chunks as revisions of ``revision_size``; seconds taken."""
    original = ORIGINAL.read_bytes()
    started = time.perf_counter()
    for source, chunks, mixed in revisions(base, vectors, size, revision_size):
        number = int(source.removeprefix("SCALE_"))
        stores.registry.create_policy(PolicyCreate(source=source, title=f"Scale {number}", category="local_plan"))
        created = register_revision(
            stores, source, RevisionCreate(version_label="v1", effective_from=date(2000, 1, 1)), original
        )
        store_chunks(
            stores.registry,
            stores.vectors,
            source,
            created.revision.revision_id,
            chunks,
            mixed.tolist(),
            page_count=1,
            file_size_bytes=len(original),
            extraction_method="text",
        )
    return time.perf_counter() - started


def packed(texts: list[str]) -> dict[str, np.ndarray]:
    """Strings as one UTF-8 buffer and their end offsets (readable without pickle)."""
    encoded = [t.encode() for t in texts]
    return {"utf8": np.frombuffer(b"".join(encoded), dtype=np.uint8), "ends": np.cumsum([len(e) for e in encoded])}


def export(folder: Path, stores: Any, base: list[Chunk], vectors: np.ndarray, size: int, revision_size: int) -> None:
    """The corpus and the in-process step's questions, for an engine measured in another environment
    (``benchmarks/engines/``): ``corpus.npz`` (vectors as float32, each chunk's source, its text and the text the
    lexical leg indexes, ``lexical_text`` over its section ref and chapter) and ``questions.npz`` (the questions,
    their query vectors from the product's embedder and the embedding's p50 in ms). Every revision is in force
    from 2000-01-01."""
    folder.mkdir(parents=True, exist_ok=True)
    texts, lexical, sources, parts = [], [], [], []
    for number, (_, chunks, mixed) in enumerate(revisions(base, vectors, size, revision_size)):
        texts += [c.text for c in chunks]
        lexical += [lexical_text([c.section_ref, c.chapter], c.text) for c in chunks]
        sources.append(np.full(len(chunks), number, dtype=np.int32))
        parts.append(mixed.astype(np.float32))
    text, heading = packed(texts), packed(lexical)
    np.savez(
        folder / "corpus.npz",
        vectors=np.concatenate(parts),
        source=np.concatenate(sources),
        text_utf8=text["utf8"],
        text_ends=text["ends"],
        lexical_utf8=heading["utf8"],
        lexical_ends=heading["ends"],
    )
    asked = in_process_questions(base, size)
    question = packed(asked)
    stores.embedder.warm_up()
    embedded, millis = [], []
    for asked_text in asked:  # one at a time, as a search embeds its question
        started = time.perf_counter()
        embedded.append(stores.embedder.embed_queries([asked_text])[0])
        millis.append((time.perf_counter() - started) * 1000)
    np.savez(
        folder / "questions.npz",
        vectors=np.asarray(embedded, dtype=np.float32),
        embed_ms=np.float64(percentiles(millis, (50,))[0]),
        utf8=question["utf8"],
        ends=question["ends"],
    )
    print(f"  exported {size:,} chunks and {len(asked)} questions to {folder}", flush=True)


def in_process_questions(base: list[Chunk], size: int) -> list[str]:
    """The questions the in-process step asks at ``size`` (after the ``/mcp`` step's)."""
    questions = new_questions([c.text for c in base], seed=size)
    return [next(questions) for _ in range(2 * QUERIES)][QUERIES:]


def search_cpu_seconds() -> float:
    """CPU seconds of this thread and of the threads that run a hybrid search's second leg
    (``lib.retrieval.legs``), not of the background checks."""
    helpers = [t.ident for t in threading.enumerate() if t.name.startswith("search-leg") and t.ident is not None]
    return time.thread_time() + sum(time.clock_gettime(time.pthread_getcpuclockid(ident)) for ident in helpers)


def start_replica(env: dict[str, str], port: int) -> tuple[Service, float]:
    """A replica (``policy-kb serve``) once it is warm (``/health``), and the seconds that took."""
    started = time.perf_counter()
    replica = start_service(
        [sys.executable, "-m", "deployments.cli", "serve", "--servers", "policy-kb"],
        env,
        health_ok(f"http://127.0.0.1:{port}"),
        timeout=3600,
    )
    return replica, time.perf_counter() - started


async def over_mcp(url: str, questions: list[str]) -> list[float]:
    samples = []
    async with aiohttp.ClientSession() as http:
        for i, question in enumerate(questions):
            arguments = {"query": question, "effective_date": "2025-06-01"}
            params = {"name": "search_policy", "arguments": arguments}
            body = orjson.dumps({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": params})
            started = time.perf_counter()
            async with http.post(f"{url}/mcp", data=body, headers=HEADERS) as response:
                answer = orjson.loads(await response.read())
            assert not answer["result"]["isError"], answer
            samples.append((time.perf_counter() - started) * 1000)
    return samples


def chroma_server(data_dir: Path) -> tuple[Service, int]:
    """``chroma run`` over the store's Chroma directory, on a free port, once its heartbeat answers."""
    port = free_port()
    server = start_service(
        [str(Path(sys.executable).with_name("chroma")), "run", "--path", str(data_dir / "chroma"), "--port", str(port)],
        {},
        lambda: httpx.get(f"http://127.0.0.1:{port}/api/v2/heartbeat", timeout=2).is_success,
        timeout=600,
    )
    return server, port


def measure(
    size: int, data_dir: Path, base: list[Chunk], vectors: np.ndarray, revision_size: int, *, server: bool, audit: bool
) -> None:
    """``server``: Chroma as a server process of its own (as the stack runs it), so the replica's RSS is the
    replica's alone; else embedded in each process (its HNSW index then counts in the replica's RSS)."""
    chroma: Service | None = None
    if server:
        chroma, chroma_port = chroma_server(data_dir)
        os.environ.update({"CHROMA_HOST": "127.0.0.1", "CHROMA_PORT": str(chroma_port)})
    try:
        _measure(size, data_dir, base, vectors, revision_size, audit=audit)
    finally:
        if chroma is not None:
            chroma.stop()
            for name in ("CHROMA_HOST", "CHROMA_PORT"):
                os.environ.pop(name, None)


def _measure(
    size: int, data_dir: Path, base: list[Chunk], vectors: np.ndarray, revision_size: int, *, audit: bool
) -> None:
    settings = load_settings(data_dir=data_dir, redis_url=None, search_cache_mb=CACHE_MB)
    stores = open_stores(settings).policies
    built = bool(stores.registry.list_sources())  # a rerun measures the store it built before
    seconds = 0.0 if built else build(stores, base, vectors, size, revision_size)
    texts = [c.text for c in base]
    questions = new_questions(texts, seed=size)
    port = free_port()
    env = {
        "POLICY_KB_DATA_DIR": str(data_dir),
        "REDIS_URL": embedded_url(data_dir / "redis"),
        "POLICY_KB_PORT": str(port),
        "SEARCH_CACHE_MB": str(CACHE_MB),
        # glibc's heap as the image and the stack run every service (deployments/Dockerfile, decision 0004)
        "MALLOC_ARENA_MAX": "2",
        "MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD),
    }
    shutil.rmtree(data_dir / "index_snapshots", ignore_errors=True)  # the first start reads Chroma
    cold, cold_s = start_replica(env, port)
    cold_rss = psutil.Process(cold.pid).memory_info().rss
    cold.stop()
    replica, warm_s = start_replica(env, port)
    try:
        rss = psutil.Process(replica.pid).memory_info().rss
        cpu_before, faults_before = cpu_seconds(replica.pid), minor_faults(replica.pid)
        mcp = asyncio.run(over_mcp(f"http://127.0.0.1:{port}", [next(questions) for _ in range(QUERIES)]))
        mcp_cpu_ms = (cpu_seconds(replica.pid) - cpu_before) * 1000 / QUERIES
        mcp_faults = (minor_faults(replica.pid) - faults_before) / QUERIES
        rss_after = psutil.Process(replica.pid).memory_info().rss
    finally:
        replica.stop()
    print(
        f"  replica: first start (from Chroma, snapshots written) {cold_s:.1f} s, RSS {cold_rss / 2**20:,.0f} MB; "
        f"second start (from snapshots) {warm_s:.1f} s, RSS {rss / 2**20:,.0f} MB at start, "
        f"{rss_after / 2**20:,.0f} MB after the /mcp step",
        flush=True,
    )
    stores.embedder.warm_up()
    # as the service's warm-up does: load every searchable revision, then keep them fresh in the background (without
    # the keeper, blocks older than the 30 s maximum age are reloaded on the request path, and past ~100k chunks
    # on a loaded machine a round of searches never finds them warm)
    stores.vectors.warm(searchable_revisions(stores.registry, None, None))
    stores.vectors.loader.keep_fresh(
        warm=lambda: stores.vectors.warm(searchable_revisions(stores.registry, None, None))
    )
    in_process, in_cpu = [], []
    for _ in range(QUERIES):
        question = next(questions)
        t0, c0 = time.perf_counter(), search_cpu_seconds()
        search_policy(stores, question, effective_date="2025-06-01", n_results=10, mode="hybrid")
        in_cpu.append((search_cpu_seconds() - c0) * 1000)
        in_process.append((time.perf_counter() - t0) * 1000)
    held = stores.vectors.loader.cache.indexes()
    rows = sum(len(i.ids) for i in held)
    parts = held_bytes(held)
    t0 = time.perf_counter()
    findings = len(audit_store(stores).findings) if audit else -1
    audit_s = time.perf_counter() - t0
    build_rate = f"{size / seconds:,.0f} chunks/s" if seconds else "(built before)"
    p50, p95 = percentiles(in_process, (50, 95))
    m50, m95 = percentiles(mcp, (50, 95))
    print(
        f"{size:>9,} {build_rate:>16} {warm_s:>9.1f} {rss / 2**20:>9,.0f} {p50:>8.2f} {p95:>8.2f} {m50:>8.2f} "
        f"{m95:>8.2f} {audit_s:>8.1f}  findings={findings}; CPU ms per call: in process p50 "
        f"{percentiles(in_cpu, (50,))[0]:.2f}, replica {mcp_cpu_ms:.2f} (minor page faults per call "
        f"{mcp_faults:,.0f})",
        flush=True,
    )
    print(
        f"  held in process: {rows:,} rows, {sum(parts.values()) / 2**20:,.0f} MB measured; bytes per row: "
        + ", ".join(f"{name} {n / max(rows, 1):,.0f}" for name, n in parts.most_common()),
        flush=True,
    )
    stop_embedded_redis(settings.paths.redis_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--revision-size", type=int, default=2000)
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "scale")
    parser.add_argument("--capacity-dir", type=Path, default=ROOT / ".bench" / "capacity")
    parser.add_argument(
        "--chroma-server",
        action="store_true",
        help="run Chroma as a server (chroma run) over the store, as the stack does",
    )
    parser.add_argument("--no-audit", action="store_true", help="skip the consistency audit (minutes at 1M)")
    parser.add_argument(
        "--export",
        type=Path,
        help="also write each size's corpus and questions under EXPORT/<size> for benchmarks/engines/",
    )
    parser.add_argument("--export-only", action="store_true", help="write the exports and measure nothing")
    args = parser.parse_args()
    base, vectors = real_chunks(args.capacity_dir)
    print(
        f"{date.today()}, {os.cpu_count()} CPUs, load average {os.getloadavg()}; {len(base)} real chunks "
        f"recombined; revisions of {args.revision_size}; SEARCH_CACHE_MB={CACHE_MB}; "
        f"{QUERIES} new questions"
    )
    print(
        f"{'chunks':>9} {'build':>16} {'warm-up s':>9} {'RSS MB':>9} {'in p50':>8} {'in p95':>8} {'mcp p50':>8} "
        f"{'mcp p95':>8} {'audit s':>8}  (dated hybrid search_policy, ms)"
    )
    for size in (int(s) for s in args.sizes.split(",")):
        if args.export:
            settings = load_settings(data_dir=args.data_dir / str(size), redis_url=None)
            export(args.export / str(size), open_stores(settings).policies, base, vectors, size, args.revision_size)
            stop_embedded_redis(settings.paths.redis_dir)
        if not args.export_only:
            measure(
                size,
                args.data_dir / str(size),
                base,
                vectors,
                args.revision_size,
                server=args.chroma_server,
                audit=not args.no_audit,
            )


if __name__ == "__main__":
    random.seed(0)
    main()
