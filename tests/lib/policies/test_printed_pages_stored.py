"""The printed page travels from the NPPF's margins to every citation read back from the stores: a search hit, a
section, the table of contents, a page image and a quote check; a chunk stored before the field existed reads as
null."""

from __future__ import annotations

from pathlib import Path

from lib.composition import Stores
from lib.policies.chunks import revision_ref
from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.policies.page_images import printed_page_of
from lib.policies.quotes import verify_quote
from lib.policies.search import search_policy
from lib.policies.sections import get_policy_section, list_policy_sections

NPPF = Path(__file__).resolve().parents[3] / "deployments" / "seed" / "NPPF_December_2024.pdf"
REVISION = "rev_NPPF_2024_12"


def test_the_nppf_printed_page_reaches_hits_sections_contents_and_pages(stores: Stores) -> None:
    policies = stores.policies
    policies.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    register_revision(
        policies, "NPPF", RevisionCreate(version_label="December 2024", effective_from="2024-12-12"), NPPF.read_bytes()
    )
    ingest_revision(policies, "NPPF", REVISION)

    hits = search_policy(
        policies,
        "Para 116 development should only be prevented or refused on highways grounds",
        sources=["NPPF"],
        effective_date="2025-01-01",
        mode="lexical",
    ).results
    hit = next(h for h in hits if h.section_ref == "Para 116")
    assert (hit.page_number, hit.printed_page) == (33, "33")
    section = get_policy_section(policies, "NPPF", "Para 116", revision_id=REVISION)
    assert (section.page_numbers[0], section.printed_page) == (33, "33")
    entries = {e.section_ref: e for e in list_policy_sections(policies, "NPPF", revision_id=REVISION).sections}
    assert entries["Para 116"].printed_page == "33"
    assert [e.printed_page for e in entries.values() if e.page_numbers == [1]] in ([], [None])
    revision = policies.registry.get_revision("NPPF", REVISION)
    assert printed_page_of(policies, revision, 33) == "33"
    assert printed_page_of(policies, revision, 1) is None
    quoted = verify_quote(
        policies, section.text.split(" ", 1)[1].split(". ")[0], sources=["NPPF"], effective_date="2025-01-01"
    ).match
    assert quoted is not None and (quoted.section_ref, quoted.printed_page) == ("Para 116", "33")
    assert quoted.citation.endswith("Para 116, p. 33")

    stored = policies.vectors.section_chunks("NPPF", REVISION, "Para 116")
    policies.vectors.collection.update(
        ids=[c.id for c in stored], metadatas=[{"printed_page": 0, "printed_pages": ""} for _ in stored]
    )
    old = get_policy_section(policies, "NPPF", "Para 116", revision_id=REVISION)
    assert old.printed_page is None
    assert all(m.get("revision_ref") == revision_ref("NPPF", REVISION) for m in (c.metadata for c in stored))
