"""Where the dense leg's small path (``lib.retrieval.float_rows``) stops paying: ``exact_hits`` over slices of
growing size, by the int8 codes (pages, rows read from the snapshot file, as served) and by the float32 product
(rows held in memory), thread CPU per search.

The vectors are the NPPF December 2024's 543 (``nppf_store``), tiled with a little noise (each copy moved by
``N(0, 0.01)`` per dimension and normalised) to the sizes asked, saved as snapshots and read back, so the exact
rows live in files as a served slice's do; the questions are new ones embedded by the served encoder, 100 hits
each (a hybrid search's depth). Both paths return the same hits (checked on every search).

    .venv/bin/python benchmarks/dense_small_path.py [--sizes 543,1000,2000,4000,8000,16000] [--queries 150]

Figures: docs/decisions/0049-cost-of-one-call.md (the threshold ``SMALL_ROWS``).
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.harness import percentiles  # noqa: E402
from benchmarks.nppf_store import distinct_questions, prepare, stop  # noqa: E402


def main() -> None:
    from lib.retrieval.code_pages import CodePages
    from lib.retrieval.corpus_index import CorpusIndex
    from lib.retrieval.float_rows import FloatRows
    from lib.retrieval.index_snapshot import IndexSnapshots
    from lib.retrieval.slice_search import exact_hits

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="543,1000,2000,4000,8000,16000")
    parser.add_argument("--queries", type=int, default=150)
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "nppf-543")
    args = parser.parse_args()
    store = prepare(args.data_dir.resolve())
    try:
        got = store.stores.vectors.collection.get(include=["embeddings"])
        base = np.asarray(got["embeddings"], dtype=np.float32)
        embedder = store.stores.embedder
        embedder.warm_up()
        embedder.query_cache_size = 0
        questions = distinct_questions(store.texts, seed=53)
        queries = [embedder.embed_queries([next(questions)])[0] for _ in range(args.queries + 10)]
        rng = np.random.default_rng(53)
        print(
            f"exact_hits, 100 hits, one slice, {args.queries} new questions; thread CPU ms p50 / p95; "
            f"load average {os.getloadavg()[0]:.1f}; {os.cpu_count()} CPUs"
        )
        print(f"  {'rows':>7}{'int8 p50':>10}{'p95':>8}{'float32 p50':>13}{'p95':>8}")
        with tempfile.TemporaryDirectory() as folder:
            snapshots = IndexSnapshots(Path(folder))
            for size in (int(s) for s in args.sizes.split(",")):
                copies = [base]
                while sum(len(c) for c in copies) < size:
                    moved = base + rng.normal(scale=0.01, size=base.shape).astype(np.float32)
                    copies.append(moved / np.linalg.norm(moved, axis=1, keepdims=True))
                vectors = np.vstack(copies)[:size]
                ids = [f"bench__{i:06d}" for i in range(size)]
                made = CorpusIndex.from_embeddings(f"bench-{size}", 0, ids, vectors, [""] * size, [{}] * size)
                index = snapshots.save(made)
                assert index is not None
                pages, small = CodePages(), FloatRows()
                pages.place([index.vectors])
                times: dict[str, list[float]] = {"int8": [], "float32": []}
                for i, query in enumerate(queries):
                    started = time.thread_time()
                    large = exact_hits(query, 100, [index], pages=pages)
                    middle = time.thread_time()
                    found = exact_hits(query, 100, [index], float_rows=small)
                    ended = time.thread_time()
                    assert found.tobytes() == large.tobytes()
                    if i >= 10:
                        times["int8"].append((middle - started) * 1000)
                        times["float32"].append((ended - middle) * 1000)
                (a50, a95), (b50, b95) = (percentiles(times[k], (50, 95)) for k in ("int8", "float32"))
                print(f"  {size:>7}{a50:>10.3f}{a95:>8.3f}{b50:>13.3f}{b95:>8.3f}")
    finally:
        stop(store)


if __name__ == "__main__":
    main()
