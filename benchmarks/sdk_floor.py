"""The MCP SDK alone: the least a ``tools/call`` can cost on this machine through the SDK's public API.

The SDK's own server (``MCPServer``, Streamable HTTP stateless with JSON responses, as the service runs it) under
uvicorn, with one tool named ``search_policy`` taking the same arguments and returning a fixed answer of about
the size of a real one (``--results`` hits of ``--chars`` characters). No auth, no envelope, no metrics, no
search: what is left is the transport, the JSON-RPC session, tool dispatch and argument validation, and the
result's serialisation. ``capacity.py``'s floor (``floor_service.py``: the real service around a precomputed
search) minus this is what our own layer adds.

    .venv/bin/python benchmarks/sdk_floor.py --port 3099 &
    .venv/bin/python benchmarks/capacity.py --url policy-kb=http://127.0.0.1:3099 --pid $! \\
        --tools search_policy --in-process 0

Figures: docs/performance.md › "Capacity (benchmarks/capacity.py)".
"""

from __future__ import annotations

import argparse
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer


def answer(results: int, chars: int) -> dict[str, Any]:
    """A fixed search answer shaped like ``search_policy``'s: ``results`` hits, each ``chars`` of text."""
    text = ("Development should be approved where it accords with the policies of the development plan. " * 40)[:chars]
    hit = {
        "chunk_id": "LOCALPLAN__rev_2024__Policy_SP1__12",
        "text": text,
        "relevance": 0.71,
        "relevance_score": 0.69,
        "dense_score": 0.69,
        "lexical_score": 0.55,
        "metadata": {"source": "LOCALPLAN", "revision_id": "rev_2024", "section_ref": "Policy SP1", "page_number": 42},
        "citation": {"source": "LOCALPLAN", "revision_id": "rev_2024", "section": "Policy SP1", "pages": [42, 43]},
    }
    return {"status": "success", "effective_date": "2025-06-01", "results": [hit] * results}


def create_app(results: int, chars: int) -> Any:
    server = MCPServer("sdk-floor", log_level="WARNING")  # the SDK logs each request at INFO otherwise
    fixed = answer(results, chars)

    @server.tool()
    def search_policy(
        query: str, effective_date: str | None = None, n_results: int = 10, mode: str = "hybrid"
    ) -> dict[str, Any]:
        """A fixed answer with the caller's question."""
        return {**fixed, "query": query}

    return server.streamable_http_app(stateless_http=True, json_response=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=3099)
    parser.add_argument("--results", type=int, default=10)
    parser.add_argument("--chars", type=int, default=1200)
    args = parser.parse_args()
    uvicorn.run(create_app(args.results, args.chars), host="127.0.0.1", port=args.port, log_level="warning")


if __name__ == "__main__":
    main()
