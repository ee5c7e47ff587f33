"""The whole pipeline on the real NPPF PDFs: object store → extraction → sections → chunks →
embeddings → Chroma → registry, and the temporal acceptance questions an auditor would ask."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis

from lib.composition import Stores
from lib.errors import EncryptedPdfError, ExtractionFailedError, NoContentError, UnsupportedFileTypeError
from lib.models import Chunk
from lib.policies.ingest import ingest_revision, store_chunks
from lib.policies.lifecycle import create_revision, register_revision
from lib.policies.models import PolicyCreate, RevisionCreate, RevisionStatus
from lib.policies.search import search_policy
from lib.policies.sections import get_policy_section
from lib.policies.seeding import SeedAction, seed_policies
from lib.stores.embeddings import Embedder
from tests.conftest import isolated_stores
from tests.fixtures_paths import (
    EMPTY_PDF,
    ENCRYPTED_AES256_PDF,
    ENCRYPTED_PASSWORD_PDF,
    IMAGE_ONLY_PDF,
    NPPF_2024,
    SEED_FILE,
)

QUESTION = "refusing development on highways grounds"
HIGHWAYS = "Development should only be prevented or refused on highways grounds if the impact would be severe."


@pytest.fixture(scope="module")
def seeded(redis_url: str, chroma_dir: Path, tmp_path_factory: pytest.TempPathFactory, embedder: Embedder):
    """Both bundled NPPF revisions, seeded once for the module into a Redis database of its own."""
    url = redis_url.rsplit("/", 1)[0] + "/1"
    client = redis.Redis.from_url(url, decode_responses=True)
    client.flushdb()
    stores = isolated_stores(url, tmp_path_factory.mktemp("seeded"), chroma_dir, embedder)
    steps = seed_policies(stores.policies, SEED_FILE)
    return stores, steps


def test_seeding_ingests_both_revisions_and_counts_agree_with_chroma(seeded) -> None:
    stores, steps = seeded
    assert [s.action for s in steps] == [SeedAction.CREATED_POLICY, SeedAction.INGESTED, SeedAction.INGESTED]
    for rev in stores.policies.registry.list_revisions("NPPF"):
        assert rev.status in (RevisionStatus.ACTIVE, RevisionStatus.SUPERSEDED)
        assert rev.chunk_count == stores.policies.vectors.count_revision("NPPF", rev.revision_id) > 100
        assert rev.extraction_method == "text_layer"
        assert stores.objects.exists(rev.file_path)
    current = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    assert (current.page_count, str(current.effective_to)) == (82, "2098-12-31")
    assert current.status == RevisionStatus.SUPERSEDED


def test_seeding_twice_changes_nothing(seeded) -> None:
    stores, _ = seeded
    before = stores.policies.vectors.count()
    again = seed_policies(stores.policies, SEED_FILE)
    assert [s.action for s in again] == [SeedAction.KEPT_POLICY, SeedAction.KEPT, SeedAction.KEPT]
    assert stores.policies.vectors.count() == before


def test_as_of_mid_2025_the_highways_question_cites_para_116_on_page_33_of_the_2024_edition(seeded) -> None:
    stores, _ = seeded
    result = search_policy(stores.policies, QUESTION, effective_date="2025-06-01", n_results=10)
    assert {h.revision_id for h in result.results} == {"rev_NPPF_2024_12"}
    top = result.results[0]
    assert (top.source, top.version_label, top.section_ref, top.page_number) == (
        "NPPF",
        "December 2024",
        "Para 116",
        33,
    )
    assert "unacceptable impact on highway safety" in top.text


def test_after_the_drafts_hypothetical_start_only_the_draft_answers(seeded) -> None:
    stores, _ = seeded
    result = search_policy(stores.policies, QUESTION, effective_date="2099-06-01", n_results=10)
    assert result.results and {h.revision_id for h in result.results} == {"rev_NPPF_2099_01_DRAFT"}
    assert all("draft" in h.version_label for h in result.results)


def test_before_the_2024_edition_nothing_registered_was_in_force(seeded) -> None:
    stores, _ = seeded
    assert search_policy(stores.policies, QUESTION, effective_date="2024-12-11").results == []


def test_para_116_section_is_exactly_that_paragraph_on_page_33(seeded) -> None:
    stores, _ = seeded
    section = get_policy_section(stores.policies, "NPPF", "Para 116", effective_date="2025-06-01")
    assert section.page_numbers == [33]
    assert section.text.startswith("116.")
    assert "severe" in section.text and "117." not in section.text and "115." not in section.text
    assert section.chapter.startswith("9. Promoting sustainable transport")


def test_a_chapter_ref_returns_the_whole_chapter_in_document_order(seeded) -> None:
    stores, _ = seeded
    chapter = get_policy_section(stores.policies, "NPPF", "Chapter 9", revision_id="rev_NPPF_2024_12")
    assert chapter.chapter.startswith("9. Promoting sustainable transport")
    positions = [chapter.text.index(f"{n}. ") for n in (109, 110, 115, 116, 117, 118)]
    assert positions == sorted(positions)
    assert 33 in chapter.page_numbers and len(chapter.page_numbers) >= 3


def test_reindex_writes_before_it_deletes_so_every_phase_still_finds_the_revision(seeded) -> None:
    stores, _ = seeded
    before = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    seen: list[tuple[str, int]] = []

    def probe(phase: str, percent: float) -> None:
        hits = search_policy(stores.policies, QUESTION, effective_date="2025-06-01", n_results=3).results
        seen.append((phase, len(hits)))

    outcome = ingest_revision(stores.policies, "NPPF", "rev_NPPF_2024_12", progress=probe)
    assert {phase for phase, _ in seen} >= {"fetch", "extract", "chunk", "embed", "store", "done"}
    assert all(count == 3 for _, count in seen), seen
    assert outcome.chunks_created == before.chunk_count and outcome.chunks_removed == 0
    assert stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2024_12") == before.chunk_count
    assert outcome.sections["Para 116"] == 1


def truncated_nppf() -> bytes:
    data = NPPF_2024.read_bytes()
    return data[: len(data) // 3]


@pytest.mark.parametrize(
    ("load", "error", "error_type"),
    [
        (truncated_nppf, ExtractionFailedError, "extraction_failed"),
        (lambda: ENCRYPTED_PASSWORD_PDF.read_bytes(), EncryptedPdfError, "encrypted"),
        (lambda: ENCRYPTED_AES256_PDF.read_bytes(), EncryptedPdfError, "encrypted"),
    ],
    ids=["truncated", "encrypted-rc4", "encrypted-aes256"],
)
def test_a_bad_pdf_fails_its_revision_cleanly_and_the_edition_in_force_stays_in_force(
    stores: Stores, load, error: type, error_type: str
) -> None:
    stores.policies.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    create_revision(
        stores.policies.registry,
        stores.policies.vectors,
        "NPPF",
        RevisionCreate(version_label="December 2024", effective_from="2024-12-12"),
    )
    para = Chunk(
        text="116. " + HIGHWAYS, section_ref="Para 116", chapter="9.", page_number=33, page_numbers=[33], chunk_index=0
    )
    policies = stores.policies
    store_chunks(
        policies.registry,
        policies.vectors,
        "NPPF",
        "rev_NPPF_2024_12",
        [para],
        [policies.embedder.embed(para.text)],
        page_count=1,
        file_size_bytes=1,
        extraction_method="text_layer",
    )
    data = load()
    register_revision(stores.policies, "NPPF", RevisionCreate(version_label="bad", effective_from="2026-01-01"), data)
    with pytest.raises(error) as err:
        ingest_revision(stores.policies, "NPPF", "rev_NPPF_2026_01")
    assert err.value.error_type == error_type
    failed = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2026_01")
    assert failed.status == RevisionStatus.FAILED and failed.error
    assert stores.policies.vectors.count_revision("NPPF", "rev_NPPF_2026_01") == 0
    restored = stores.policies.registry.get_revision("NPPF", "rev_NPPF_2024_12")
    assert restored.effective_to is None and restored.status == RevisionStatus.ACTIVE
    assert search_policy(stores.policies, QUESTION, effective_date="2026-06-01").results[0].section_ref == "Para 116"


def test_zero_byte_and_non_pdf_uploads_are_refused_before_anything_is_stored(stores: Stores) -> None:
    stores.policies.registry.create_policy(PolicyCreate(source="NPPF", title="NPPF", category="national_policy"))
    for content in [EMPTY_PDF.read_bytes(), b"PK\x03\x04 a docx"]:
        with pytest.raises(UnsupportedFileTypeError):
            register_revision(
                stores.policies, "NPPF", RevisionCreate(version_label="x", effective_from="2024-01-01"), content
            )
    assert stores.policies.registry.list_revisions("NPPF") == []
    assert list(stores.objects.list()) == []


def test_an_image_only_pdf_without_ocr_fails_with_no_content(stores: Stores) -> None:
    stores.settings.extraction.enable_ocr = False
    stores.policies.registry.create_policy(PolicyCreate(source="SCAN", title="Scan", category="local_guidance"))
    data = IMAGE_ONLY_PDF.read_bytes()
    register_revision(stores.policies, "SCAN", RevisionCreate(version_label="x", effective_from="2024-01-01"), data)
    with pytest.raises(NoContentError):
        ingest_revision(stores.policies, "SCAN", "rev_SCAN_2024_01")
    assert stores.policies.registry.get_revision("SCAN", "rev_SCAN_2024_01").status == RevisionStatus.FAILED
