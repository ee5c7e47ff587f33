"""The store and the server the per-call benchmarks share: the NPPF December 2024 alone, seeded by the seeding
code the tests and deployments use, and ``python -m mcp_service`` over it; one SDK client session per server.

The NPPF is seeded from a copy of ``deployments/seed``'s PDF and a one-revision seed file in the data folder (the
seeder reads files inside its seed folder only), so the collection holds exactly that revision's chunks.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import time
from collections.abc import AsyncIterator, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from benchmarks.harness import Service, health_ok, start_service  # noqa: E402

NPPF_PDF = ROOT / "deployments" / "seed" / "NPPF_December_2024.pdf"
SEED_YAML = """policies:
  - source: NPPF
    title: National Planning Policy Framework
    category: national_policy
    revisions:
      - revision_id: rev_NPPF_2024_12
        version_label: December 2024
        effective_from: "2024-12-12"
        file: NPPF_December_2024.pdf
"""
API_KEY = "benchmark-key"


@dataclass
class NppfStore:
    data_dir: Path
    redis_url: str
    stores: Any
    """``PolicyStores`` opened in this process."""
    texts: list[str]
    """The chunks' texts, as Chroma holds them."""
    ids: list[str]


def prepare(data_dir: Path) -> NppfStore:
    """Seed the NPPF December 2024 into ``data_dir`` (nothing is done when it is there) and read its chunks."""
    from lib.composition import open_stores
    from lib.config import load_settings
    from lib.policies.seeding import seed_policies
    from lib.stores.redis_server import embedded_url

    seed_dir = data_dir / "seed"
    seed_dir.mkdir(parents=True, exist_ok=True)
    if not (seed_dir / NPPF_PDF.name).exists():
        shutil.copyfile(NPPF_PDF, seed_dir / NPPF_PDF.name)
    (seed_dir / "seed.yaml").write_text(SEED_YAML)
    settings = load_settings(data_dir=data_dir, redis_url=None)
    stores = open_stores(settings).policies
    started = time.perf_counter()
    seed_policies(stores, seed_dir / "seed.yaml")
    got = stores.vectors.collection.get(where={"source": "NPPF"}, include=["documents"])
    texts = [t or "" for t in got["documents"] or []]
    print(f"NPPF December 2024: {len(texts)} chunks in {data_dir} ({time.perf_counter() - started:.1f} s)")
    return NppfStore(data_dir, embedded_url(settings.paths.redis_dir), stores, texts, list(got["ids"]))


def stop(store: NppfStore) -> None:
    from lib.stores.redis_server import stop_embedded_redis

    stop_embedded_redis(store.stores.settings.paths.redis_dir)


def start_policy_kb(store: NppfStore, port: int, extra: Mapping[str, str], log: Path | None = None) -> Service:
    """``python -m mcp_service`` (one worker) over the store, on ``port``, with ``extra`` settings; ready once
    ``/health`` answers and its warm-up (the query encoder, the index) has had time."""
    env = {
        "POLICY_KB_DATA_DIR": str(store.data_dir),
        "REDIS_URL": store.redis_url,
        "POLICY_KB_PORT": str(port),
        "POLICY_KB_WORKERS": "1",
        **extra,
    }
    service = start_service([sys.executable, "-m", "mcp_service"], env, health_ok(f"http://127.0.0.1:{port}"), 300, log)
    return service


@contextlib.asynccontextmanager
async def http_session(url: str, key: str | None) -> AsyncIterator[Any]:
    """An initialised SDK ``ClientSession`` over Streamable HTTP, tools listed (the client validates results
    against the output schema it lists)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    from tests.mcp_http import mcp_http_client

    headers = {"Authorization": f"Bearer {key}"} if key else None
    async with (
        mcp_http_client(headers=headers) as http,
        streamable_http_client(url, http_client=http) as (read, write),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        await session.list_tools()
        yield session


def distinct_questions(texts: list[str], seed: int) -> Iterator[str]:
    """Questions never asked before in a run: ``capacity.py``'s windows of a chunk's words in a template, and
    the NPPF questions of ``nppf_questions.json`` with a varying tail."""
    import json
    import random

    from benchmarks.capacity import new_questions

    asked = [q["question"] for q in json.loads((ROOT / "benchmarks" / "nppf_questions.json").read_text())]
    windows = new_questions(texts, seed)
    rng = random.Random(seed)
    n = 0
    while True:
        n += 1
        if n % 4 == 0:
            yield f"{rng.choice(asked)} ({next(windows).split(' ', 3)[-1]})"
        else:
            yield next(windows)
