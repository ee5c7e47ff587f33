"""Section reads over real Redis, Chroma and embeddings (issue 22): what people type finds the plan's own
ref or says which refs are nearest; the table of contents; cross-references stored with the chunks and the
sections citing a section, as of a date."""

from __future__ import annotations

import pymupdf
import pytest

from lib.composition import Stores
from lib.errors import InvalidArgumentError, PolicyNotFoundError, SectionNotFoundError
from lib.models import Section
from lib.policies.ingest import ingest_revision, store_chunks
from lib.policies.lifecycle import create_revision, register_revision, remove_revision_chunks
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.policies.sections import find_citing_sections, get_policy_section, list_policy_sections
from lib.policies.stores import PolicyStores
from lib.policies.xrefs import Citation
from lib.text.chunking import chunk_sections
from tests.lib.text.local_plan_pdfs import Writer

OLD, NEW = "rev_TEWKESBURY_2017_06", "rev_TEWKESBURY_2022_06"


@pytest.fixture
def policies(stores: Stores) -> PolicyStores:
    return stores.policies


def store(stores: PolicyStores, source: str, rid: str, frm: str, sections: list[Section]) -> None:
    create_revision(
        stores.registry,
        stores.vectors,
        source,
        RevisionCreate(revision_id=rid, version_label=rid[-7:], effective_from=frm),
    )
    chunks = chunk_sections(sections)
    store_chunks(
        stores.registry,
        stores.vectors,
        source,
        rid,
        chunks,
        stores.embedder.embed_batch([c.text for c in chunks]),
        page_count=60,
        file_size_bytes=10,
        extraction_method="text_layer",
    )


def plan(edition: str, cite_nppf: bool) -> list[Section]:
    nppf = " It follows paragraph 11 of the NPPF." if cite_nppf else ""
    return [
        Section(
            section_ref="Chapter 3",
            chapter="3 Housing",
            title="Housing",
            text="3 Housing",
            page_number=38,
            printed_page="36",
        ),
        Section(
            section_ref="Policy RES8",
            chapter="3 Housing",
            title="Rural exception sites",
            kind="policy",
            text="Policy RES8 Rural exception sites\nSmall sites adjoining villages may be permitted.",
            page_number=39,
            printed_page="37",
        ),
        Section(
            section_ref="Policy RES9",
            chapter="3 Housing",
            title="Replacement dwellings",
            kind="policy",
            text=f"Policy RES9 Replacement dwellings\nA replacement dwelling ({edition}) will be permitted where "
            "the original is not a listed building and Policy RES8 does not apply.",
            page_number=40,
            printed_page="38",
        ),
        Section(
            section_ref="Para 3.59",
            chapter="3 Housing",
            kind="paragraph",
            supports="Policy RES9",
            text="3.59 The plot of a replacement dwelling is that of the original.",
            page_number=40,
            printed_page="38",
        ),
        Section(
            section_ref="Para 3.60",
            chapter="3 Housing",
            kind="paragraph",
            supports="Policy RES9",
            text=f"3.60 Replacement dwellings should respect the plot, as paragraph 3.59 explains.{nppf} "
            "See also Policy SD11 of the Joint Core Strategy; paragraph 3.12 of the plan is not in this extract.",
            page_number=40,
            printed_page="38",
        ),
    ]


@pytest.fixture
def tewkesbury(policies: PolicyStores) -> PolicyStores:
    for source, title in [
        ("NPPF", "National Planning Policy Framework"),
        ("TEWKESBURY", "Tewkesbury Borough Plan"),
        ("GLOUCESTER_JCS", "Joint Core Strategy"),
    ]:
        policies.registry.create_policy(PolicyCreate(source=source, title=title, category="local_plan"))
    store(policies, "TEWKESBURY", OLD, "2017-06-01", plan("2017", cite_nppf=True))
    store(policies, "TEWKESBURY", NEW, "2022-06-08", plan("2022", cite_nppf=False))
    return policies


