"""An embedded engine measured on ``benchmarks/scale.py``'s corpus and questions and on SciFact (issue 47 item 3,
decision 0050). Runs in the engines' own environment, not the product's:

    python3 -m venv .tools/engines-venv && .tools/engines-venv/bin/pip install -r benchmarks/engines/requirements.txt
    .venv/bin/python benchmarks/scale.py --sizes 100000,1000000 --export .bench/engines/export --export-only
    .tools/engines-venv/bin/python benchmarks/engines/measure.py build --export .bench/engines/export/100000 \\
        --db .bench/engines/lancedb/100000 [--vector-index]
    .tools/engines-venv/bin/python benchmarks/engines/measure.py search --export .bench/engines/export/100000 \\
        --db .bench/engines/lancedb/100000
    .venv/bin/python benchmarks/engines/scifact.py export --data ../shared/data/scifact --out .bench/engines/scifact
    .tools/engines-venv/bin/python benchmarks/engines/measure.py scifact --export .bench/engines/scifact \\
        --db .bench/engines/lancedb/scifact
    .venv/bin/python benchmarks/engines/scifact.py score --data ../shared/data/scifact --out .bench/engines/scifact

``build``: the chunks written in batches (rows/s), then the indexes (seconds), and the table's size on disk.
``search`` (run it as a process of its own): warm-up is from the start of the process (the engine's import
included) to the first answer; then every question of scale.py's in-process step, each new, as a dated hybrid
search (in force on 2025-06-01, 10 hits, legs 100 deep, RRF) from its precomputed query vector. The embedding is
not in it: its p50 in the product's process (``questions.npz``'s ``embed_ms``) is printed beside. Wall ms
p50/p95, the process's CPU ms per search (every engine thread), RSS after. ``scifact``: the test split's hybrid
rankings (30 chunks, legs 100 deep, every chunk in force) written as JSON for the product's own nDCG@10
(``scifact.py score``).
"""

from __future__ import annotations

import time

STARTED = time.perf_counter()

import argparse  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
from collections.abc import Iterator  # noqa: E402
from datetime import date  # noqa: E402
from pathlib import Path  # noqa: E402

os.environ.setdefault("LANCE_LOG", "error")  # the engine's deprecation notices, once per search

import numpy as np  # noqa: E402
import psutil  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import lancedb_index as engine  # noqa: E402

DAY = date(2025, 6, 1)
IN_FORCE_FROM = date(2000, 1, 1)
BATCH = 50_000
SCIFACT_TOP = 30
"""Chunks ranked per SciFact query, as ``benchmarks/retrieval.py`` asks the product for (``TOP``)."""


def unpacked(archive: np.lib.npyio.NpzFile, prefix: str) -> list[str]:
    """``scale.py``'s packed strings (one UTF-8 buffer and end offsets) back as strings."""
    data = archive[f"{prefix}utf8"].tobytes()
    ends = archive[f"{prefix}ends"]
    starts = np.concatenate([[0], ends[:-1]])
    return [data[a:b].decode() for a, b in zip(starts.tolist(), ends.tolist(), strict=True)]


def percentile(samples: list[float], q: float) -> float:
    return float(np.percentile(samples, q, method="nearest"))


def corpus_batches(export: Path) -> Iterator[engine.pa.RecordBatch]:
    corpus = np.load(export / "corpus.npz")
    vectors, source = corpus["vectors"], corpus["source"]
    texts, lexical = unpacked(corpus, "text_"), unpacked(corpus, "lexical_")
    for start in range(0, len(texts), BATCH):
        rows = range(start, min(start + BATCH, len(texts)))
        yield engine.batch(
            [str(i) for i in rows],
            [f"SCALE_{source[i]:05d}" for i in rows],
            texts[rows.start : rows.stop],
            lexical[rows.start : rows.stop],
            vectors[rows.start : rows.stop],
            [IN_FORCE_FROM] * len(rows),
            [None] * len(rows),
        )


