"""The lexical leg on the real NPPF December 2024: references by number that dense search does not find.

Each case was read off the stored chunks (``nppf_service``, the seeded NPPF through the real pipeline):
- "paragraph 116": Para 116, page 33, whose chunk starts "116. Development should only be prevented or
  refused on highways grounds ..."; dense ranks chapter intros and footnotes first.
- "paragraph 143": Para 143, page 42 ("143. Green Belt serves five purposes"), and the glossary's "Grey
  belt", page 73, which cites "purposes (a), (b), or (d) in paragraph 143".
- "paragraphs 156-157": the chunks that cite that range (Para 155, page 45; footnote 30, page 18).
- "Part IIA": Para 196, page 57 ("... Part IIA of the Environmental Protection Act 1990").
- "footnote 7": footnote 7 itself, page 6 ("7 The policies referred to are those in this Framework ...").
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from lib.policies.models import SearchHit
from lib.policies.search import search_policy
from tests.mcp_service.conftest import Service
from tests.mcp_service.tools import call

IN_FORCE = "2025-06-01"
CASES: dict[str, Callable[[SearchHit], bool]] = {
    "paragraph 116": lambda h: h.section_ref == "Para 116" and h.text.startswith("116."),
    "paragraph 143": lambda h: h.section_ref == "Para 143" or "paragraph 143" in " ".join(h.text.split()),
    "paragraphs 156-157": lambda h: "156-157" in h.text,
    "Part IIA": lambda h: "Part IIA" in h.text,
    "footnote 7": lambda h: h.section_ref == "Footnote 7",
}


def top5(service: Service, query: str, mode: str) -> list[SearchHit]:
    result = search_policy(
        service.stores.policies, query, sources=["NPPF"], effective_date=IN_FORCE, n_results=5, mode=mode
    )
    assert {h.revision_id for h in result.results} <= {"rev_NPPF_2024_12"}
    return result.results


@pytest.mark.parametrize("query", CASES)
def test_lexical_search_finds_a_numbered_reference_that_dense_search_misses(nppf_service: Service, query: str) -> None:
    wanted = CASES[query]
    lexical = top5(nppf_service, query, "lexical")
    assert any(wanted(h) for h in lexical), [h.section_ref for h in lexical]
    assert all(h.lexical_score is not None and h.dense_score is None for h in lexical)
    assert [h.score for h in lexical] == sorted((h.score for h in lexical), reverse=True)
    assert all(0.0 < h.score <= 1.0 and h.relevance_score is None for h in lexical)
    dense = top5(nppf_service, query, "dense")
    assert not any(wanted(h) for h in dense), [h.section_ref for h in dense]


def test_a_paragraph_number_outranks_its_words_in_lexical_search(nppf_service: Service) -> None:
    """ "116" is rare, "paragraph" common: Para 116 is the first lexical hit."""
    assert top5(nppf_service, "paragraph 116", "lexical")[0].section_ref == "Para 116"


@pytest.mark.anyio
async def test_the_search_tools_take_a_mode_and_refuse_an_unknown_one_in_the_spec_envelope(
    nppf_service: Service,
) -> None:
    args = {"query": "paragraph 116", "effective_date": IN_FORCE, "n_results": 3}
    out = await call(nppf_service.url, "search_policy", {**args, "mode": "lexical"})
    top = out["results"][0]
    assert (top["section_ref"], top["dense_score"]) == ("Para 116", None) and top["lexical_score"] > 0
    hybrid = await call(nppf_service.url, "search_policy", args)
    assert all(0 < h["relevance_score"] <= 1 for h in hybrid["results"]) and hybrid["results_count"] == 3
    batch = await call(nppf_service.url, "search_policy_batch", {"queries": ["paragraph 116"], "mode": "dense"})
    assert all(h["lexical_score"] is None for h in batch["results"][0]["results"])
    for tool, arguments in (("search_policy", args), ("search_policy_batch", {"queries": ["paragraph 116"]})):
        refused = await call(nppf_service.url, tool, {**arguments, "mode": "bm25"})
        assert set(refused) == {"status", "error_type", "message"}
        assert (refused["status"], refused["error_type"]) == ("error", "invalid_argument")