@pytest.mark.parametrize("typed", ["RES9", "Policy RES9", "policy res9", "Policy RES9 Replacement dwellings"])
def test_a_policy_is_found_however_it_is_typed_and_answers_with_the_plans_ref(
    tewkesbury: PolicyStores, typed: str
) -> None:
    section = get_policy_section(tewkesbury, "TEWKESBURY", typed, effective_date="2023-01-01")
    assert (section.section_ref, section.revision_id, section.kind) == ("Policy RES9", NEW, "policy")
    assert (section.title, section.page_numbers, section.printed_page) == ("Replacement dwellings", [40], "38")
    assert "(2022) will be permitted" in section.text
    assert section.cites == [Citation(section_ref="Policy RES8", source="TEWKESBURY", document=None)]


@pytest.mark.parametrize("typed", ["3.60", "Para 3.60", "paragraph 3.60"])
def test_a_justification_paragraph_records_its_policy_and_its_citations(tewkesbury: PolicyStores, typed: str) -> None:
    section = get_policy_section(tewkesbury, "TEWKESBURY", typed, revision_id=OLD)
    assert (section.section_ref, section.kind, section.supports) == ("Para 3.60", "paragraph", "Policy RES9")
    assert section.cites == [
        Citation(section_ref="Para 3.59", source="TEWKESBURY", document=None),
        Citation(section_ref="Para 11", source="NPPF", document="nppf"),
        Citation(section_ref="Policy SD11", source="GLOUCESTER_JCS", document="joint core strategy"),
    ]


def test_a_miss_names_the_nearest_refs_and_never_guesses(tewkesbury: PolicyStores) -> None:
    with pytest.raises(SectionNotFoundError) as miss:
        get_policy_section(tewkesbury, "TEWKESBURY", "Policy RES7", revision_id=NEW)
    assert miss.value.details["suggestions"][:2] == ["Policy RES8", "Policy RES9"]
    assert miss.value.message.startswith("Section 'Policy RES7' not found in TEWKESBURY revision")
    assert "Did you mean: Policy RES8, Policy RES9" in miss.value.message
    with pytest.raises(SectionNotFoundError):
        get_policy_section(tewkesbury, "TEWKESBURY", "Footnote 3.60", revision_id=NEW)


def test_the_table_of_contents_lists_every_section_in_document_order(tewkesbury: PolicyStores) -> None:
    toc = list_policy_sections(tewkesbury, "TEWKESBURY", revision_id=NEW)
    assert [(s.section_ref, s.kind) for s in toc.sections] == [
        ("Chapter 3", "chapter"),
        ("Policy RES8", "policy"),
        ("Policy RES9", "policy"),
        ("Para 3.59", "paragraph"),
        ("Para 3.60", "paragraph"),
    ]
    assert toc.section_count == 5 and toc.version_label == NEW[-7:]
    assert toc.sections[4].supports == "Policy RES9" and toc.sections[2].printed_page == "38"
    policies = list_policy_sections(tewkesbury, "TEWKESBURY", effective_date="2018-01-01", kind="policy")
    assert policies.revision_id == OLD
    assert [(s.section_ref, s.title, s.page_numbers) for s in policies.sections] == [
        ("Policy RES8", "Rural exception sites", [39]),
        ("Policy RES9", "Replacement dwellings", [40]),
    ]
    with pytest.raises(InvalidArgumentError):
        list_policy_sections(tewkesbury, "TEWKESBURY", kind="clause")


