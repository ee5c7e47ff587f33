"""Search and section lookup over real Chroma and real embeddings, including the stale-chunk-dates trap."""

from __future__ import annotations

from datetime import date

import numpy as np
import pytest

from lib.composition import Stores
from lib.errors import (
    InvalidArgumentError,
    InvalidDateError,
    PolicyNotFoundError,
    RevisionNotFoundError,
    RevisionOverlapError,
    SectionNotFoundError,
)
from lib.models import Section
from lib.policies.chunks import chunk_id, chunk_metadata
from lib.policies.ingest import store_chunks
from lib.policies.lifecycle import create_revision, remove_revision, update_revision
from lib.policies.models import PolicyCreate, RevisionCreate, RevisionUpdate
from lib.policies.search import search_policy, search_policy_batch, searchable_revisions
from lib.policies.sections import get_policy_section
from lib.policies.stores import PolicyStores
from lib.stores.chroma import relevance
from lib.text.chunking import chunk_sections, merge_chunk_texts

HIGHWAYS = "Development should only be prevented or refused on highways grounds if there would be an unacceptable impact on highway safety."  # noqa: E501
CYCLING = "Cycle parking should be secure, covered and conveniently located close to building entrances."
LONG_PARA = " ".join(f"Sentence {i} of a long paragraph about design codes and local character." for i in range(40))


def ingest_sections(
    stores: Stores, source: str, rid: str, frm: str, to: str | None, label: str, sections: list[Section]
) -> None:
    policies = stores.policies
    create_revision(
        policies.registry,
        policies.vectors,
        source,
        RevisionCreate(revision_id=rid, version_label=label, effective_from=frm, effective_to=to),
    )
    chunks = chunk_sections(sections)
    store_chunks(
        policies.registry,
        policies.vectors,
        source,
        rid,
        chunks,
        policies.embedder.embed_batch([c.text for c in chunks]),
        page_count=2,
        file_size_bytes=10,
        extraction_method="text_layer",
    )


def para(ref: str, text: str, page: int) -> Section:
    return Section(
        section_ref=ref,
        chapter="9. Promoting sustainable transport",
        text=text,
        page_number=page,
        page_spans=[(0, page)],
    )


@pytest.fixture
def nppf(stores: Stores) -> PolicyStores:
    stores.policies.registry.create_policy(
        PolicyCreate(source="NPPF", title="National Planning Policy Framework", category="national_policy")
    )
    stores.policies.registry.create_policy(
        PolicyCreate(source="LTN_1_20", title="Cycle Infrastructure Design", category="national_guidance")
    )
    ingest_sections(
        stores,
        "NPPF",
        "rev_NPPF_2023_09",
        "2023-09-05",
        None,
        "September 2023",
        [para("Para 115", "2023: " + HIGHWAYS, 31), para("Para 130", LONG_PARA, 40)],
    )
    ingest_sections(
        stores,
        "NPPF",
        "rev_NPPF_2024_12",
        "2024-12-12",
        None,
        "December 2024",
        [para("Para 116", "2024: " + HIGHWAYS, 33), para("Para 130", LONG_PARA, 41)],
    )
    ingest_sections(
        stores, "LTN_1_20", "rev_LTN_1_20_2020_07", "2020-07-27", None, "July 2020", [para("Chapter 11", CYCLING, 110)]
    )
    return stores.policies


def revisions_of(result) -> set[str]:
    return {hit.revision_id for hit in result.results}


def test_dated_search_returns_only_the_revision_in_force_with_full_citations(nppf: PolicyStores) -> None:
    result = search_policy(
        nppf, "refusing development on highways grounds", effective_date="2025-06-01", sources=["NPPF"]
    )
    assert revisions_of(result) == {"rev_NPPF_2024_12"}
    top = result.results[0]
    assert (top.section_ref, top.page_number, top.version_label) == ("Para 116", 33, "December 2024")
    assert top.chunk_id == chunk_id("NPPF", "rev_NPPF_2024_12", "Para 116", 0)
    assert top.chunk_id == "NPPF__rev_NPPF_2024_12__Para_116__000"
    assert result.effective_date == "2025-06-01"
    assert 0.0 < top.relevance_score <= 1.0


