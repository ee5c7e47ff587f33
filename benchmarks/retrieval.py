"""Retrieval quality and cost per search mode, through the product's own ingestion and search code.

SciFact (BEIR): the 5,183 abstracts become one policy, ``SCIFACT``, with one revision whose sections are the
abstracts (title + text, chunked by ``lib.text.chunking``, stored by ``lib.policies.ingest.store_chunks``; the
title is also the section's ``chapter``, the heading the lexical leg indexes every chunk under, as an NPPF
paragraph's chunks are indexed under their chapter: ``lib.retrieval.lexical_text``);
every query goes through ``lib.policies.search.search_policy`` with ``mode``. A document's score is its best
chunk's. Prints nDCG@10 and recall@100 on the test split for lexical, dense and hybrid with each encoder, the
query p50/p95 of each, and each encoder's embedding throughput. ``--tune`` grids the fusion parameters on the
train split only (the two legs' rankings come from the product's dense and lexical modes, fused offline by
``lib.retrieval.search``) and prints the best with its train and test figures.

NPPF: the real December 2024 PDF ingested by ``ingest_revision``; questions that name a paragraph, table or
footnote and questions that paraphrase (``benchmarks/nppf_questions.json``, each with the section and page
that answers it); hit@5 per mode (a hit: a result of the answering section).

The stores are kept under ``--data-dir`` (one folder per encoder), so a rerun skips the embedding.

    .venv/bin/python benchmarks/retrieval.py --data ../shared/data/scifact [--data-dir DIR] [--tune]
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import get_args

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.harness import percentiles  # noqa: E402
from lib.composition import open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.models import Section  # noqa: E402
from lib.policies.ingest import ingest_revision, store_chunks  # noqa: E402
from lib.policies.lifecycle import create_revision, register_revision  # noqa: E402
from lib.policies.models import PolicyCreate, RevisionCreate, RevisionStatus  # noqa: E402
from lib.policies.search import search_policy  # noqa: E402
from lib.policies.stores import PolicyStores  # noqa: E402
from lib.retrieval import FusionMethod, FusionParams, Hit, LexicalAnswer, Query, SearchMode, search  # noqa: E402
from lib.stores.chroma import StoredChunk  # noqa: E402
from lib.stores.embeddings import Embedder  # noqa: E402
from lib.stores.encoders import EncoderName  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402
from lib.text.chunking import chunk_sections  # noqa: E402

MODES = ("lexical", "dense", "hybrid")
FUSION = FusionParams()
"""The product's fusion (``Query.fusion``'s default), what ``--tune`` compares with."""
SOURCE, REVISION = "SCIFACT", "rev_SCIFACT_2020_01"
DEPTH = 500
"""Chunks asked for recall@100: enough for 100 distinct abstracts (about 2.6 chunks an abstract)."""
TOP = 30
"""Chunks asked for nDCG@10 and the latencies: a small request, whose hybrid legs are ``candidates(TOP)`` deep."""
SHARED = "(shared 2-core machine, other engineers' jobs running: timings are indicative)"
NPPF_PDF = ROOT / "deployments" / "seed" / "NPPF_December_2024.pdf"
"""The bundled copy of the real NPPF December 2024 (``--nppf`` names another)."""
QUESTIONS = Path(__file__).with_name("nppf_questions.json")
Ranking = list[tuple[str, float]]


def ndcg_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 10) -> float:
    """nDCG@k with gain = the qrel grade and discount log2(rank + 1), as trec_eval's ``ndcg_cut``."""
    dcg = sum(relevant.get(doc, 0) / math.log2(rank + 2) for rank, doc in enumerate(ranked[:k]))
    ideal = sum(g / math.log2(rank + 2) for rank, g in enumerate(sorted(relevant.values(), reverse=True)[:k]))
    return dcg / ideal if ideal else 0.0


def recall_at(ranked: Sequence[str], relevant: dict[str, int], k: int = 100) -> float:
    wanted = {d for d, g in relevant.items() if g > 0}
    return len(wanted & set(ranked[:k])) / len(wanted) if wanted else 0.0


def _check_metrics() -> None:
    """Known values: relevant at ranks 1 and 3 of two relevant: (1 + 1/2) / (1 + 1/log2 3) = 0.919721."""
    assert abs(ndcg_at(["a", "x", "b"], {"a": 1, "b": 1}) - 0.919721) < 1e-6
    assert ndcg_at(["x", "a"], {"a": 1}) == 1 / math.log2(3) and recall_at(["a"], {"a": 1, "b": 1}) == 0.5


