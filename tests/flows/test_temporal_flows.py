"""Spec 001 ITS-02 (temporal search accuracy) and ITS-06 (snapshot consistent with search), with every
revision put in place by the flows."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import yaml

from flows.ingest import ingest_policy_revision
from flows.seed import seed_policies
from lib.composition import Stores
from lib.policies.search import search_policy
from lib.policies.seeding import SeedAction
from lib.policies.temporal import REASON_BEFORE_FIRST, REASON_IN_GAP, REASON_NO_REVISIONS
from tests.flows.policy_pdfs import write_policy_pdf

QUESTION = "cycle lanes on busy roads"


def test_its02_a_search_as_of_march_2024_returns_only_the_2023_revision(
    flow_stores: Stores, make_policy: Callable[..., str], policy_pdf: Callable[..., Path]
) -> None:
    make_policy()
    for label, start in [
        ("July 2021", "2021-07-20"),
        ("September 2023", "2023-09-05"),
        ("December 2024", "2024-12-12"),
    ]:
        ingest_policy_revision(
            source="NPPF", version_label=label, effective_from=start, file=str(policy_pdf(f"{start}.pdf", label))
        )

    result = search_policy(flow_stores.policies, QUESTION, effective_date="2024-03-15", n_results=10)

    assert result.results, "the 2023 revision was in force and has chunks"
    assert {hit.revision_id for hit in result.results} == {"rev_NPPF_2023_09"}
    assert all("September 2023" in hit.text for hit in result.results if hit.section_ref.startswith("Para"))
    everything = search_policy(flow_stores.policies, QUESTION, n_results=10)
    assert {hit.revision_id for hit in everything.results} == {
        "rev_NPPF_2021_07",
        "rev_NPPF_2023_09",
        "rev_NPPF_2024_12",
    }


SNAPSHOT_POLICIES = {
    "NPPF": [("2021-07-20", None), ("2023-09-05", None), ("2024-12-12", None)],
    "LTN_1_20": [("2020-07-27", None)],
    "LOCAL_PLAN": [("2015-07-20", "2023-12-31"), ("2024-06-01", None)],
    "LCWIP": [("2025-01-01", None)],
    "EMPTY": [],
}


def test_its06_the_snapshot_for_a_date_agrees_with_what_a_search_for_that_date_returns(
    flow_stores: Stores, inbox: Path
) -> None:
    config = {"policies": []}
    for source, revisions in SNAPSHOT_POLICIES.items():
        entries = []
        for start, end in revisions:
            file = f"{source}-{start}.pdf"
            write_policy_pdf(inbox / "seed" / file, edition=f"{source} {start}")
            entries.append(
                {"version_label": f"{source} {start}", "effective_from": start, "effective_to": end, "file": file}
            )
        config["policies"].append(
            {"source": source, "title": source.title(), "category": "local_plan", "revisions": entries}
        )
    seed_file = inbox / "seed" / "seed.yaml"
    seed_file.write_text(yaml.safe_dump(config))

    seeded = seed_policies(config=str(seed_file))
    assert seeded.counts() == {"created_policy": 5, "ingested": 7}

    day = "2024-03-15"
    snapshot = {res.source: res for res in flow_stores.policies.resolver.resolve_snapshot(day)}
    assert {s: (r.revision.revision_id if r.revision else r.reason) for s, r in snapshot.items()} == {
        "EMPTY": REASON_NO_REVISIONS,
        "LCWIP": REASON_BEFORE_FIRST,
        "LOCAL_PLAN": REASON_IN_GAP,
        "LTN_1_20": "rev_LTN_1_20_2020_07",
        "NPPF": "rev_NPPF_2023_09",
    }
    for source, resolution in snapshot.items():
        hits = search_policy(flow_stores.policies, QUESTION, sources=[source], effective_date=day, n_results=20).results
        expected = {resolution.revision.revision_id} if resolution.revision else set()
        assert {hit.revision_id for hit in hits} == expected, source
    assert all(step.action != SeedAction.FAILED for step in seeded.steps)
