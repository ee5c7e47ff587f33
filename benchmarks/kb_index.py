"""The kb's in-process search index (``lib.notes.index`` + ``lib.notes.search.rank_snapshot``) at 1,000 and
10,000 notes: per-query time of each mode and the time to take in one new note.

No stores and no model: what this measures is the index, which holds everything a query touches once the
registry and Chroma have been read. The notes are SciFact abstracts cut into 1-6 sentences after their title
(real scientific prose, chunked by ``lib.notes.ingest.text_pieces`` as a note is), in three collections
with one more tag each; their vectors are random unit vectors (the dense leg's cost does not depend on what
they hold) and so is each query's. Queries are SciFact claims, a third filtered to one collection, a third
to a collection and a tag, the rest unfiltered, as ``benchmarks/kb.py`` sends them over MCP.

"One new note" is ``Snapshot.after`` with one more document, then everything the next query computes
lazily (the stacked vectors, the row maps): what a process pays after a registration, besides re-reading the
registry's live map and the note's chunks from Chroma. Times are wall-clock medians; CPU time is printed
beside them because this machine is shared.

    .venv/bin/python benchmarks/kb_index.py --data ../shared/data/scifact [--notes 1000 10000] [--queries 60]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import percentiles  # noqa: E402
from lib.notes.index import Snapshot  # noqa: E402
from lib.notes.ingest import text_pieces  # noqa: E402
from lib.notes.search import rank_snapshot  # noqa: E402
from lib.retrieval import DocumentChunks, SearchMode  # noqa: E402
from lib.stores.chroma import StoredChunk  # noqa: E402

DIMS = 384
COLLECTIONS = ("documents", "memory", "research")


def unit_vectors(rows: int, seed: int) -> np.ndarray:
    vectors = np.random.default_rng(seed).standard_normal((rows, DIMS)).astype(np.float32)
    return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def make_notes(data: Path, count: int) -> tuple[list[DocumentChunks[int]], dict[str, set[int]]]:
    rng = random.Random(7)
    abstracts = [json.loads(line) for line in (data / "corpus.jsonl").open()]
    documents: list[DocumentChunks[int]] = []
    tagged: dict[str, set[int]] = {}
    for document_id in range(1, count + 1):
        abstract = abstracts[rng.randrange(len(abstracts))]
        sentences = re.split(r"(?<=[.!?])\s+", abstract["text"])
        start = rng.randrange(len(sentences))
        text = f"{abstract['title']} {' '.join(sentences[start : start + rng.randint(1, 6)])}"
        texts = [piece for piece, _ in text_pieces(text)]
        chunks = tuple(
            StoredChunk(f"kb_{document_id}_1_{i:05d}", t, {"document_id": document_id, "chunk_index": i})
            for i, t in enumerate(texts)
        )
        documents.append(DocumentChunks(document_id, 1, chunks, unit_vectors(len(texts), document_id)))
        for tag in (f"collection:{COLLECTIONS[document_id % 3]}", rng.choice(["feedback", "todo", "reference"])):
            tagged.setdefault(tag, set()).add(document_id)
    return documents, tagged


def timed(fn: Callable[..., object], *args: object) -> tuple[float, float]:
    wall, cpu = time.perf_counter(), time.process_time()
    fn(*args)
    return (time.perf_counter() - wall) * 1000, (time.process_time() - cpu) * 1000


def materialise(snapshot: Snapshot) -> None:
    """What the first query after a new snapshot computes lazily."""
    for name in ("columns", "owners", "row_keys", "offsets", "by_key"):
        getattr(snapshot.index, name)
    snapshot.index.lexical.rank("warm", 1, {1})


def grow(snapshot: Snapshot, generation: int, new: DocumentChunks[int]) -> None:
    materialise(Snapshot.after(snapshot, generation, (*snapshot.documents, new)))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=ROOT.parent / "shared" / "data" / "scifact")
    parser.add_argument("--notes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--queries", type=int, default=60)
    args = parser.parse_args()
    claims = [json.loads(line)["text"] for line in (args.data / "queries.jsonl").open()]
    queries = random.Random(3).sample(claims, args.queries)
    query_vectors = unit_vectors(len(queries), 99)

    print("| notes | chunks | mode | p50 ms | p95 ms | CPU ms/query |")
    print("|---|---|---|---|---|---|")
    updates: list[str] = []
    for count in args.notes:
        documents, tagged = make_notes(args.data, count + 5)
        snapshot = Snapshot.after(None, 1, tuple(documents[:count]))
        materialise(snapshot)
        filters = [tagged["collection:memory"], tagged["collection:research"] & tagged["todo"], None]
        for mode in (SearchMode.LEXICAL, SearchMode.DENSE, SearchMode.HYBRID):
            walls, cpus = [], []
            for i, query in enumerate(queries):
                vector = None if mode == SearchMode.LEXICAL else query_vectors[i]
                wall, cpu = timed(rank_snapshot, snapshot, query, vector, filters[i % 3], mode, 10)
                walls.append(wall)
                cpus.append(cpu)
            (p50,), (p95,) = percentiles(walls, (50,)), percentiles(walls, (95,), method="weibull")
            print(
                f"| {count:,} | {snapshot.index.rows:,} | {mode.value} | {p50:.1f} | "
                f"{p95:.1f} | {statistics.mean(cpus):.1f} |",
                flush=True,
            )
        samples = []
        for generation, new in enumerate(documents[count:], start=2):
            texts = {new.key: [c.text for c in new.chunks]}
            lexical = timed(snapshot.index.lexical.updated, texts)
            whole = timed(grow, snapshot, generation, new)
            samples.append((lexical, whole))
        lexical_ms = statistics.median(s[0][0] for s in samples)
        whole_ms = statistics.median(s[1][0] for s in samples)
        updates.append(f"| {count:,} | {lexical_ms:.1f} | {whole_ms:.1f} |")
    print("\n| notes | one new note: lexical index ms | whole snapshot ms |")
    print("|---|---|---|")
    print("\n".join(updates))


if __name__ == "__main__":
    main()
