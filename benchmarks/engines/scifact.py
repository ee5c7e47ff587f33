"""SciFact for an engine measured outside the product's environment (decision 0050), with the product's own
chunks, embeddings and metric.

``export``: SciFact stored through the product as ``benchmarks/retrieval.py`` stores it (its chunks, the default
encoder's vectors), then written for ``benchmarks/engines/measure.py scifact``: ``corpus.npz`` (each chunk's
section ref, text, the text the lexical leg indexes, its vector as stored) and ``queries.npz`` (the test split's
queries and their query vectors). ``score``: the product's hybrid ``search_policy`` on the same store and the
engine's rankings (``lancedb_ranked.json``), both as nDCG@10 over abstracts (an abstract at its best chunk).

    .venv/bin/python benchmarks/engines/scifact.py export --data ../shared/data/scifact --out .bench/engines/scifact
    .venv/bin/python benchmarks/engines/scifact.py score --data ../shared/data/scifact --out .bench/engines/scifact
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from benchmarks.retrieval import (  # noqa: E402
    TOP,
    index_scifact,
    load_split,
    ndcg_at,
    open_store,
    quality,
    ranked_docs,
    run_queries,
)
from benchmarks.scale import packed  # noqa: E402
from lib.policies.stores import PolicyStores  # noqa: E402
from lib.retrieval import lexical_text  # noqa: E402
from lib.stores.encoders import EncoderName  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402

ENCODER: EncoderName = "int8"
"""The product's default encoder."""


def export(stores: PolicyStores, data: Path, out: Path) -> None:
    index_scifact(stores, data)
    got = stores.vectors.collection.get(include=["documents", "metadatas", "embeddings"])
    refs = [str(m["section_ref"]) for m in got["metadatas"] or []]
    texts = list(got["documents"] or [])
    lexical = [
        lexical_text([str(m["section_ref"]), str(m.get("chapter", ""))], t)
        for m, t in zip(got["metadatas"] or [], texts, strict=True)
    ]
    out.mkdir(parents=True, exist_ok=True)
    ref, text, heading = packed(refs), packed(texts), packed(lexical)
    np.savez(
        out / "corpus.npz",
        vectors=np.asarray(got["embeddings"], dtype=np.float32),
        ref_utf8=ref["utf8"],
        ref_ends=ref["ends"],
        text_utf8=text["utf8"],
        text_ends=text["ends"],
        lexical_utf8=heading["utf8"],
        lexical_ends=heading["ends"],
    )
    queries, _ = load_split(data, "test")
    qid, qtext = packed(list(queries)), packed(list(queries.values()))
    np.savez(
        out / "queries.npz",
        vectors=stores.embedder.embed_queries(list(queries.values())).astype(np.float32),
        id_utf8=qid["utf8"],
        id_ends=qid["ends"],
        text_utf8=qtext["utf8"],
        text_ends=qtext["ends"],
    )
    print(f"exported {len(refs):,} SciFact chunks and {len(queries)} test queries to {out}")


def score(stores: PolicyStores, data: Path, out: Path) -> None:
    queries, qrels = load_split(data, "test")
    ours, _ = run_queries(stores, queries, "hybrid", n=TOP)
    print(f"SciFact test ({len(queries)} queries) nDCG@10, hybrid, {ENCODER} encoder:")
    print(f"  ours (search_policy, convex fusion, {TOP} chunks): {quality(ours, qrels)[0]:.4f}")
    for ranked_file in sorted(out.glob("*_ranked.json")):
        ranked = json.loads(ranked_file.read_text())
        ndcg = statistics.fmean(ndcg_at(ranked_docs(ranked[q]), qrels[q]) for q in queries)
        print(f"  {ranked_file.stem.removesuffix('_ranked')} (RRF, {TOP} chunks): {ndcg:.4f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=("export", "score"))
    parser.add_argument("--data", type=Path, required=True, help="BEIR SciFact folder (corpus, queries, qrels)")
    parser.add_argument("--out", type=Path, default=ROOT / ".bench" / "engines" / "scifact")
    args = parser.parse_args()
    stores = open_store(args.out / "store", ENCODER)
    try:
        (export if args.step == "export" else score)(stores, args.data, args.out)
    finally:
        stop_embedded_redis(stores.settings.paths.redis_dir)


if __name__ == "__main__":
    main()
