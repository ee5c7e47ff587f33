"""Incremental ingestion of a folder: unchanged files skipped, changed ones re-chunked behind a generation flip,
deleted ones removed, and a file that cannot be read reported while the rest are ingested."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lib.composition import Stores
from lib.errors import DocumentNotFoundError
from lib.governance.ingest import ingest_governance_corpus_files
from lib.governance.keys import generation_key, governance_chunk_id
from lib.governance.reads import get_governance_document
from lib.governance.search import query_governance
from lib.stores.embeddings import Embedder
from tests.lib.governance.conftest import MADR, PEPS, stores_with_governance

SMALL = [
    MADR / "0003-provide-own-madr-tools.md",
    MADR / "0013-use-yaml-front-matter-for-meta-data.md",
    PEPS / "pep-0003.rst",
    PEPS / "pep-0220.rst",
]
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
def stores(redis_url: str, chroma_dir: Path, embedder: Embedder, tmp_path: Path) -> Stores:
    return stores_with_governance(redis_url, tmp_path / "data", chroma_dir, embedder)


def stored_generations(stores: Stores, doc_id: str) -> set[int]:
    return {int(meta["generation"]) for _, meta in stores.governance.chunks.iter_metadata({"doc_id": doc_id})}


def test_a_second_run_over_the_same_files_skips_every_one(stores: Stores, corpus: Path) -> None:
    first = ingest_governance_corpus_files(stores.governance, corpus)
    assert sorted(first.added) == sorted(f"{f.parent.name}/{f.name}" for f in SMALL)
    second = ingest_governance_corpus_files(stores.governance, corpus)
    assert (second.added, second.changed, second.removed, second.failed) == ([], [], [], [])
    assert len(second.unchanged) == len(SMALL) and second.chunks_written == 0


def test_a_changed_file_is_searched_in_its_old_version_until_the_new_chunks_flip_in(
    stores: Stores, corpus: Path
) -> None:
    ingest_governance_corpus_files(stores.governance, corpus)
    before = stores.governance.registry.get(TOOLING)
    assert before is not None
    file = corpus / "madr" / "0003-provide-own-madr-tools.md"
    file.write_text(file.read_text() + "\n## Zanzibar\n\nWe keep the zanzibar toolchain for ADR rendering.\n")

    # The state an ingestion leaves between writing the new generation and flipping the record to it.
    pending = stores.governance.registry.allocate_generation()
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
    stores.governance.chunks.upsert(
        [governance_chunk_id(TOOLING, pending, 0)], [text], stores.embedder.embed_batch([text]), [meta]
    )
    assert not query_governance(stores.governance, "zanzibar toolchain", mode="lexical").results
    assert query_governance(stores.governance, "own MADR tooling", mode="lexical").results[0].metadata.id == TOOLING

    report = ingest_governance_corpus_files(stores.governance, corpus)
    assert report.changed == ["madr/0003-provide-own-madr-tools.md"] and len(report.unchanged) == 3
    hit = query_governance(stores.governance, "zanzibar toolchain", mode="lexical").results[0]
    assert hit.metadata.id == TOOLING and hit.metadata.heading == "Zanzibar"
    after = stores.governance.registry.get(TOOLING)
    assert after is not None and after.generation > pending
    assert before.generation not in stored_generations(stores, TOOLING)
    assert after.generation in stored_generations(stores, TOOLING)
    assert "zanzibar" in get_governance_document(stores.governance, TOOLING).text


def test_a_deleted_file_is_removed_from_registry_and_chunks(stores: Stores, corpus: Path) -> None:
    ingest_governance_corpus_files(stores.governance, corpus)
    (corpus / "peps" / "pep-0220.rst").unlink()
    report = ingest_governance_corpus_files(stores.governance, corpus)
    assert report.removed == ["peps/pep-0220.rst"]
    with pytest.raises(DocumentNotFoundError):
        get_governance_document(stores.governance, "PEP 220")
    assert stored_generations(stores, "PEP-0220") == set()


def test_unreadable_files_are_reported_and_the_others_ingested(stores: Stores, corpus: Path) -> None:
    (corpus / "madr" / "latin1.md").write_bytes("# Caf\xe9 decisions\n\nDecided.\n".encode("latin-1"))
    (corpus / "madr" / "broken.md").write_text("---\ntitle: [unclosed\n---\n# Broken\n\ntext\n")
    (corpus / "madr" / "empty.md").write_text("")
    shutil.copy(SMALL[0], corpus / "peps" / "copy-of-0003.md")
    (corpus / "peps" / "copy-of-0003.md").write_text("---\nid: 0003-provide-own-madr-tools\n---\n# Twin\n\nx\n")
    report = ingest_governance_corpus_files(stores.governance, corpus)
    failed = {f.file: f.error for f in report.failed}
    assert set(failed) == {"madr/latin1.md", "madr/broken.md", "madr/empty.md", "peps/copy-of-0003.md"}
    assert "UnicodeDecodeError" in failed["madr/latin1.md"]
    assert "already belongs to" in failed["peps/copy-of-0003.md"]
    assert len(report.added) == len(SMALL)
    assert get_governance_document(stores.governance, TOOLING).title == "Write Own MADR Tooling"
