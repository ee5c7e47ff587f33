"""What checking a citation costs and how right it is: ``verify_quote`` and ``get_page_image`` in process, over both
NPPF revisions (the seed: December 2024 and the December 2025 draft) and, with ``--data``, four local plans.

    .venv/bin/python benchmarks/citations.py [--data ../shared/data/local_plans] [--data-dir .bench/citations] \\
        [--quotes 200] [--pages 30]

The plans are ingested through the product's own path (as ``benchmarks/sections.py --questions`` does) into a
store under ``--data-dir`` (kept: a rerun only measures). Quotes are sentences drawn at random from the stored
chunks of the revisions in force on the day asked (the NPPF December 2024 and the plans), each asked once in
each kind that applies: as stored (``exact``); reflowed onto lines with straight quotes made curly and an
omission marked with an ellipsis (``normalised``); a typo in its longest word (``close``); a modal verb changed,
else a negation added, else a number changed (``altered``); its words shuffled (``not_found``); and sentences
of the December 2025 draft as they stand (``not_in_force``). Printed per kind: how many answers had each
verdict, and p50/p95/max ms (the first question per revision, which reads the revision's sections, counted
apart as cold). Page images: random pages of every revision at 150 dpi with a sentence of the page
highlighted, cold (rendered and stored) then warm (read back from the object store); goals warm <= 20 ms,
cold <= 300 ms, verify_quote p50 <= 15 ms warm.
"""

from __future__ import annotations

import argparse
import os
import random
import re
import sys
import time
import warnings
from collections import Counter
from datetime import date
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
from lib.policies.temporal import resolve_revision  # noqa: E402
from lib.quotes.normalise import normalise  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402

PLANS = (
    "babergh_midsuffolk_joint_local_plan_part1_2023.pdf",
    "buckinghamshire_draft_local_plan_partB_DM_policies_2025.pdf",
    "fenland_local_plan_adopted_2014.pdf",
    "watford_local_plan_inspectors_report_main_mods_appendix.pdf",
)
SEED = ROOT / "deployments" / "seed" / "seed.yaml"
DAY = "2025-06-01"
KINDS = ("exact", "normalised", "close", "altered", "not_found", "not_in_force")
_SENTENCE = re.compile(r"[A-Z][^.\n]{60,240}\.")


def sentences(stores: PolicyStores) -> list[tuple[str, str]]:
    """(revision_ref, sentence) for every sentence of every stored chunk."""
    out: list[tuple[str, str]] = []
    for chunk in stores.vectors.chunks({"revision_ref": {"$ne": ""}}):
        out.extend((str(chunk.metadata["revision_ref"]), s) for s in _SENTENCE.findall(chunk.text))
    return out


_MODALS = {"should": "must", "must": "should", "will": "may", "may": "will", "can": "should"}


def altered(sentence: str) -> str | None:
    """A modal verb changed, else ``not`` added after the first verb ``is``/``are``, else a number changed."""
    found = re.search(r"\b(should|must|will|may|can)\b", sentence)
    if found:
        return sentence[: found.start()] + _MODALS[found.group(1)] + sentence[found.end() :]
    found = re.search(r"\b(is|are)\b ", sentence)
    if found:
        return sentence[: found.end()] + "not " + sentence[found.end() :]
    found = re.search(r"(?<!\^)\b\d+\b", sentence)  # not a footnote marker's number, which is not quoted
    return sentence[: found.start()] + str(int(found.group(0)) + 7) + sentence[found.end() :] if found else None


def variants(sentence: str, rng: random.Random) -> dict[str, str]:
    """The kinds of quote made of ``sentence`` (those that apply), keyed by the verdict each should get."""
    words = sentence.split()
    out = {"exact": sentence}
    lines = [" ".join(words[j : j + 7]) for j in range(0, len(words), 7)]
    reflowed = "\n".join(lines).replace("'", "\u2019")
    if len(words) >= 12:
        reflowed = " ".join([*reflowed.split(" ")[:4], "\u2026", *reflowed.split(" ")[-5:]])
    out["normalised"] = reflowed
    longest = max(re.findall(r"\b[a-z]{7,}\b", sentence) or [""], key=len)
    if longest and longest[2] != longest[3]:
        out["close"] = sentence.replace(longest, longest[:2] + longest[3] + longest[2] + longest[4:], 1)
    if (changed := altered(sentence)) is not None:
        out["altered"] = changed
    shuffled = list(words)
    rng.shuffle(shuffled)
    out["not_found"] = " ".join(shuffled)
    return out


