"""Seed the bundled policies (``deployments/seed/seed.yaml``) into fresh stores and say where the time goes:
Prefect, extraction, embedding, storage.

Two seedings of the same file, each into stores of its own (embedded Redis, Chroma and object store in a
temp dir): through the ``seed_policies`` flow on Prefect's local API (what ``make demo`` does), and
through ``lib.policies.seeding`` alone. Stage seconds come from the pipeline's own timers; Prefect's overhead is
the flow's wall time minus the time spent inside the library, and its one-off start-up (import, local
API server) is measured separately with an empty flow run.

    .venv/bin/python benchmarks/seed.py [--config deployments/seed/seed.yaml]
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")

from lib.composition import Stores, open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.policies.seeding import SeedAction, SeedStep, seed_policies  # noqa: E402
from lib.stores.embedding_model import load_model  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402

DEFAULT_CONFIG = "deployments/seed/seed.yaml"
STAGES = {
    "register": "register (file → object store, revision → Redis)",
    "fetch": "fetch the original back from the object store",
    "extract": "extraction (PDF → text and layout)",
    "chunk": "sections and chunks",
    "embed": "embedding (all-MiniLM-L6-v2)",
    "store": "storage (Chroma upsert, registry, metadata sync)",
}
T = TypeVar("T")


def timed(call: Callable[[], T]) -> tuple[T, float]:
    started = time.perf_counter()
    result = call()
    return result, time.perf_counter() - started


@contextmanager
def fresh_stores() -> Iterator[Stores]:
    """Every store new and empty, under a temp dir; the embedded Redis is shut down afterwards."""
    with tempfile.TemporaryDirectory(prefix="bench-seed-") as folder:
        settings = load_settings(data_dir=Path(folder), redis_url=None, chroma_host=None, object_store_url=None)
        try:
            yield open_stores(settings)
        finally:
            stop_embedded_redis(settings.paths.redis_dir)


def stage_seconds(steps: Sequence[SeedStep]) -> dict[str, float]:
    totals = dict.fromkeys(STAGES, 0.0)
    for step in steps:
        for stage in STAGES:
            totals[stage] += step.seconds.get(stage, 0.0)
    return totals


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--config", default=DEFAULT_CONFIG, help="seed YAML (relative to the project root)")
    args = parser.parse_args()
    config_path = ROOT / args.config
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s %(message)s")

    _, model_load = timed(load_model)
    load_model().encode(["warm up"], show_progress_bar=False)

    with fresh_stores() as stores:
        lib_steps, lib_wall = timed(lambda: seed_policies(stores.policies, config_path))

    def import_prefect() -> tuple[Callable[..., object], Callable[..., object], Callable[..., object]]:
        from prefect import flow

        from flows.common import bound_stores
        from flows.seed import seed_policies as seed_flow

        return flow, bound_stores, seed_flow

    (flow, bound_stores, seed_flow), prefect_import = timed(import_prefect)

    @flow(name="benchmark-noop")
    def noop() -> None:
        return None

    _, prefect_start = timed(noop)
    with fresh_stores() as stores, bound_stores(stores):
        result, flow_wall = timed(lambda: seed_flow(config=args.config))
        flow_steps = result.steps
        ingested = [s for s in flow_steps if s.action == SeedAction.INGESTED]
        pages = sum(stores.policies.registry.get_revision(s.source, s.revision_id or "").page_count for s in ingested)
    chunks = sum(s.chunks for s in ingested)
    flow_stages, lib_stages = stage_seconds(flow_steps), stage_seconds(lib_steps)
    flow_inside = sum(flow_stages.values())
    prefect_overhead = flow_wall - flow_inside

    print(
        f"\nSeeding {args.config}: {len(ingested)} revisions, {pages} pages, {chunks} chunks, into fresh stores "
        f"({os.cpu_count()} cores)\n"
    )
    print(f"{'stage':<58}{'flow (s)':>10}{'share':>8}{'lib only (s)':>14}")
    print("-" * 90)
    for stage, label in STAGES.items():
        share = flow_stages[stage] / flow_wall
        print(f"{label:<58}{flow_stages[stage]:>10.2f}{share:>8.1%}{lib_stages[stage]:>14.2f}")
    print(
        f"{'Prefect run overhead (flow + task runs, artifacts, logs)':<58}{prefect_overhead:>10.2f}"
        f"{prefect_overhead / flow_wall:>8.1%}{lib_wall - sum(lib_stages.values()):>14.2f}"
    )
    print("-" * 90)
    print(f"{'seeding wall time':<58}{flow_wall:>10.2f}{1:>8.0%}{lib_wall:>14.2f}")
    print()
    print("one-off, per process (not in the wall time above):")
    print(f"  embedding model load                  {model_load:6.2f} s")
    print(f"  Prefect import                        {prefect_import:6.2f} s")
    print(f"  Prefect local API start + first run   {prefect_start:6.2f} s")
    print()
    embed = flow_stages["embed"]
    extraction = flow_stages["extract"] + flow_stages["chunk"]
    storage = flow_stages["register"] + flow_stages["fetch"] + flow_stages["store"]
    print("ratios:")
    print(f"  embedding / seeding wall              {embed / flow_wall:6.1%}")
    print(f"  extraction+chunking / seeding wall    {extraction / flow_wall:6.1%}")
    print(f"  storage / seeding wall                {storage / flow_wall:6.1%}")
    print(f"  Prefect overhead / seeding wall       {prefect_overhead / flow_wall:6.1%}")
    print(f"  flow wall / lib-only wall             {flow_wall / lib_wall:6.2f}")
    print(f"  embedding throughput                  {chunks / embed:6.1f} chunks/s")


if __name__ == "__main__":
    main()