def load_split(data: Path, split: str) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    qrels: dict[str, dict[str, int]] = {}
    for line in (data / "qrels" / f"{split}.tsv").read_text().splitlines()[1:]:
        qid, doc, grade = line.split("\t")
        qrels.setdefault(qid, {})[doc] = int(grade)
    queries = {q["_id"]: q["text"] for q in map(json.loads, (data / "queries.jsonl").open()) if q["_id"] in qrels}
    return queries, qrels


def scifact_sections(data: Path) -> list[Section]:
    docs = [json.loads(line) for line in (data / "corpus.jsonl").open()]
    return [
        Section(
            section_ref=f"Doc {d['_id']}",
            chapter=d["title"],
            title=d["title"],
            text=f"{d['title']}\n\n{d['text']}".strip(),
            page_number=1,
        )
        for d in docs
    ]


def embed_timed(embedder: Embedder, texts: Sequence[str]) -> tuple[list[list[float]], float]:
    """Embed as ingestion does (longest first, in slices) and return the vectors and chunks/s."""
    order = sorted(range(len(texts)), key=lambda i: (-len(texts[i]), i))
    vectors: list[list[float]] = [[] for _ in texts]
    started = time.perf_counter()
    for start in range(0, len(order), 256):
        batch = order[start : start + 256]
        for i, vector in zip(batch, embedder.embed_batch([texts[i] for i in batch]), strict=True):
            vectors[i] = vector
    return vectors, len(texts) / (time.perf_counter() - started)


def open_store(data_dir: Path, encoder: EncoderName) -> PolicyStores:
    settings = load_settings(
        data_dir=data_dir / encoder, redis_url=None, embedding_encoder=encoder, max_results=1000, search_cache_mb=1024
    )
    stores = open_stores(settings).policies
    stores.embedder.query_cache_size = 0  # every query embedded, as a new question would be
    return stores


def index_scifact(stores: PolicyStores, data: Path) -> float | None:
    """Store SciFact as one revision unless the store already holds it; the embedding's chunks/s if done."""
    if SOURCE in stores.registry.snapshot().sources:
        if stores.registry.get_revision(SOURCE, REVISION).status == RevisionStatus.ACTIVE:
            return None
        raise SystemExit(f"{stores.settings.paths.data_dir} holds a half-indexed SCIFACT: delete the folder and rerun")
    chunks = chunk_sections(scifact_sections(data))
    vectors, rate = embed_timed(stores.embedder, [c.text for c in chunks])
    stores.registry.create_policy(PolicyCreate(source=SOURCE, title="BEIR SciFact", category="national_guidance"))
    revision = RevisionCreate(revision_id=REVISION, version_label="BEIR", effective_from="2020-01-01")
    create_revision(stores.registry, stores.vectors, SOURCE, revision)
    store_chunks(
        stores.registry,
        stores.vectors,
        SOURCE,
        REVISION,
        chunks,
        vectors,
        page_count=1,
        file_size_bytes=0,
        extraction_method="text_layer",
    )
    return rate


def ranked_docs(hits: Iterable[str]) -> list[str]:
    """Abstract ids best first, each at its best chunk (section refs are ``Doc <id>``)."""
    return list(dict.fromkeys(ref.removeprefix("Doc ") for ref in hits))


def run_queries(
    stores: PolicyStores, queries: dict[str, str], mode: str, source: str = SOURCE, n: int = DEPTH
) -> tuple[dict[str, list[tuple[str, str, float]]], list[float]]:
    """Each query's hits ``(chunk_id, section_ref, leg score)`` and each call's milliseconds; a lexical hit's
    score is its BM25 over the query's ceiling (its relevance), the scale hybrid fusion combines it on."""
    results, millis = {}, []
    for qid, text in queries.items():
        stores.vectors.answers.clear()
        started = time.perf_counter()
        hits = search_policy(stores, text, sources=[source], n_results=n, mode=mode).results
        millis.append((time.perf_counter() - started) * 1000)
        results[qid] = [(h.chunk_id, h.section_ref, h.score) for h in hits]
    return results, millis