def test_boundary_days_switch_revisions_exactly(nppf: PolicyStores) -> None:
    on_last_day = search_policy(nppf, "highways grounds", effective_date="2024-12-11", sources=["NPPF"])
    on_first_day = search_policy(nppf, "highways grounds", effective_date="2024-12-12", sources=["NPPF"])
    assert revisions_of(on_last_day) == {"rev_NPPF_2023_09"}
    assert revisions_of(on_first_day) == {"rev_NPPF_2024_12"}


def test_date_before_any_revision_returns_no_results(nppf: PolicyStores) -> None:
    result = search_policy(nppf, "cycle parking", effective_date="2019-01-01")
    assert result.results == []


def test_search_without_date_sees_every_ingested_revision(nppf: PolicyStores) -> None:
    result = search_policy(nppf, "highways grounds", sources=["NPPF"], n_results=20)
    assert revisions_of(result) == {"rev_NPPF_2023_09", "rev_NPPF_2024_12"}


def test_source_filter_returns_only_that_policy(nppf: PolicyStores) -> None:
    result = search_policy(nppf, "transport", sources=["LTN_1_20"])
    assert {h.source for h in result.results} == {"LTN_1_20"}


def test_relevance_is_one_minus_half_the_distance_floored_at_zero() -> None:
    assert relevance(0.0) == 1.0 and relevance(0.5) == 0.75 and relevance(2.0) == 0.0 and relevance(3.5) == 0.0


def test_the_trap_a_date_edit_after_ingestion_moves_search_results_with_it(nppf: PolicyStores) -> None:
    """Chunks were written with the 2024 revision starting 2024-12-12. Move its start to 2025-02-01:
    searches on the days in between must now cite the 2023 revision, and never the 2024 one."""
    update_revision(
        nppf.registry, nppf.vectors, "NPPF", "rev_NPPF_2024_12", RevisionUpdate(effective_from="2025-02-01")
    )
    update_revision(nppf.registry, nppf.vectors, "NPPF", "rev_NPPF_2023_09", RevisionUpdate(effective_to="2025-01-31"))
    with pytest.raises(RevisionOverlapError):
        update_revision(
            nppf.registry, nppf.vectors, "NPPF", "rev_NPPF_2024_12", RevisionUpdate(effective_from="2025-01-15")
        )
    for day, expected in [
        ("2024-12-12", "rev_NPPF_2023_09"),
        ("2025-01-31", "rev_NPPF_2023_09"),
        ("2025-02-01", "rev_NPPF_2024_12"),
    ]:
        assert revisions_of(search_policy(nppf, "highways", effective_date=day, sources=["NPPF"])) == {expected}
    stored = nppf.vectors.collection.get(where={"revision_id": "rev_NPPF_2024_12"}, include=["metadatas"])
    assert {m["effective_from"] for m in stored["metadatas"] or []} == {20250201}


def test_the_trap_a_processing_revision_is_never_searched_even_with_chunks_stored(nppf: PolicyStores) -> None:
    create_revision(
        nppf.registry,
        nppf.vectors,
        "NPPF",
        RevisionCreate(revision_id="rev_draft", version_label="Draft", effective_from="2030-01-01"),
    )
    chunk = chunk_sections([para("Policy TR6", "draft: " + HIGHWAYS, 50)])[0]

    nppf.vectors.upsert(
        ["half"],
        [chunk.text],
        [nppf.embedder.embed(chunk.text)],
        [chunk_metadata(chunk, nppf.registry.get_policy("NPPF"), nppf.registry.get_revision("NPPF", "rev_draft"))],
    )
    assert revisions_of(search_policy(nppf, "highways", effective_date="2031-01-01", sources=["NPPF"])) == set()
    assert "rev_draft" not in revisions_of(search_policy(nppf, "highways", n_results=50))
    assert revisions_of(search_policy(nppf, "highways", effective_date="2029-12-31", sources=["NPPF"])) == {
        "rev_NPPF_2024_12"
    }


