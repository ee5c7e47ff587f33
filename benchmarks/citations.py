"""What checking a citation costs (issue 26): ``verify_quote`` and ``get_page_image`` in process, over both
NPPF revisions (the seed: December 2024 and the December 2025 draft) and four local plans.

    .venv/bin/python benchmarks/citations.py --data ../shared/data/local_plans [--data-dir .bench/citations] \\
        [--quotes 200] [--pages 30]

The plans are ingested through the product's own path (as ``benchmarks/sections.py --questions`` does) into a
store under ``--data-dir`` (kept: a rerun only measures). Quotes are sentences drawn at random from the stored
chunks of every revision, each asked once, in four kinds: as stored (``exact``), reflowed onto one line with
straight quotes made curly (``normalised``), one word changed (``close``), and the words of a sentence
shuffled (``not_found``); each is asked of the whole knowledge base as of a day the NPPF December 2024 is in
force. Printed: p50/p95/max per kind (the first question per revision, which reads the revision's sections,
counted apart as cold), and how many answers had the expected verdict. Page images: random pages of every
revision at 150 dpi with a sentence of the page highlighted, cold (rendered and stored) then warm (read back
from the object store); goals warm <= 20 ms, cold <= 300 ms, verify_quote p50 <= 15 ms.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
warnings.filterwarnings("ignore", category=FutureWarning)
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.harness import percentiles  # noqa: E402
from benchmarks.sections import ingest_plan  # noqa: E402
from lib.composition import open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.policies.page_images import page_image  # noqa: E402
from lib.policies.quotes import verify_quote  # noqa: E402
from lib.policies.seeding import seed_policies  # noqa: E402
from lib.policies.stores import PolicyStores  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402

PLANS = (
    "babergh_midsuffolk_joint_local_plan_part1_2023.pdf",
    "buckinghamshire_draft_local_plan_partB_DM_policies_2025.pdf",
    "fenland_local_plan_adopted_2014.pdf",
    "watford_local_plan_inspectors_report_main_mods_appendix.pdf",
)
SEED = ROOT / "deployments" / "seed" / "seed.yaml"
DAY = "2025-06-01"
_SENTENCE = re.compile(r"[A-Z][^.\n]{60,240}\.")


def sentences(stores: PolicyStores) -> list[tuple[str, str]]:
    """(revision_ref, sentence) for every sentence of every stored chunk."""
    out: list[tuple[str, str]] = []
    for chunk in stores.vectors.chunks({"revision_ref": {"$ne": ""}}):
        out.extend((str(chunk.metadata["revision_ref"]), s) for s in _SENTENCE.findall(chunk.text))
    return out


def variants(sentence: str, rng: random.Random) -> dict[str, str]:
    words = sentence.split()
    changed = list(words)
    i = rng.randrange(1, len(words) - 1)
    changed[i] = "elephant" if words[i].lower() != "elephant" else "giraffe"
    shuffled = list(words)
    rng.shuffle(shuffled)
    lines = [" ".join(words[j : j + 7]) for j in range(0, len(words), 7)]
    reflowed = "\n".join(lines).replace("'", "\u2019")
    return {"exact": sentence, "normalised": " ".join(reflowed.split()) + " ", "close": " ".join(changed),
            "not_found": " ".join(shuffled)}  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="the folder holding the local plans")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "citations")
    parser.add_argument("--quotes", type=int, default=200, help="sentences drawn (each asked in four kinds)")
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    rng = random.Random(args.seed)
    settings = load_settings(data_dir=args.data_dir, redis_url=None)
    stores = open_stores(settings).policies
    try:
        seed_policies(stores, SEED)
        for name in PLANS:
            ingest_plan(stores, args.data / name)
        drawn = rng.sample(sentences(stores), args.quotes)
        timings: dict[str, list[float]] = {}
        cold: list[float] = []
        right: dict[str, int] = {}
        seen: set[str] = set()
        for ref, sentence in drawn:
            for kind, quote in variants(sentence, rng).items():
                started = time.perf_counter()
                out = verify_quote(stores, quote, effective_date=DAY)
                elapsed = (time.perf_counter() - started) * 1000
                (cold if ref not in seen else timings.setdefault(kind, [])).append(elapsed)
                seen.add(ref)
                found = out.match if out.match is not None else next(iter(out.elsewhere), None)
                verdict = found.verdict if found is not None else "not_found"
                right[kind] = right.get(kind, 0) + (verdict == kind or (kind == "normalised" and verdict == "exact"))
        print(f"verify_quote, in process, {args.quotes} sentences x 4 kinds, as of {DAY}, whole knowledge base")
        print(f"  {'kind':<12}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}   expected verdict")
        for kind, samples in timings.items():
            p50, p95 = percentiles(samples, (50, 95))
            print(f"  {kind:<12}{p50:>9.2f}{p95:>9.2f}{max(samples):>9.2f}   {right[kind]}/{args.quotes}")
        print(f"  {'cold':<12}{percentiles(cold, (50,))[0]:>9.2f}{'':>9}{max(cold):>9.2f}   (first per revision)")
        every = [s for samples in timings.values() for s in samples]
        print(f"  all warm p50 {percentiles(every, (50,))[0]:.2f} ms (goal <= 15 ms)")

        snapshot = stores.registry.snapshot()
        revisions = [(s, r) for s, revs in snapshot.revisions.items() for r in revs if r.resolvable]
        cold_ms: list[float] = []
        warm_ms: list[float] = []
        for _ in range(args.pages):
            source, revision = rng.choice(revisions)
            page = rng.randrange(1, revision.page_count + 1)
            texts = [c.text for c in stores.vectors.chunks({"revision_ref": f"{source}:{revision.revision_id}"})
                     if c.metadata.get("page_number") == page]  # fmt: skip
            marked = next((s for t in texts for s in _SENTENCE.findall(t)), "")
            for bucket in (cold_ms, warm_ms):
                started = time.perf_counter()
                page_image(stores, source, page, revision_id=revision.revision_id, highlight=marked or None)
                bucket.append((time.perf_counter() - started) * 1000)
        print(f"get_page_image, in process, {args.pages} random pages at 150 dpi, a sentence highlighted")
        for name, samples in (("cold", cold_ms), ("warm", warm_ms)):
            p50, p95 = percentiles(samples, (50, 95))
            print(f"  {name:<6} p50 {p50:.1f} ms  p95 {p95:.1f} ms  max {max(samples):.1f} ms")
    finally:
        stop_embedded_redis(settings.paths.redis_dir)


if __name__ == "__main__":
    main()
