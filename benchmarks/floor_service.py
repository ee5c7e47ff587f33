"""A service whose search is one precomputed answer: the floor under the latency goals of the benchmarks.

Everything else is the real service (transport, auth, tool dispatch, output validation, serialization), so a
benchmark pointed at it measures what a search that costs nothing would give on this machine.

    .venv/bin/python benchmarks/floor_service.py policy-kb [--embed]     # then benchmarks/stack_load.py --urls ...
    .venv/bin/python benchmarks/floor_service.py governance [--embed]    # what benchmarks/governance.py --floor runs

``--embed`` embeds each question first (nothing else): the one step a search of a new question cannot skip.
The service's settings come from the environment, as ``policy-kb serve``'s do (``POLICY_KB_PORT``,
``GOVERNANCE_PORT``, the stores of a running stack, ...). The answer is the real one for a fixed question,
returned with each call's own question: same fields, same number of results, same size.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

POLICY_QUESTION = "What does the framework say about the presumption in favour of sustainable development?"
POLICY_DAY = "2025-06-01"
GOVERNANCE_QUESTION = "How are inline script dependencies declared?"


def floor_policy_search(embed: bool) -> None:
    from lib.policies import search as policy_search
    from lib.policies.stores import PolicyStores

    real = policy_search.search_policy
    answers: dict[int, policy_search.SearchResult] = {}

    def answer(
        stores: PolicyStores,
        query: str,
        *,
        sources: Sequence[str] | None = None,
        effective_date: str | date | None = None,
        n_results: int = 10,
        mode: str = "hybrid",
    ) -> policy_search.SearchResult:
        if embed:
            stores.embedder.embed_queries([query])
        if n_results not in answers:
            answers[n_results] = real(stores, POLICY_QUESTION, effective_date=POLICY_DAY, n_results=n_results)
        return answers[n_results].model_copy(update={"query": query})

    policy_search.search_policy = answer


def floor_governance_query(embed: bool) -> None:
    """Before the service's modules import ``logged_query``, so the MCP tool and ``GET /query`` both get this."""
    from lib.governance.stores import GovernanceStores
    from lib.integrations import query_log

    real = query_log.logged_query
    answers: dict[int, Any] = {}

    def answer(stores: GovernanceStores, question: str, **filters: Any) -> Any:
        top_k = int(filters.get("top_k", 5))
        if embed:
            stores.embedder.embed_queries([question])
        if top_k not in answers:
            answers[top_k] = real(stores, GOVERNANCE_QUESTION, **filters)
        return answers[top_k].model_copy(update={"question": question})

    query_log.logged_query = answer


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("server", choices=["policy-kb", "governance"])
    parser.add_argument("--embed", action="store_true", help="embed each question before answering")
    args = parser.parse_args()
    (floor_policy_search if args.server == "policy-kb" else floor_governance_query)(args.embed)
    from deployments.cli import main as cli

    sys.argv = ["policy-kb", "serve", "--servers", args.server]
    cli()


if __name__ == "__main__":
    main()