def test_citing_sections_are_read_from_the_revisions_in_force_on_the_date(tewkesbury: PolicyStores) -> None:
    in_2018 = find_citing_sections(tewkesbury, "NPPF", "paragraph 11", effective_date="2018-01-01")
    assert in_2018.section_ref == "Para 11"
    assert [(s.source, s.revision_id, s.section_ref, s.page_numbers) for s in in_2018.sections] == [
        ("TEWKESBURY", OLD, "Para 3.60", [40])
    ]
    assert find_citing_sections(tewkesbury, "NPPF", "Para 11", effective_date="2023-01-01").sections == []
    assert find_citing_sections(tewkesbury, "NPPF", "Para 11", effective_date="2016-01-01").sections == []
    jcs = find_citing_sections(tewkesbury, "GLOUCESTER_JCS", "SD11", effective_date="2023-01-01")
    assert [(s.revision_id, s.section_ref) for s in jcs.sections] == [(NEW, "Para 3.60")]
    inside = find_citing_sections(tewkesbury, "TEWKESBURY", "Policy RES8", effective_date="2023-01-01")
    assert [(s.revision_id, s.section_ref, s.kind) for s in inside.sections] == [(NEW, "Policy RES9", "policy")]
    with pytest.raises(PolicyNotFoundError):
        find_citing_sections(tewkesbury, "NOPE", "Para 11")


def test_citations_go_with_the_chunks_when_they_are_removed(tewkesbury: PolicyStores) -> None:
    remove_revision_chunks(tewkesbury.vectors, "TEWKESBURY", OLD)
    assert find_citing_sections(tewkesbury, "NPPF", "Para 11", effective_date="2018-01-01").sections == []


def local_plan_pdf() -> bytes:
    """A small generated local plan (``tests.lib.text.local_plan_pdfs.Writer``): a cover, chapter 3 with five
    decimal paragraphs (enough for the parser to trust the numbering), one citing the NPPF, and ``Policy CS 1 -
    Housing`` with its reasoned justification citing it."""
    doc = pymupdf.open()
    doc.new_page().insert_text((60, 300), "Example District Local Plan", fontsize=28, fontname="hebo")
    writer = Writer(doc)
    writer.new_page()
    writer.line("3. Housing", size=18, bold=True)
    writer.gap()
    writer.paragraph(
        "3.1 Housing need is set out in the evidence base and in paragraph 11 of the NPPF, which asks "
        "plans to meet the area's objectively assessed needs."
    )
    writer.line("Policy CS 1 - Housing", size=12, bold=True)
    writer.gap(4)
    writer.paragraph("1. New homes will be permitted within settlement boundaries where they respect the area.")
    writer.paragraph("3.2 Policy CS 1 follows the housing needs study; windfall sites are judged against it.")
    writer.paragraph("3.3 The settlement strategy decides where growth goes, so that homes are close to services.")
    writer.paragraph("3.4 Most new homes will be built in the market towns, where jobs and services are.")
    writer.paragraph("3.5 The villages take the homes their own needs call for.")
    data = doc.tobytes()
    doc.close()
    return data


def test_ingestion_stores_what_each_section_cites_in_the_plans_own_notation(policies: PolicyStores) -> None:
    for source, title in [("NPPF", "National Planning Policy Framework"), ("FENLAND", "Fenland Local Plan")]:
        policies.registry.create_policy(PolicyCreate(source=source, title=title, category="local_plan"))
    created = register_revision(
        policies, "FENLAND", RevisionCreate(version_label="2014", effective_from="2014-05-08"), local_plan_pdf()
    )
    ingest_revision(policies, "FENLAND", created.revision.revision_id)
    citing = find_citing_sections(policies, "NPPF", "Para 11")
    assert [(s.source, s.section_ref) for s in citing.sections] == [("FENLAND", "Para 3.1")]
    assert get_policy_section(policies, "FENLAND", "3.1").cites == [
        Citation(section_ref="Para 11", source="NPPF", document="nppf")
    ]
    justification = get_policy_section(policies, "FENLAND", "paragraph 3.2")
    assert justification.cites == [Citation(section_ref="Policy CS 1", source="FENLAND", document=None)]
    for typed in ("CS1", "CS 1", "policy cs1"):
        cited = find_citing_sections(policies, "FENLAND", typed)
        assert (cited.section_ref, [s.section_ref for s in cited.sections]) == ("Policy CS1", ["Para 3.2"])