def test_removing_the_latest_revision_puts_the_previous_one_back_in_force(nppf: PolicyStores) -> None:
    recorded = nppf.registry.get_revision("NPPF", "rev_NPPF_2024_12").chunk_count
    removed = remove_revision(nppf, "NPPF", "rev_NPPF_2024_12")
    assert removed.chunks_removed == recorded > 2
    assert nppf.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == 0
    assert revisions_of(search_policy(nppf, "highways", effective_date="2026-01-01", sources=["NPPF"])) == {
        "rev_NPPF_2023_09"
    }


def test_batch_search_answers_each_query_in_order(nppf: PolicyStores) -> None:
    results = search_policy_batch(nppf, ["highways grounds", "cycle parking"], effective_date="2025-01-01")
    assert results[0].results[0].section_ref == "Para 116"
    assert results[1].results[0].source == "LTN_1_20"


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"effective_date": "15/03/2024"}, InvalidDateError),
        ({"effective_date": "2024-02-30"}, InvalidDateError),
        ({"n_results": 0}, InvalidArgumentError),
        ({"n_results": 10_000}, InvalidArgumentError),
        ({"sources": ["NOT_REGISTERED"]}, PolicyNotFoundError),
        ({"sources": ["bad-slug"]}, InvalidArgumentError),
    ],
)
def test_bad_search_arguments_get_typed_errors(nppf: PolicyStores, kwargs: dict, error: type) -> None:
    with pytest.raises(error):
        search_policy(nppf, "highways", **kwargs)


def test_empty_query_is_refused(nppf: PolicyStores) -> None:
    with pytest.raises(InvalidArgumentError):
        search_policy(nppf, "   ")


def test_get_policy_section_returns_the_whole_paragraph_without_repeated_overlap(nppf: PolicyStores) -> None:
    section = get_policy_section(nppf, "NPPF", "Para 130", revision_id="rev_NPPF_2024_12")
    assert section.text == LONG_PARA
    assert section.page_numbers == [41]
    assert section.version_label == "December 2024"


def test_get_policy_section_defaults_to_the_revision_in_force_on_the_date(nppf: PolicyStores) -> None:
    assert get_policy_section(nppf, "NPPF", "Para 130", effective_date="2024-01-01").revision_id == "rev_NPPF_2023_09"
    assert get_policy_section(nppf, "NPPF", "Para 130").revision_id == "rev_NPPF_2024_12"
    assert get_policy_section(nppf, "NPPF", "Para  116").text == "2024: " + HIGHWAYS


def test_get_policy_section_errors(nppf: PolicyStores) -> None:
    with pytest.raises(SectionNotFoundError):
        get_policy_section(nppf, "NPPF", "Table 99")
    with pytest.raises(RevisionNotFoundError):
        get_policy_section(nppf, "NPPF", "Para 116", revision_id="rev_missing")
    with pytest.raises(RevisionNotFoundError, match="date_before_first_revision"):
        get_policy_section(nppf, "NPPF", "Para 116", effective_date="2000-01-01")
    with pytest.raises(PolicyNotFoundError):
        get_policy_section(nppf, "NOPE", "Para 116")


def test_merge_drops_only_the_repeated_overlap() -> None:
    assert merge_chunk_texts(["alpha beta gamma delta epsilon zeta", "delta epsilon zeta eta theta"]) == (
        "alpha beta gamma delta epsilon zeta\n\ndelta epsilon zeta eta theta"
    ), "an overlap shorter than 20 characters is not trusted"
    a = "x" * 50 + "the overlapping tail of a sentence"
    assert merge_chunk_texts([a, "the overlapping tail of a sentence and more"]) == a + " and more"


