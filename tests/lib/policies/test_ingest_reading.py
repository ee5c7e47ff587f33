"""Ingestion says how well a local plan was read (issue 22 part 5), on a generated plan
(``tests/lib/text/local_plan_pdfs.py``): its contents page lists a policy the plan never prints."""

from __future__ import annotations

from lib.composition import Stores
from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from tests.lib.text.local_plan_pdfs import local_plan_pdf


def test_the_outcome_and_the_revision_report_what_was_read_and_name_listed_policies_not_found(
    stores: Stores,
) -> None:
    policies = stores.policies
    policies.registry.create_policy(PolicyCreate(source="EXLP", title="Example Local Plan", category="local_plan"))
    register_revision(
        policies, "EXLP", RevisionCreate(version_label="2024", effective_from="2024-01-01"), local_plan_pdf()
    )
    outcome = ingest_revision(policies, "EXLP", "rev_EXLP_2024_01")
    assert outcome.reading is not None
    assert (outcome.reading.policies, outcome.reading.paragraphs) == (3, 5)
    assert outcome.reading.missing_policies == ["Policy LP9"]
    reading = policies.registry.get_revision("EXLP", "rev_EXLP_2024_01").reading
    assert reading.startswith("3 policies, 5 paragraphs") and "missing: Policy LP9" in reading


def test_chunks_carry_the_section_kind_printed_page_and_supported_policy(stores: Stores) -> None:
    policies = stores.policies
    policies.registry.create_policy(PolicyCreate(source="EXLP", title="Example Local Plan", category="local_plan"))
    register_revision(
        policies, "EXLP", RevisionCreate(version_label="2024", effective_from="2024-01-01"), local_plan_pdf()
    )
    ingest_revision(policies, "EXLP", "rev_EXLP_2024_01")
    policy = policies.vectors.section_chunks("EXLP", "rev_EXLP_2024_01", "Policy LP1")
    assert {(c.metadata["section_kind"], c.metadata["section_title"]) for c in policy} == {("policy", "Housing")}
    assert {(c.metadata["page_number"], c.metadata["printed_page"]) for c in policy} == {(3, "2"), (4, "3")}
    assert {c.metadata["last_page"] for c in policy} == {4}
    justification = policies.vectors.section_chunks("EXLP", "rev_EXLP_2024_01", "Para 3.2")
    assert [c.metadata["supports"] for c in justification] == ["Policy LP1"]
