"""The floor under an exact dense search at 10k to 1M chunks: one query's product with every stored vector,
alone, on one core (issue 27, part 4).

Why: the dated hybrid search at 1M chunks has a goal of p95 ≤ 30 ms in process. The exact dense leg reads every
held vector once per query, so its time is bounded below by the memory bandwidth, whatever the code around it.
This measures that product the way ``lib.retrieval.document_index`` computes it (float32 columns, one BLAS thread, then
the best 100 rows), the same product with vectors held as float16 or bfloat16 rows in torch (the compact
layouts decision 0034 names), and the core's read bandwidth over an array of the same size, so the table shows
how far below the goal the floor already is. The vectors are random unit vectors: the product's cost does not
depend on what they hold. Pinned to one core (``--core``), median and p95 of ``--queries`` new query vectors.

    .venv/bin/python benchmarks/dense_floor.py [--sizes 10000,100000,1000000] [--queries 50] [--core 0]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import percentiles  # noqa: E402
from lib.retrieval.blas import pin_single_blas_thread  # noqa: E402
from lib.retrieval.document_index import best_rows, column_scores, stack_columns  # noqa: E402
from lib.stores.embedding_model import DIMENSIONS  # noqa: E402

DEPTH = 100
"""How many rows the dense leg keeps for fusion (``lib.retrieval.ranking.leg_depth`` at the largest top)."""


def unit_rows(rows: int, seed: int) -> np.ndarray:
    out = np.empty((rows, DIMENSIONS), dtype=np.float32)
    rng = np.random.default_rng(seed)
    for start in range(0, rows, 100_000):  # in slices: one temporary of 1M x 384 float64 would be 3 GB
        piece = rng.standard_normal((min(100_000, rows - start), DIMENSIONS), dtype=np.float32)
        out[start : start + len(piece)] = piece / np.linalg.norm(piece, axis=1, keepdims=True)
    return out


def timed(fn: Callable[[int], object], queries: int) -> tuple[float, float]:
    """p50 and p95 in ms of ``fn(i)`` over ``queries`` calls, after one untimed call."""
    fn(queries)
    samples = []
    for i in range(queries):
        started = time.perf_counter()
        fn(i)
        samples.append((time.perf_counter() - started) * 1000)
    p50, p95 = percentiles(samples, (50, 95))
    return p50, p95


def read_bandwidth(array: np.ndarray, repeats: int = 5) -> float:
    """GB/s reading ``array`` once (a float32 sum: one pass, nothing written), the best of ``repeats``."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        np.add.reduce(array, axis=None, dtype=np.float32)
        best = min(best, time.perf_counter() - started)
    return array.nbytes / best / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--queries", type=int, default=50)
    parser.add_argument("--core", type=int, default=0)
    args = parser.parse_args()
    os.sched_setaffinity(0, {args.core})
    pin_single_blas_thread()
    import torch

    torch.set_num_threads(1)
    questions = unit_rows(args.queries + 1, 99)
    print(
        "| chunks | float32 held | float32 columns p50 / p95 ms | float16 rows (torch) p50 / p95 ms | "
        "bfloat16 rows (torch) p50 / p95 ms | read bandwidth | float32 read at that rate |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for size in (int(s) for s in args.sizes.split(",")):
        rows = unit_rows(size, size)
        columns = stack_columns(rows)

        def exact(i: int, columns: np.ndarray = columns, size: int = size) -> object:
            return best_rows(column_scores(columns, questions[i], size), DEPTH)

        f32 = timed(exact, args.queries)
        bandwidth = read_bandwidth(columns)
        floor_ms = columns.nbytes / bandwidth / 1e6
        compact = []
        for dtype in (torch.float16, torch.bfloat16):
            held = torch.from_numpy(rows).to(dtype)
            asked = torch.from_numpy(questions).to(dtype)

            def product(i: int, held: torch.Tensor = held, asked: torch.Tensor = asked, size: int = size) -> object:
                return torch.topk((held @ asked[i]).float(), min(DEPTH, size))

            compact.append(timed(product, args.queries))
            del held
        del rows
        print(
            f"| {size:,} | {columns.nbytes / 2**20:,.0f} MB | {f32[0]:.2f} / {f32[1]:.2f} | "
            f"{compact[0][0]:.2f} / {compact[0][1]:.2f} | {compact[1][0]:.2f} / {compact[1][1]:.2f} | "
            f"{bandwidth:.1f} GB/s | {floor_ms:.2f} ms |",
            flush=True,
        )
        del columns


if __name__ == "__main__":
    main()