def drawn_quotes(stores: PolicyStores, count: int, rng: random.Random) -> list[tuple[str, str, str]]:
    """(revision_ref, expected verdict, quote): ``count`` sentences of the revisions in force on ``DAY`` in every
    kind that applies, and up to ``count // 4`` sentences of revisions not in force, as they stand."""
    snapshot = stores.registry.snapshot()
    day = date.fromisoformat(DAY)
    in_force = {
        f"{source}:{revision.revision_id}"
        for source, revisions in snapshot.revisions.items()
        if (revision := resolve_revision(source, revisions, day).revision) is not None
    }
    every = sentences(stores)
    current = [pair for pair in every if pair[0] in in_force]
    held = normalise("\n".join(s for ref, s in every if ref in in_force)).text
    other = [pair for pair in every if pair[0] not in in_force and normalise(pair[1]).text not in held]
    quotes = [(ref, kind, quote) for ref, s in rng.sample(current, count) for kind, quote in variants(s, rng).items()]
    quotes += [(ref, "not_in_force", s) for ref, s in rng.sample(other, min(len(other), count // 4))]
    rng.shuffle(quotes)
    return quotes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, help="the folder holding the local plans (default: the NPPF alone)")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "citations")
    parser.add_argument("--quotes", type=int, default=200, help="sentences drawn (each asked in every kind)")
    parser.add_argument("--pages", type=int, default=30)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--show-wrong", action="store_true", help="print each quote given another verdict")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    settings = load_settings(data_dir=args.data_dir, redis_url=None)
    stores = open_stores(settings).policies
    try:
        seed_policies(stores, SEED)
        for name in PLANS if args.data is not None else ():
            ingest_plan(stores, args.data / name)
        quotes = drawn_quotes(stores, args.quotes, rng)
        timings: dict[str, list[float]] = {}
        cold: list[float] = []
        verdicts: dict[str, Counter[str]] = {}
        seen: set[str] = set()
        for ref, kind, quote in quotes:
            started = time.perf_counter()
            out = verify_quote(stores, quote, effective_date=DAY)
            elapsed = (time.perf_counter() - started) * 1000
            (cold if ref not in seen else timings.setdefault(kind, [])).append(elapsed)
            seen.add(ref)
            verdicts.setdefault(kind, Counter())[out.verdict] += 1
            if args.show_wrong and out.verdict != kind:
                print(f"  {kind} -> {out.verdict}: {quote!r}\n    {out.message[:300]}")
        print(f"verify_quote, in process, {args.quotes} sentences, as of {DAY}, whole knowledge base")
        print(f"  {'kind':<13}{'right':>11}{'p50 ms':>9}{'p95 ms':>9}{'max ms':>9}   verdicts")
        for kind in KINDS:
            got = verdicts.get(kind, Counter())
            samples = timings.get(kind, [0.0])
            p50, p95 = percentiles(samples, (50, 95))
            right = f"{got[kind]}/{sum(got.values())}"
            answers = ", ".join(f"{v} {n}" for v, n in got.most_common())
            print(f"  {kind:<13}{right:>11}{p50:>9.2f}{p95:>9.2f}{max(samples):>9.2f}   {answers}")
        print(
            f"  {'cold':<13}{'':>11}{percentiles(cold, (50,))[0]:>9.2f}{'':>9}{max(cold):>9.2f}   (first per revision)"
        )
        every = [s for samples in timings.values() for s in samples]
        p50, p95 = percentiles(every, (50, 95))
        print(f"  all warm: p50 {p50:.2f} ms, p95 {p95:.2f} ms, mean {sum(every) / len(every):.2f} ms (goal <= 15 ms)")

        snapshot = stores.registry.snapshot()
        revisions = [(s, r) for s, revs in snapshot.revisions.items() for r in revs if r.resolvable]
        cold_ms: list[float] = []
        warm_ms: list[float] = []
        for _ in range(args.pages):
            source, revision = rng.choice(revisions)
            page = rng.randrange(1, revision.page_count + 1)
            texts = [
                c.text
                for c in stores.vectors.chunks({"revision_ref": f"{source}:{revision.revision_id}"})
                if c.metadata.get("page_number") == page
            ]
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
