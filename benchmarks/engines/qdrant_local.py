"""Qdrant's embedded engine (``qdrant-client``'s local mode, in memory) on ``benchmarks/scale.py``'s exported
corpus: the dated dense search (in force on 2025-06-01 as a payload range filter, 10 hits) from the exported query
vectors, wall ms p50/p95 and RSS (decision 0050). Local mode has no BM25 of its own: a hybrid search needs sparse
vectors computed by us, so only the dense leg is measured, as the lower bound of a hybrid search.

    .tools/engines-venv/bin/python benchmarks/engines/qdrant_local.py --export .bench/engines/export/100000
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np
import psutil
from qdrant_client import QdrantClient, models

sys.path.insert(0, str(Path(__file__).parent))
from measure import percentile, unpacked

IN_FORCE_FROM, DAY = "2000-01-01T00:00:00Z", "2025-06-01T00:00:00Z"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--export", type=Path, required=True)
    parser.add_argument("--questions", type=int, default=50)
    args = parser.parse_args()
    corpus, questions = np.load(args.export / "corpus.npz"), np.load(args.export / "questions.npz")
    vectors, sources = corpus["vectors"], corpus["source"]
    client = QdrantClient(":memory:")
    params = models.VectorParams(size=vectors.shape[1], distance=models.Distance.COSINE)
    client.create_collection("chunks", vectors_config=params)
    started = time.perf_counter()
    for start in range(0, len(vectors), 10_000):
        rows = range(start, min(start + 10_000, len(vectors)))
        payloads = [{"source": f"SCALE_{sources[i]:05d}", "effective_from": IN_FORCE_FROM} for i in rows]
        client.upload_collection("chunks", vectors[rows.start : rows.stop], payload=payloads, ids=list(rows))
    loaded = time.perf_counter() - started
    in_force = models.Filter(
        must=[models.FieldCondition(key="effective_from", range=models.DatetimeRange(lte=DAY))],
        must_not=[models.FieldCondition(key="effective_to", range=models.DatetimeRange(lte=DAY))],
    )
    wall = []
    for vector in questions["vectors"][: args.questions]:
        t0 = time.perf_counter()
        hits = client.query_points("chunks", query=vector, query_filter=in_force, limit=10).points
        wall.append((time.perf_counter() - t0) * 1000)
        assert len(hits) == 10, hits
    texts = unpacked(questions, "")
    print(
        f"qdrant-client local mode, {len(vectors):,} points loaded in {loaded:.1f} s; dated dense search "
        f"({len(wall)} of {len(texts)} questions) p50 / p95 {percentile(wall, 50):.1f} / {percentile(wall, 95):.1f} "
        f"ms; RSS {psutil.Process().memory_info().rss / 2**20:,.0f} MB; load average {os.getloadavg()}",
        flush=True,
    )


if __name__ == "__main__":
    main()
