"""The policy_docs collection on real Chroma: ids, metadata, batching past Chroma's limit, deletes."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime

from lib.composition import Stores
from lib.models import Chunk
from lib.policies.chunks import chunk_id, chunk_metadata, revision_filter
from lib.policies.models import Policy, PolicyCategory, Revision, RevisionStatus

NOW = datetime(2026, 1, 1, tzinfo=UTC)
POLICY = Policy(
    source="LTN_1_20",
    title="Cycle Infrastructure Design (LTN 1/20)",
    category=PolicyCategory.NATIONAL_GUIDANCE,
    created_at=NOW,
    updated_at=NOW,
)


def revision(rid: str, start: date, end: date | None = None) -> Revision:
    return Revision(
        revision_id=rid,
        source="LTN_1_20",
        version_label="July 2020",
        effective_from=start,
        effective_to=end,
        status=RevisionStatus.ACTIVE,
        created_at=NOW,
    )


def unit_vectors(count: int, seed: int = 7) -> list[list[float]]:
    rng = random.Random(seed)
    vectors = []
    for _ in range(count):
        v = [rng.gauss(0, 1) for _ in range(384)]
        norm = sum(x * x for x in v) ** 0.5
        vectors.append([x / norm for x in v])
    return vectors


def test_chunk_ids_follow_the_spec_format_with_a_safe_section_part() -> None:
    assert (
        chunk_id("LTN_1_20", "rev_LTN_1_20_2020_07", "Chapter 5", 42)
        == "LTN_1_20__rev_LTN_1_20_2020_07__Chapter_5__042"
    )
    assert chunk_id("NPPF", "r", "Glossary: Grey belt", 7) == "NPPF__r__Glossary_Grey_belt__007"


def test_metadata_carries_the_appendix_fields_with_integer_dates() -> None:
    chunk = Chunk(
        text="t",
        section_ref="Table 5-2",
        chapter="5. Geometric design",
        page_number=42,
        page_numbers=[42, 43],
        chunk_index=3,
    )
    meta = chunk_metadata(chunk, POLICY, revision("rev_LTN_1_20_2020_07", date(2020, 7, 27)))
    assert meta == {
        "source": "LTN_1_20",
        "source_title": "Cycle Infrastructure Design (LTN 1/20)",
        "revision_id": "rev_LTN_1_20_2020_07",
        "revision_ref": "LTN_1_20:rev_LTN_1_20_2020_07",
        "version_label": "July 2020",
        "effective_from": 20200727,
        "effective_to": 99991231,
        "section_ref": "Table 5-2",
        "chapter": "5. Geometric design",
        "page_number": 42,
        "page_numbers": "42,43",
        "chunk_index": 3,
        "char_count": 1,
    }


def test_upserts_beyond_chromas_batch_limit_are_split_and_deletes_count_them(stores: Stores) -> None:
    count = stores.policies.vectors.max_batch + 300
    rev = revision("rev_big", date(2020, 7, 27))
    chunks = [
        Chunk(text=f"chunk {i}", section_ref=f"Para {i}", chapter="", page_number=1, page_numbers=[1], chunk_index=i)
        for i in range(count)
    ]
    ids = [chunk_id("LTN_1_20", "rev_big", c.section_ref, c.chunk_index) for c in chunks]
    stores.policies.vectors.upsert(
        ids, [c.text for c in chunks], unit_vectors(count), [chunk_metadata(c, POLICY, rev) for c in chunks]
    )
    assert stores.policies.vectors.count_revision("LTN_1_20", "rev_big") == count
    stores.policies.vectors.upsert(
        ids[:10], ["again"] * 10, unit_vectors(10, seed=1), [chunk_metadata(c, POLICY, rev) for c in chunks[:10]]
    )
    assert stores.policies.vectors.count() == count, "an upsert under an existing id replaces, never duplicates"
    assert stores.policies.vectors.delete_revision("LTN_1_20", "rev_big") == count
    assert stores.policies.vectors.delete_revision("LTN_1_20", "rev_big") == 0


def test_sync_rewrites_dates_and_label_and_keeps_every_other_field(stores: Stores) -> None:
    rev = revision("rev_a", date(2020, 7, 27))
    chunk = Chunk(text="t", section_ref="Chapter 5", chapter="5.", page_number=42, page_numbers=[42], chunk_index=0)
    stores.policies.vectors.upsert(["x"], ["t"], unit_vectors(1), [chunk_metadata(chunk, POLICY, rev)])
    closed = rev.model_copy(update={"effective_to": date(2024, 12, 11), "version_label": "July 2020 (superseded)"})
    assert stores.policies.vectors.sync_revision_metadata(POLICY, closed) == 1
    meta = stores.policies.vectors.collection.get(ids=["x"], include=["metadatas"])["metadatas"][0]
    assert (meta["effective_to"], meta["version_label"]) == (20241211, "July 2020 (superseded)")
    assert (meta["section_ref"], meta["page_number"], meta["chunk_index"]) == ("Chapter 5", 42, 0)


def test_the_revision_filter_keeps_policies_with_equal_revision_ids_apart(stores: Stores) -> None:
    other = POLICY.model_copy(update={"source": "NPPF", "title": "NPPF"})
    chunk = Chunk(text="t", section_ref="Para 1", chapter="", page_number=1, page_numbers=[1], chunk_index=0)
    rev = revision("v1", date(2020, 1, 1))
    stores.policies.vectors.upsert(
        ["a", "b"], ["t", "t"], unit_vectors(2), [chunk_metadata(chunk, POLICY, rev), chunk_metadata(chunk, other, rev)]
    )
    found = stores.policies.vectors.collection.get(where=revision_filter(["NPPF:v1"]), include=["metadatas"])
    assert [m["source"] for m in found["metadatas"]] == ["NPPF"]
    both = stores.policies.vectors.collection.get(where=revision_filter(["NPPF:v1", "LTN_1_20:v1"]))
    assert sorted(both["ids"]) == ["a", "b"]