def test_dates_are_passed_through_as_dates_too(nppf: PolicyStores) -> None:
    assert search_policy(nppf, "highways", effective_date=date(2025, 1, 1)).effective_date == "2025-01-01"


def test_lexical_mode_finds_a_paragraph_by_its_number_and_scores_in_0_1(nppf: PolicyStores) -> None:
    result = search_policy(nppf, "para 116", effective_date="2025-06-01", mode="lexical")
    top = result.results[0]
    assert (top.section_ref, top.revision_id) == ("Para 116", "rev_NPPF_2024_12")
    assert 0 < top.score <= 1 and top.lexical_score is not None and top.dense_score is None
    assert top.relevance_score is None  # no query is embedded in lexical mode
    before = search_policy(nppf, "para 116", effective_date="2024-01-01", mode="lexical")
    assert revisions_of(before) <= {"rev_NPPF_2023_09"} and "Para 116" not in {h.section_ref for h in before.results}
    assert search_policy(nppf, "unheard of words", mode="lexical").results == []


def test_every_mode_keeps_the_date_filter_and_hybrid_carries_both_legs_scores(nppf: PolicyStores) -> None:
    for mode in ("hybrid", "dense", "lexical"):
        result = search_policy(nppf, "highways grounds 2023", effective_date="2024-06-01", sources=["NPPF"], mode=mode)
        assert revisions_of(result) == {"rev_NPPF_2023_09"}, mode
    hybrid = search_policy(nppf, "highways grounds", effective_date="2025-06-01", n_results=3)
    top = hybrid.results[0]
    assert top.section_ref == "Para 116" and top.dense_score is not None and top.lexical_score is not None
    assert [h.score for h in hybrid.results] == sorted((h.score for h in hybrid.results), reverse=True)
    dense = search_policy(nppf, "highways grounds", effective_date="2025-06-01", n_results=3, mode="dense")
    assert all(h.dense_score == h.relevance_score == h.score and h.lexical_score is None for h in dense.results)


def test_an_unknown_mode_is_an_invalid_argument(nppf: PolicyStores) -> None:
    with pytest.raises(InvalidArgumentError, match="mode"):
        search_policy(nppf, "highways", mode="bm25")
    with pytest.raises(InvalidArgumentError, match="mode"):
        search_policy_batch(nppf, ["highways"], mode="")
    batch = search_policy_batch(nppf, ["para 116", "cycle parking"], effective_date="2025-06-01", mode="lexical")
    assert [r.results[0].section_ref for r in batch] == ["Para 116", "Chapter 11"]


def test_a_search_returns_one_chunk_per_section_of_a_revision(nppf: PolicyStores) -> None:
    """Para 130 is several chunks long in each revision; each revision's Para 130 is cited once."""
    assert len(chunk_sections([para("Para 130", LONG_PARA, 41)])) > 2
    for mode in ("hybrid", "dense", "lexical"):
        hits = search_policy(nppf, "design codes and local character", n_results=10, mode=mode).results
        cited = [(hit.revision_id, hit.section_ref) for hit in hits]
        assert len(cited) == len(set(cited)), mode
        assert ("rev_NPPF_2024_12", "Para 130") in cited and ("rev_NPPF_2023_09", "Para 130") in cited, mode


POLICY_TEXT = "Proposals for new dwellings will be supported where criteria (a) to (d) of this policy are met in full."
JUSTIFICATION = "Families moving to the villages need larger homes with gardens, close to the primary school."


