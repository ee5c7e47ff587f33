"""What the MCP servers cost an agent in context: each server's ``tools/list`` (paid once per session) and a
``search_policy`` result (paid per hit), in characters and tokens (characters / 4, the usual estimate).

Every server is built as the service builds it (``new_mcp_server`` + its ``register_tools``) and asked through
the SDK's in-process client, so the figures are the wire JSON a client receives. The search figures come from the
NPPF questions of ``benchmarks/nppf_questions.json`` over the bundled NPPF (``deployments/seed/seed.yaml``),
seeded once into ``--data-dir`` (kept, so a second run, say against another checkout, reuses it).

    .venv/bin/python benchmarks/agent_tokens.py --data-dir /tmp/agent-tokens            # this checkout
    .venv/bin/python benchmarks/agent_tokens.py --data-dir /tmp/agent-tokens --root /tmp/before   # another one

Figures: docs/agents.md › "Tools and sizes" and docs/decisions/0046-lean-tool-results.md.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, required=True, help="stores' data dir (seeded on first use)")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout whose servers are measured")
    parser.add_argument("--questions", type=int, default=20, help="how many NPPF questions to search")
    parser.add_argument("--n-results", type=int, default=5)
    return parser.parse_args()


ARGS = parse_args()
sys.path.insert(0, str(ARGS.root.resolve()))
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

from mcp import Client  # noqa: E402

from lib.composition import Stores, open_stores  # noqa: E402
from lib.config import load_settings  # noqa: E402
from lib.notes.uploads import upload_staging  # noqa: E402
from lib.policies.seeding import seed_policies  # noqa: E402
from lib.stores.redis_server import stop_embedded_redis  # noqa: E402
from mcp_service.__main__ import SERVERS  # noqa: E402
from mcp_service.app import new_mcp_server  # noqa: E402
from mcp_service.kb_engine_client import KbEngineClient  # noqa: E402
from mcp_service.tools.kb.work import KbStores  # noqa: E402


def wire(model: Any) -> str:
    return json.dumps(model.model_dump(by_alias=True, mode="json", exclude_none=True), separators=(",", ":"))


def tokens(chars: int) -> int:
    return round(chars / 4)


def over(name: str, stores: Stores) -> Any:
    if name == "policy-kb":
        return stores.policies
    if name == "document-store":
        return stores.documents
    if name == "governance":
        return stores.governance
    return KbStores(stores.settings, KbEngineClient.from_settings(stores.settings), upload_staging(stores.notes))


async def measure(stores: Stores) -> None:
    print(f"\ntools/list per server ({ARGS.root}):\n")
    print(f"  {'server':<16}{'tools':>6}{'chars':>9}{'tokens':>8}")
    policy_server = None
    for name, module in SERVERS.items():
        server = new_mcp_server(name, "")
        module.load().register_tools(server, over(name, stores))
        async with Client(server, mode="legacy") as client:
            listed = await client.list_tools()
        size = len(wire(listed))
        print(f"  {name:<16}{len(listed.tools):>6}{size:>9}{tokens(size):>8}")
        if name == "policy-kb":
            policy_server = server
    assert policy_server is not None
    questions = json.loads((ROOT / "benchmarks" / "nppf_questions.json").read_text())[: ARGS.questions]
    text = structured = total = hits = 0
    async with Client(policy_server, mode="legacy") as client:
        for question in questions:
            result = await client.call_tool(
                "search_policy", {"query": question["question"], "n_results": ARGS.n_results}
            )
            text += sum(len(block.text) for block in result.content if block.type == "text")
            structured += len(json.dumps(result.structured_content, separators=(",", ":")))
            total += len(wire(result))
            hits += len((result.structured_content or {}).get("results", []))
    print(f"\nsearch_policy, {len(questions)} questions x n_results={ARGS.n_results}: {hits} hits\n")
    print(f"  {'per hit':<28}{'chars':>9}{'tokens':>8}")
    for label, chars in (("text block", text), ("structured content", structured), ("whole result (wire)", total)):
        print(f"  {label:<28}{chars / hits:>9.0f}{tokens(round(chars / hits)):>8}")


def main() -> None:
    data_dir = ARGS.data_dir.resolve()
    fresh = not (data_dir / "seeded").exists()
    settings = load_settings(data_dir=data_dir, redis_url=None, chroma_host=None, object_store_url=None)
    try:
        stores = open_stores(settings)
        if fresh:
            seed_policies(stores.policies, ROOT / "deployments" / "seed" / "seed.yaml")
            (data_dir / "seeded").touch()
        asyncio.run(measure(stores))
    finally:
        stop_embedded_redis(settings.paths.redis_dir)


if __name__ == "__main__":
    main()
