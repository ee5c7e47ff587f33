"""Ingest the NPPF December 2024 PDF into fresh stores and say where the time goes.

Prints pages, chunks, seconds per stage, chunks/s, and the ratio of the whole ingestion to embedding
the same chunk texts alone, measured in the same run (target: ≤ 1.25, i.e. everything that is not
the model costs at most a quarter of what the model does).

    .venv/bin/python benchmarks/ingest.py [--pdf PATH] [--runs N]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lib.composition import open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.policies.ingest import ingest_revision  # noqa: E402
from lib.policies.lifecycle import register_revision  # noqa: E402
from lib.policies.models import PolicyCreate, RevisionCreate  # noqa: E402
from lib.stores.embedding_model import load_model  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402
from lib.text.chunking import chunk_sections  # noqa: E402
from lib.text.extraction import extract_document  # noqa: E402
from lib.text.sections import split_sections  # noqa: E402

DEFAULT_PDF = ROOT / "deployments" / "seed" / "NPPF_December_2024.pdf"


def run_once(pdf: Path) -> dict[str, float]:
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as folder:
        settings = load_settings(data_dir=Path(folder), redis_url=None)
        stores = open_stores(settings).policies
        try:
            stores.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
            register_revision(
                stores,
                "NPPF",
                RevisionCreate(version_label="December 2024", effective_from="2024-12-12"),
                pdf.read_bytes(),
            )
            started = time.perf_counter()
            outcome = ingest_revision(stores, "NPPF", "rev_NPPF_2024_12")
            total = time.perf_counter() - started

            texts = [c.text for c in chunk_sections(split_sections(extract_document(pdf.read_bytes())))]
            assert len(texts) == outcome.chunks_created
            started = time.perf_counter()
            stores.embedder.embed_batch(texts)
            embed_alone = time.perf_counter() - started
        finally:
            stop_embedded_redis(settings.paths.redis_dir)
    return {
        "pages": outcome.page_count,
        "chunks": outcome.chunks_created,
        **{f"stage_{k}": v for k, v in outcome.seconds.items() if k != "total"},
        "total": total,
        "embed_alone": embed_alone,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pdf", type=Path, default=DEFAULT_PDF)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    started = time.perf_counter()
    load_model().encode(["warm up"])
    print(f"model load + first encode: {time.perf_counter() - started:.2f} s (once per process, not counted)")

    runs = [run_once(args.pdf) for _ in range(args.runs)]
    med = {key: statistics.median(r[key] for r in runs) for key in runs[0]}
    print(f"\n{args.pdf.name}: {int(med['pages'])} pages → {int(med['chunks'])} chunks  (median of {len(runs)} runs)")
    print(f"{'stage':<12}{'seconds':>10}{'share':>9}")
    for key, value in med.items():
        if key.startswith("stage_"):
            print(f"{key.removeprefix('stage_'):<12}{value:>10.3f}{value / med['total']:>9.1%}")
    print(f"{'total':<12}{med['total']:>10.3f}")
    print(f"\nchunks/s (whole ingestion): {med['chunks'] / med['total']:.1f}")
    alone_rate = med["chunks"] / med["embed_alone"]
    print(f"embedding the same texts alone: {med['embed_alone']:.3f} s ({alone_rate:.1f} chunks/s)")
    ratio = med["total"] / med["embed_alone"]
    print(f"ratio total / embed-alone: {ratio:.3f}  (target ≤ 1.25: {'met' if ratio <= 1.25 else 'NOT met'})")


if __name__ == "__main__":
    main()