def disk_mb(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def build(export: Path, db: Path, vector_index: bool) -> None:
    shutil.rmtree(db, ignore_errors=True)
    rows = len(np.load(export / "corpus.npz")["source"])
    started = time.perf_counter()
    table = engine.lancedb.connect(db).create_table(
        engine.TABLE, data=corpus_batches(export), schema=engine.schema(), mode="overwrite"
    )
    written = time.perf_counter() - started
    timings = {}
    for column, config in (
        ("lexical", engine.FTS()),
        ("effective_from", engine.BTree()),
        ("effective_to", engine.BTree()),
        *((("vector", engine.HnswSq(distance_type="cosine")),) if vector_index else ()),
    ):
        t0 = time.perf_counter()
        table.create_index(column, config=config)
        timings[column] = time.perf_counter() - t0
    print(
        f"lancedb {engine.lancedb.__version__} build {rows:,} rows: written {written:.1f} s "
        f"({rows / written:,.0f} rows/s); indexes "
        + ", ".join(f"{c} {s:.1f} s" for c, s in timings.items())
        + f"; on disk {disk_mb(db):,.0f} MB; peak RSS of the build {peak_rss_mb():,.0f} MB; "
        f"load average {os.getloadavg()}",
        flush=True,
    )


def peak_rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def search(export: Path, db: Path, depth: int, asked: int) -> None:
    questions = np.load(export / "questions.npz")
    vectors, texts = questions["vectors"][: asked + 1], unpacked(questions, "")[: asked + 1]
    embed_ms = float(questions["embed_ms"]) if "embed_ms" in questions else 0.0
    table = engine.open_table(db)
    engine.dated_hybrid(table, vectors[0], texts[0], DAY, depth=depth)
    warm_up = time.perf_counter() - STARTED
    rss_warm = psutil.Process().memory_info().rss
    wall, cpu = [], []
    for vector, text in zip(vectors[1:], texts[1:], strict=True):
        t0, c0 = time.perf_counter(), time.process_time()
        hits = engine.dated_hybrid(table, vector, text, DAY, depth=depth)
        wall.append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
        assert len(hits) == 10, hits
    rss = psutil.Process().memory_info().rss
    print(
        f"lancedb search over {table.count_rows():,} rows, {len(wall)} new questions, legs {depth} deep: warm-up "
        f"(process start to first answer) {warm_up:.2f} s, RSS {rss_warm / 2**20:,.0f} MB then "
        f"{rss / 2**20:,.0f} MB after; search p50 / p95 {percentile(wall, 50):.2f} / {percentile(wall, 95):.2f} ms "
        f"(+ embedding p50 {embed_ms:.2f} ms in the product); process CPU per search p50 "
        f"{percentile(cpu, 50):.2f} ms; load average {os.getloadavg()}",
        flush=True,
    )


def scifact(export: Path, db: Path, depth: int) -> None:
    """Build the SciFact table (no dates in play: every chunk in force) and write each test query's ranking."""
    corpus, queries = np.load(export / "corpus.npz"), np.load(export / "queries.npz")
    refs, lexical, texts = unpacked(corpus, "ref_"), unpacked(corpus, "lexical_"), unpacked(corpus, "text_")
    count = len(refs)
    shutil.rmtree(db, ignore_errors=True)
    rows = engine.batch(
        [str(i) for i in range(count)],
        ["SCIFACT"] * count,
        texts,
        lexical,
        corpus["vectors"],
        [IN_FORCE_FROM] * count,
        [None] * count,
    )
    engine.create(db, [rows], vector_index=False)
    table = engine.open_table(db)
    qids, qtexts = unpacked(queries, "id_"), unpacked(queries, "text_")
    ranked = {}
    for qid, text, vector in zip(qids, qtexts, queries["vectors"], strict=True):
        hits = engine.dated_hybrid(table, vector, text, DAY, k=SCIFACT_TOP, depth=depth)
        ranked[qid] = [refs[int(chunk)] for chunk, _ in hits]
    (export / "lancedb_ranked.json").write_text(json.dumps(ranked))
    print(f"lancedb SciFact: {count:,} chunks, {len(ranked)} test queries ranked to {export / 'lancedb_ranked.json'}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("build", "search", "scifact"))
    parser.add_argument("--export", type=Path, required=True, help="a folder scale.py --export (or scifact.py) wrote")
    parser.add_argument("--db", type=Path, required=True, help="the LanceDB folder")
    parser.add_argument("--vector-index", action="store_true", help="build an HNSW index (approximate dense leg)")
    parser.add_argument("--depth", type=int, default=100, help="each leg's candidates before fusion")
    parser.add_argument("--questions", type=int, default=199, help="questions timed after the first")
    args = parser.parse_args()
    if args.step == "build":
        build(args.export, args.db, args.vector_index)
    elif args.step == "search":
        search(args.export, args.db, args.depth, args.questions)
    else:
        scifact(args.export, args.db, args.depth)


if __name__ == "__main__":
    main()