def test_in_hybrid_a_policy_ranks_just_above_the_paragraph_that_explains_it(stores: Stores) -> None:
    stores.policies.registry.create_policy(
        PolicyCreate(source="EXAMPLE_PLAN", title="Example Local Plan", category="local_plan")
    )
    sections = [
        Section(
            section_ref="Para 3.1",
            text=f"3.1 {JUSTIFICATION}",
            page_number=4,
            page_spans=[(0, 4)],
            kind="paragraph",
            supports="Policy H1",
            chapter="3. Housing",
        ),
        Section(
            section_ref="Policy H1",
            text=f"Policy H1 - Housing Mix\n{POLICY_TEXT}",
            page_number=5,
            page_spans=[(0, 5)],
            kind="policy",
            title="Housing Mix",
            chapter="3. Housing",
        ),
        Section(
            section_ref="Para 3.2",
            text="3.2 Employment land is set out in chapter four.",
            page_number=5,
            page_spans=[(0, 5)],
            kind="paragraph",
            supports="Policy H2",
            chapter="3. Housing",
        ),
    ]
    ingest_sections(stores, "EXAMPLE_PLAN", "rev_EXAMPLE_PLAN_2020_01", "2020-01-01", None, "2020", sections)
    question = "larger family homes with gardens near the village primary school"
    dense = search_policy(stores.policies, question, n_results=3, mode="dense").results
    assert [hit.section_ref for hit in dense][:2] == ["Para 3.1", "Policy H1"]  # the paragraph matches better
    hybrid = search_policy(stores.policies, question, n_results=3, mode="hybrid").results
    assert [hit.section_ref for hit in hybrid][:2] == ["Policy H1", "Para 3.1"]
    assert hybrid[0].score == hybrid[1].score  # the policy takes its paragraph's place in the ranking ...
    assert [hit.relevance_score for hit in hybrid[:2]] == [dense[1].relevance_score, dense[0].relevance_score]
    assert hybrid[1].supports == "Policy H1" and hybrid[0].supports is None


def test_relevance_score_is_the_specs_distance_for_every_hit_and_hybrid_is_ordered_by_the_fused_score(
    nppf: PolicyStores,
) -> None:
    """Spec 000 FR-001: ``relevance_score = max(0, 1 - L2 distance / 2)``, here recomputed from the query's embedding
    and the vectors Chroma stores, for each hybrid hit; the order is the fused ``score``'s. A hit only the lexical
    leg listed (a corpus larger than the dense leg's depth) gets it from ``dense_relevances``, checked the same way
    on every chunk."""
    query, day = "highway safety refusal", "2025-06-01"
    hits = search_policy(nppf, query, effective_date=day, n_results=10, mode="hybrid").results
    assert len(hits) >= 2 and [h.score for h in hits] == sorted((h.score for h in hits), reverse=True)
    query_vector = nppf.embedder.embed_queries([query])[0]
    stored = nppf.vectors.collection.get(include=["embeddings"])
    expected = {
        chunk_id: max(0.0, 1.0 - float(np.sum((np.asarray(vector, dtype=np.float32) - query_vector) ** 2)) / 2.0)
        for chunk_id, vector in zip(stored["ids"], stored["embeddings"], strict=True)
    }
    for hit in hits:
        assert hit.relevance_score == pytest.approx(expected[hit.chunk_id], abs=2e-6), hit.section_ref
    revisions = searchable_revisions(nppf.registry, None, None)
    computed = nppf.vectors.dense_relevances(query_vector, list(expected), revisions)
    assert computed == pytest.approx(expected, abs=2e-6)


def test_a_hybrid_search_resolves_its_slices_once_for_both_legs_and_the_relevances(
    nppf: PolicyStores, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Both legs and the relevances of lexical-only hits read the very slices one resolution returned (each
    resolution checks every revision's stamp: ~5 ms at 500 revisions), and the answer is the same as when each
    step resolved them itself."""
    query, day = "highway safety refusal para 116", "2025-06-01"
    before = search_policy(nppf, query, effective_date=day, n_results=10, mode="hybrid")
    resolved: list[int] = []
    held_blocks = nppf.vectors.held_blocks

    def counted(revisions):
        blocks = held_blocks(revisions)
        resolved.append(len(blocks or []))
        return blocks

    monkeypatch.setattr(nppf.vectors, "held_blocks", counted)
    after = search_policy(nppf, query, effective_date=day, n_results=10, mode="hybrid")
    assert resolved == [2]  # one resolution, of the two revisions in force (NPPF 2024, LTN 1/20)
    assert after == before and after.results