def quality(results: dict[str, list[tuple[str, str, float]]], qrels: dict[str, dict[str, int]]) -> tuple[float, float]:
    docs = {q: ranked_docs(ref for _, ref, _ in hits) for q, hits in results.items()}
    return (
        statistics.fmean(ndcg_at(docs[q], qrels[q]) for q in docs),
        statistics.fmean(recall_at(docs[q], qrels[q]) for q in docs),
    )


def fused_quality(
    legs: dict[str, tuple[Ranking, Ranking]],
    refs: dict[str, str],
    qrels: dict[str, dict[str, int]],
    params: FusionParams,
) -> float:
    """Mean nDCG@10 of the hybrid ranking over the product's two legs, as hybrid mode would rank them with
    ``params`` (``lib.retrieval.search``, each leg cut at ``Query.depth``)."""
    scores = []
    for qid, (dense, lexical) in legs.items():
        fused = fused_ranking(Query(qid, TOP, SearchMode.HYBRID, fusion=params), dense, lexical)
        scores.append(ndcg_at(ranked_docs(refs[hit.chunk.id] for hit in fused), qrels[qid]))
    return statistics.fmean(scores)


def fused_ranking(query: Query, dense: Ranking, lexical: Ranking) -> list[Hit]:
    """``search`` over two recorded legs of chunk ids (lexical scores already over their ceiling)."""
    return search(
        query,
        lambda depth: [(StoredChunk(key, "", {}), score) for key, score in dense[:depth]],
        lambda depth: LexicalAnswer([(StoredChunk(key, "", {}), score) for key, score in lexical[:depth]], 1.0),
    )


def leg_rankings(
    stores: PolicyStores, queries: dict[str, str]
) -> tuple[dict[str, tuple[Ranking, Ranking]], dict[str, str]]:
    dense, _ = run_queries(stores, queries, "dense")
    lexical, _ = run_queries(stores, queries, "lexical")
    refs = {cid: ref for hits in (*dense.values(), *lexical.values()) for cid, ref, _ in hits}
    legs = {q: ([(c, s) for c, _, s in dense[q]], [(c, s) for c, _, s in lexical[q]]) for q in queries}
    return legs, refs


def tune(stores: PolicyStores, data: Path) -> None:
    """Grid the fusion parameters on the train split; print the best few and the best one's test figure."""
    train_q, train_rel = load_split(data, "train")
    test_q, test_rel = load_split(data, "test")
    train_legs, train_refs = leg_rankings(stores, train_q)
    test_legs, test_refs = leg_rankings(stores, test_q)
    grid = [
        FusionParams(method=FusionMethod.RRF, rrf_k=k, dense_weight=w, lexical_weight=1.0, depth=d)
        for k in (1, 5, 10, 20, 40, 60, 100)
        for w in (0.5, 0.7, 0.85, 1.0, 1.2, 1.5)
        for d in (30, 50, 100, 200, 500)
    ] + [
        FusionParams(method=FusionMethod.CONVEX, alpha=a / 20, depth=d)
        for a in range(21)
        for d in (30, 50, 100, 200, 500)
    ]
    scored = sorted(
        ((fused_quality(train_legs, train_refs, train_rel, p), p) for p in grid), key=lambda pair: pair[0], reverse=True
    )
    print(f"\nfusion grid on TRAIN ({len(train_q)} queries, {len(grid)} settings); best five of each family:")
    for method in FusionMethod:
        for score, p in [pair for pair in scored if pair[1].method == method][:5]:
            test = fused_quality(test_legs, test_refs, test_rel, p)
            setting = (
                f"alpha={p.alpha:<5g}"
                if method == FusionMethod.CONVEX
                else f"rrf_k={p.rrf_k:<5g} dense_weight={p.dense_weight:<5g}"
            )
            print(f"  {method.value:<7}{setting} depth={p.depth:<4d} train nDCG@10 {score:.4f}  test {test:.4f}")
    default = fused_quality(train_legs, train_refs, train_rel, FUSION)
    print(
        f"  current FUSION {FUSION}: train {default:.4f}  test "
        f"{fused_quality(test_legs, test_refs, test_rel, FUSION):.4f}"
    )
    plain = FusionParams(method=FusionMethod.RRF, rrf_k=60.0, dense_weight=1.0, lexical_weight=1.0, depth=100)
    print(
        f"  plain RRF k=60: train {fused_quality(train_legs, train_refs, train_rel, plain):.4f}  test "
        f"{fused_quality(test_legs, test_refs, test_rel, plain):.4f}"
    )


