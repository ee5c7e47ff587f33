"""Where a server's CPU goes, from py-spy's raw profile: the split the capacity issue asks for.

    .venv/bin/python benchmarks/capacity.py --tools search_policy --rates 100 --py-spy /tmp/prof
    .venv/bin/python benchmarks/profile_split.py /tmp/prof-search_policy-100.txt [--cpu-ms 5.4]

Each sample (a stack, py-spy ``-f raw``) is given to the innermost frame whose file one of ``PARTS`` names:
numpy called from ``lib/retrieval`` counts as search, pydantic called from the SDK as pydantic. Printed: each
part's share of the samples and, with ``--cpu-ms`` (the server's CPU per call from ``capacity.py``), its
milliseconds per call; then the three the issue sets goals for: the search, embedding the question, and the
MCP/HTTP layer (everything else the request costs).
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from pathlib import Path

PARTS: tuple[tuple[str, str, str], ...] = (
    ("embedding", "lib/stores/embeddings", "embedding"),
    ("embedding", "onnxruntime/", "embedding"),
    ("embedding", "tokenizers/", "embedding"),
    ("search: registry (Redis)", "redis/", "search"),
    ("search: registry (Redis)", "lib/stores/redis", "search"),
    ("search: retrieval", "lib/retrieval/", "search"),
    ("search: policies", "lib/policies/", "search"),
    ("search: other lib", "lib/", "search"),
    ("our service layer (auth, envelope, metrics)", "mcp_service/", "MCP/HTTP"),
    ("pydantic", "pydantic", "MCP/HTTP"),
    ("MCP SDK", "mcp/", "MCP/HTTP"),
    ("JSON", "stdlib/json/", "MCP/HTTP"),
    ("Starlette", "starlette/", "MCP/HTTP"),
    ("uvicorn and h11/httptools", "uvicorn/", "MCP/HTTP"),
    ("uvicorn and h11/httptools", "h11/", "MCP/HTTP"),
    ("uvicorn and h11/httptools", "httptools/", "MCP/HTTP"),
    ("prometheus-client", "prometheus_client/", "MCP/HTTP"),
    ("logging", "stdlib/logging/", "MCP/HTTP"),
    ("anyio", "anyio/", "MCP/HTTP"),
    ("asyncio event loop", "stdlib/asyncio/", "MCP/HTTP"),
)
"""(part, how the frame's module path starts, the goal it counts towards); first match wins per frame. Module
paths: after ``site-packages/`` for a dependency, ``stdlib/`` and the path after ``pythonX.Y/`` for the standard
library, from ``lib/``, ``mcp_service/`` or ``flows/`` for this project."""

_OURS = re.compile(r"/(lib|mcp_service|flows)/")


def module_path(file: str) -> str:
    """``file`` as ``PARTS`` matches it (see there)."""
    if "site-packages/" in file:
        return file.rsplit("site-packages/", 1)[1]
    if (stdlib := re.search(r"/python3\.\d+/", file)) is not None:
        return "stdlib/" + file[stdlib.end() :]
    return file[ours.start() + 1 :] if (ours := _OURS.search(file)) is not None else file


_FRAME = re.compile(r"\((?P<file>[^()]*?):\d+\)$")


def part_of(stack: str) -> tuple[str, str]:
    """The part and the goal a sample's stack counts towards (innermost matching frame)."""
    for frame in reversed(stack.split(";")):
        found = _FRAME.search(frame.strip())
        if found is None:
            continue
        module = module_path(found["file"])
        for part, start, goal in PARTS:
            if module.startswith(start):
                return part, goal
    return "other", "MCP/HTTP"


def split(profile: Path) -> tuple[Counter[str], Counter[str], int]:
    """Samples per part and per goal, and the total, from one raw py-spy file."""
    parts: Counter[str] = Counter()
    goals: Counter[str] = Counter()
    for line in profile.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not stack or not count.isdigit():
            continue
        part, goal = part_of(stack)
        parts[part] += int(count)
        goals[goal] += int(count)
    return parts, goals, sum(parts.values())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("profile", type=Path)
    parser.add_argument("--cpu-ms", type=float, help="the server's CPU ms per call, to turn shares into ms")
    args = parser.parse_args()
    parts, goals, total = split(args.profile)
    if not total:
        raise SystemExit(f"no samples in {args.profile}")

    def row(name: str, samples: int) -> str:
        ms = f"{samples / total * args.cpu_ms:8.2f} ms" if args.cpu_ms else ""
        return f"  {name:<46}{samples / total:7.1%}{ms}"

    print(f"{args.profile.name}: {total} samples")
    for name, samples in parts.most_common():
        print(row(name, samples))
    print("  --")
    for name in ("search", "embedding", "MCP/HTTP"):
        print(row(name, goals[name]))


if __name__ == "__main__":
    main()
