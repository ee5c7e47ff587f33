"""The consistency audit finds a search block (vectors and lexical index) out of step with Chroma and evicts it
(real Redis, Chroma and model; the rewrite comes through another Chroma client, behind the pipeline)."""

from __future__ import annotations

import numpy as np

from lib.composition import Stores
from lib.models import Section
from lib.policies.audit import FindingKind, audit_store
from lib.policies.audit_repair import repair_findings
from lib.policies.chunks import chunk_id
from lib.policies.ingest import store_chunks
from lib.policies.lifecycle import create_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.policies.search import search_policy
from lib.stores.chroma import open_chroma
from lib.text.chunking import chunk_sections

TEXTS = {
    "Para 1": "Cycle parking should be secure, covered and close to building entrances.",
    "Para 2": "Development should only be refused on highways grounds if the impact on highway safety is unacceptable.",
}
REWRITTEN = "Policy TR6: a segregated cycle track is required on busy roads."


def stale_findings(stores: Stores) -> list[tuple[FindingKind, str, int, bool]]:
    return [
        (f.kind, f.revision_id, f.count, f.repairable)
        for f in audit_store(stores.policies).findings
        if f.kind == FindingKind.STALE_SEARCH_INDEX
    ]


def test_the_audit_reports_a_lexical_index_out_of_step_with_chroma_and_repair_evicts_it(stores: Stores) -> None:
    stores.policies.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    policies = stores.policies
    create_revision(
        policies.registry,
        policies.vectors,
        "NPPF",
        RevisionCreate(revision_id="rev_a", version_label="a", effective_from="2024-01-01"),
    )
    chunks = chunk_sections([Section(section_ref=ref, text=text, page_number=1) for ref, text in TEXTS.items()])
    store_chunks(
        policies.registry,
        policies.vectors,
        "NPPF",
        "rev_a",
        chunks,
        policies.embedder.embed_batch([c.text for c in chunks]),
        page_count=1,
        file_size_bytes=1,
        extraction_method="text_layer",
    )
    assert (
        search_policy(stores.policies, "segregated cycle track TR6", mode="lexical").results[0].text == TEXTS["Para 1"]
    )
    assert len(stores.policies.vectors.cache) == 1 and stale_findings(stores) == []

    # Another client rewrites a chunk in place: same id, same metadata, so the registry's stamp is unchanged.
    other = open_chroma(stores.settings.chroma).get_collection(stores.policies.vectors.collection.name)
    target = chunk_id("NPPF", "rev_a", "Para 1", 0)
    other.update(
        ids=[target], documents=[REWRITTEN], embeddings=np.asarray([stores.embedder.embed(REWRITTEN)], np.float32)
    )
    served = search_policy(stores.policies, "segregated cycle track TR6", mode="lexical").results
    assert REWRITTEN not in {h.text for h in served}, "the held block still answers from the old text"

    assert stale_findings(stores) == [(FindingKind.STALE_SEARCH_INDEX, "rev_a", 2, True)]
    stale = [f for f in audit_store(stores.policies).findings if f.kind == FindingKind.STALE_SEARCH_INDEX]
    assert "other texts" in stale[0].detail
    actions = repair_findings(stores.policies, stale)
    assert [(a.kind, a.ok) for a in actions] == [(FindingKind.STALE_SEARCH_INDEX, True)]
    assert "evicted" in actions[0].outcome and len(stores.policies.vectors.cache) == 0

    found = search_policy(stores.policies, "segregated cycle track TR6", mode="lexical").results
    assert (found[0].chunk_id, found[0].text) == (target, REWRITTEN)
    assert stale_findings(stores) == []
    again = repair_findings(stores.policies, stale)
    assert "left alone" in again[0].outcome


def test_a_chapter_heading_rewritten_behind_the_pipeline_is_reported_and_the_next_search_indexes_it(
    stores: Stores,
) -> None:
    """The lexical leg indexes each chunk under its chapter (metadata), so a heading changed in Chroma alone
    puts the held lexical index out of step as a text change does."""
    stores.policies.registry.create_policy(PolicyCreate(source="LTN", title="LTN 1/20", category="national_guidance"))
    policies = stores.policies
    create_revision(
        policies.registry,
        policies.vectors,
        "LTN",
        RevisionCreate(revision_id="rev_a", version_label="a", effective_from="2024-01-01"),
    )
    sections = [
        Section(section_ref=ref, chapter="1. Cycle parking", text=text, page_number=1) for ref, text in TEXTS.items()
    ]
    chunks = chunk_sections(sections)
    store_chunks(
        policies.registry,
        policies.vectors,
        "LTN",
        "rev_a",
        chunks,
        policies.embedder.embed_batch([c.text for c in chunks]),
        page_count=1,
        file_size_bytes=1,
        extraction_method="text_layer",
    )
    assert len(search_policy(stores.policies, "cycle parking", mode="lexical").results) == 2  # Para 2 under its chapter
    assert search_policy(stores.policies, "segregated junctions", mode="lexical").results == []

    other = open_chroma(stores.settings.chroma).get_collection(stores.policies.vectors.collection.name)
    target = chunk_id("LTN", "rev_a", "Para 2", next(c.chunk_index for c in chunks if c.section_ref == "Para 2"))
    meta = dict(other.get(ids=[target], include=["metadatas"])["metadatas"][0])  # type: ignore[index]
    other.update(ids=[target], metadatas=[meta | {"chapter": "10. Segregated junctions"}])
    assert search_policy(stores.policies, "segregated junctions", mode="lexical").results == []  # the held block

    stale = [f for f in audit_store(stores.policies).findings if f.kind == FindingKind.STALE_SEARCH_INDEX]
    assert [(f.revision_id, f.count) for f in stale] == [("rev_a", 2)] and "headings" in stale[0].detail
    assert [a.ok for a in repair_findings(stores.policies, stale)] == [True]
    assert [h.chunk_id for h in search_policy(stores.policies, "segregated junctions", mode="lexical").results] == [
        target
    ]
