"""Incremental ingestion of a folder: unchanged files skipped, changed ones re-chunked behind a generation flip,
deleted ones removed, and a file that cannot be read reported while the rest are ingested."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lib.errors import DocumentNotFoundError
from lib.governance.api import get_governance_document, ingest_governance_corpus_files, query_governance
from lib.governance.keys import generation_key, governance_chunk_id
from lib.kb import KnowledgeBase
from lib.stores.embeddings import Embedder
from tests.lib.governance.conftest import MADR, PEPS, governance_kb

SMALL = [MADR / "0003-provide-own-madr-tools.md", MADR / "0013-use-yaml-front-matter-for-meta-data.md",
         PEPS / "pep-0003.rst", PEPS / "pep-0220.rst"]  # fmt: skip
TOOLING = "0003-provide-own-madr-tools"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    (folder / "madr").mkdir(parents=True)
    (folder / "peps").mkdir()
    for file in SMALL:
        shutil.copy(file, folder / file.parent.name / file.name)
    return folder


@pytest.fixture
def kb(redis_url: str, chroma_dir: Path, embedder: Embedder, tmp_path: Path) -> KnowledgeBase:
    return governance_kb(redis_url, tmp_path / "data", chroma_dir, embedder)


def stored_generations(kb: KnowledgeBase, doc_id: str) -> set[int]:
    return {int(meta["generation"]) for _, meta in kb.governance.chunks.iter_metadata({"doc_id": doc_id})}


def test_a_second_run_over_the_same_files_skips_every_one(kb: KnowledgeBase, corpus: Path) -> None:
    first = ingest_governance_corpus_files(kb, corpus)
    assert sorted(first.added) == sorted(f"{f.parent.name}/{f.name}" for f in SMALL)
    second = ingest_governance_corpus_files(kb, corpus)
    assert (second.added, second.changed, second.removed, second.failed) == ([], [], [], [])
    assert len(second.unchanged) == len(SMALL) and second.chunks_written == 0


def test_a_changed_file_is_searched_in_its_old_version_until_the_new_chunks_flip_in(
    kb: KnowledgeBase, corpus: Path
) -> None:
    ingest_governance_corpus_files(kb, corpus)
    before = kb.governance.registry.get(TOOLING)
    assert before is not None
    file = corpus / "madr" / "0003-provide-own-madr-tools.md"
    file.write_text(file.read_text() + "\n## Zanzibar\n\nWe keep the zanzibar toolchain for ADR rendering.\n")

    # The state an ingestion leaves between writing the new generation and flipping the record to it.
    pending = kb.governance.registry.allocate_generation()
    meta: dict[str, str | int] = {
        "doc_id": TOOLING,
        "doc_gen": generation_key(TOOLING, pending),
        "generation": pending,
        "chunk_index": 0,
        "title": before.title,
        "heading": "Zanzibar",
        "file_path": before.file_path,
        "type_key": "adr",
    }
    text = "We keep the zanzibar toolchain for ADR rendering."
    kb.governance.chunks.upsert(
        [governance_chunk_id(TOOLING, pending, 0)], [text], kb.embedder.embed_batch([text]), [meta]
    )
    assert not query_governance(kb, "zanzibar toolchain", mode="lexical").results
    assert query_governance(kb, "own MADR tooling", mode="lexical").results[0].metadata.id == TOOLING

    report = ingest_governance_corpus_files(kb, corpus)
    assert report.changed == ["madr/0003-provide-own-madr-tools.md"] and len(report.unchanged) == 3
    hit = query_governance(kb, "zanzibar toolchain", mode="lexical").results[0]
    assert hit.metadata.id == TOOLING and hit.metadata.heading == "Zanzibar"
    after = kb.governance.registry.get(TOOLING)
    assert after is not None and after.generation > pending
    assert before.generation not in stored_generations(kb, TOOLING)
    assert after.generation in stored_generations(kb, TOOLING)
    assert "zanzibar" in get_governance_document(kb, TOOLING).text


def test_a_deleted_file_is_removed_from_registry_and_chunks(kb: KnowledgeBase, corpus: Path) -> None:
    ingest_governance_corpus_files(kb, corpus)
    (corpus / "peps" / "pep-0220.rst").unlink()
    report = ingest_governance_corpus_files(kb, corpus)
    assert report.removed == ["peps/pep-0220.rst"]
    with pytest.raises(DocumentNotFoundError):
        get_governance_document(kb, "PEP 220")
    assert stored_generations(kb, "PEP-0220") == set()


def test_unreadable_files_are_reported_and_the_others_ingested(kb: KnowledgeBase, corpus: Path) -> None:
    (corpus / "madr" / "latin1.md").write_bytes("# Caf\xe9 decisions\n\nDecided.\n".encode("latin-1"))
    (corpus / "madr" / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Broken\n\ntext\n")
    (corpus / "madr" / "empty.md").write_text("")
    shutil.copy(SMALL[0], corpus / "peps" / "copy-of-0003.md")
    (corpus / "peps" / "copy-of-0003.md").write_text("---\nid: 0003-provide-own-madr-tools\n---\n# Twin\n\nx\n")
    report = ingest_governance_corpus_files(kb, corpus)
    failed = {f.file: f.error for f in report.failed}
    assert set(failed) == {"madr/latin1.md", "madr/broken.md", "madr/empty.md", "peps/copy-of-0003.md"}
    assert "UnicodeDecodeError" in failed["madr/latin1.md"]
    assert "already belongs to" in failed["peps/copy-of-0003.md"]
    assert len(report.added) == len(SMALL)
    assert get_governance_document(kb, TOOLING).title == "Write Own MADR Tooling"