def scifact_table(by_encoder: dict[str, PolicyStores], data: Path) -> None:
    queries, qrels = load_split(data, "test")
    print(
        f"\nSciFact TEST ({len(queries)} queries), document = best chunk; nDCG@10 and p50/p95 of search_policy in "
        f"process at n_results={TOP} chunks, recall@100 at n_results={DEPTH} {SHARED}"
    )
    print(f"{'encoder':<8}{'mode':<9}{'nDCG@10':>9}{'R@100':>8}{'p50 ms':>9}{'p95 ms':>9}")
    for encoder, stores in by_encoder.items():
        for mode in MODES:
            results, millis = run_queries(stores, queries, mode, n=TOP)
            ndcg, _ = quality(results, qrels)
            _, recall = quality(run_queries(stores, queries, mode)[0], qrels)
            p50, p95 = percentiles(millis, (50, 95), method="nearest")
            print(f"{encoder:<8}{mode:<9}{ndcg:>9.4f}{recall:>8.4f}{p50:>9.2f}{p95:>9.2f}")


def throughput(by_encoder: dict[str, PolicyStores], data: Path, sample: int) -> None:
    """Both encoders on the same chunks, one after the other, so both see about the same load."""
    texts = [c.text for c in chunk_sections(scifact_sections(data)[:sample])]
    print(f"\nembedding throughput on {len(texts)} SciFact chunks {SHARED}")
    for encoder, stores in by_encoder.items():
        stores.embedder.embed_batch(texts[:8])
        rates = [embed_timed(stores.embedder, texts)[1] for _ in range(2)]
        print(f"  {encoder:<6} {max(rates):7.1f} chunks/s (best of 2; workers={stores.embedder.workers})")


def nppf_table(stores: PolicyStores, pdf: Path = NPPF_PDF) -> None:
    if "NPPF" not in stores.registry.snapshot().sources:
        stores.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
        register_revision(
            stores, "NPPF", RevisionCreate(version_label="December 2024", effective_from="2024-12-12"), pdf.read_bytes()
        )
        ingest_revision(stores, "NPPF", "rev_NPPF_2024_12")
    questions = json.loads(QUESTIONS.read_text())
    print(f"\nNPPF December 2024 ({stores.embedder.encoder_id}): hit@5 = a top-5 result from the answering section")
    print(f"{'kind':<12}{'n':>4}" + "".join(f"{m:>10}" for m in MODES))
    for kind in ("reference", "paraphrase"):
        asked = [q for q in questions if q["kind"] == kind]
        row = []
        for mode in MODES:
            hits = [
                search_policy(stores, q["question"], sources=["NPPF"], n_results=5, mode=mode).results for q in asked
            ]
            row.append(sum(any(h.section_ref == q["section_ref"] for h in r) for q, r in zip(asked, hits, strict=True)))
        print(f"{kind:<12}{len(asked):>4}" + "".join(f"{n / len(asked):>10.2f}" for n in row))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, required=True, help="BEIR SciFact folder (corpus, queries, qrels)")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "retrieval")
    parser.add_argument("--encoders", default="torch,int8")
    parser.add_argument("--tune", action="store_true", help="grid the fusion parameters on the train split")
    parser.add_argument("--sample", type=int, default=200, help="abstracts for the throughput comparison")
    parser.add_argument("--nppf", type=Path, default=NPPF_PDF, help="the NPPF December 2024 PDF")
    args = parser.parse_args()
    _check_metrics()
    encoders = [e for e in args.encoders.split(",") if e in get_args(EncoderName)]
    by_encoder = {e: open_store(args.data_dir, e) for e in encoders}
    try:
        for encoder, stores in by_encoder.items():
            started = time.perf_counter()
            rate = index_scifact(stores, args.data)
            if rate is not None:
                print(
                    f"indexed SciFact with {encoder}: {stores.vectors.count()} chunks, embedding {rate:.1f} "
                    f"chunks/s, "
                    f"{time.perf_counter() - started:.0f} s {SHARED}"
                )
        scifact_table(by_encoder, args.data)
        throughput(by_encoder, args.data, args.sample)
        if args.tune:
            tune(by_encoder[encoders[0]], args.data)
        nppf_table(by_encoder[encoders[0]], args.nppf)
    finally:
        for stores in by_encoder.values():
            stop_embedded_redis(stores.settings.paths.redis_dir)


if __name__ == "__main__":
    main()
