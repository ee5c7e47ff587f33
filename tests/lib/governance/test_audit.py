"""The governance corpus's consistency audit: a generation no record names (an ingestion stopped before its
flip) and a record whose chunks went missing are found, repaired, and the repair leaves the corpus consistent;
an ingestion in progress is neither reported nor disturbed."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from lib.composition import Stores
from lib.errors import IngestionInProgressError
from lib.governance import audit as governance_audit
from lib.governance import ingest as governance_ingest
from lib.governance.audit import GovernanceFindingKind, audit_governance, repair_governance
from lib.governance.ingest import ingest_governance_corpus_files
from lib.governance.keys import governance_chunk_id
from lib.governance.search import query_governance
from lib.stores.embeddings import Embedder
from tests.lib.governance.conftest import MADR, PEPS, stores_with_governance

FILES = [MADR / "0003-provide-own-madr-tools.md", PEPS / "pep-0003.rst"]
TOOLING = "0003-provide-own-madr-tools"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "corpus"
    folder.mkdir()
    for file in FILES:
        shutil.copy(file, folder / file.name)
    return folder


@pytest.fixture
def stores(redis_url: str, chroma_dir: Path, embedder: Embedder, tmp_path: Path, corpus: Path) -> Stores:
    stores = stores_with_governance(redis_url, tmp_path / "data", chroma_dir, embedder)
    ingest_governance_corpus_files(stores.governance, corpus)
    return stores


def crash_before_the_flip(stores: Stores, corpus: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Change the ADR and ingest it with the registry write failing: its new chunks are written, never
    registered. Returns the generation they were written in."""
    file = corpus / FILES[0].name
    file.write_text(file.read_text() + "\n## Zanzibar\n\nWe keep the zanzibar toolchain for ADR rendering.\n")
    registry = stores.governance.registry

    def lost(*_: object) -> None:
        raise ConnectionError("the worker died here")

    with monkeypatch.context() as patch:
        patch.setattr(registry, "put", lost)
        with pytest.raises(ConnectionError):
            ingest_governance_corpus_files(stores.governance, corpus)
    record = registry.get(TOOLING)
    assert record is not None
    stored = {int(meta["generation"]) for _, meta in stores.governance.chunks.iter_metadata({"doc_id": TOOLING})}
    (unregistered,) = stored - {record.generation}
    return unregistered


def test_a_fresh_ingestion_is_consistent(stores: Stores) -> None:
    report = audit_governance(stores.governance)

    assert report.ok and report.documents == 2 and not report.ingestion_running
    assert report.chunks == sum(r.chunk_count for r in stores.governance.registry.records().values())


def test_chunks_of_an_ingestion_stopped_before_its_flip_are_found_and_deleted_and_searches_never_saw_them(
    stores: Stores, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = crash_before_the_flip(stores, corpus, monkeypatch)
    assert not query_governance(stores.governance, "zanzibar toolchain", mode="lexical").results

    found = audit_governance(stores.governance)
    actions = repair_governance(stores.governance, found.findings)

    assert [(f.kind, f.doc_id, f.generation) for f in found.findings] == [
        (GovernanceFindingKind.ORPHAN_GENERATION, TOOLING, lost)
    ]
    assert found.findings[0].count > 0 and [a.ok for a in actions] == [True]
    assert stores.governance.chunks.ids({"doc_gen": f"{TOOLING}@{lost}"}) == []
    assert audit_governance(stores.governance).ok
    assert ingest_governance_corpus_files(stores.governance, corpus).changed == [FILES[0].name]
    assert query_governance(stores.governance, "zanzibar toolchain", mode="lexical").results[0].metadata.id == TOOLING


def test_a_record_whose_chunks_went_missing_is_re_chunked_by_the_next_ingestion_after_repair(
    stores: Stores, corpus: Path
) -> None:
    record = stores.governance.registry.get(TOOLING)
    assert record is not None
    stores.governance.chunks.delete_ids([governance_chunk_id(TOOLING, record.generation, 0)])

    found = audit_governance(stores.governance)
    actions = repair_governance(stores.governance, found.findings)
    rerun = ingest_governance_corpus_files(stores.governance, corpus)

    assert [(f.kind, f.doc_id, f.count) for f in found.findings] == [
        (GovernanceFindingKind.CHUNK_COUNT_MISMATCH, TOOLING, record.chunk_count - 1)
    ]
    assert [a.ok for a in actions] == [True]
    assert rerun.changed == [FILES[0].name] and rerun.unchanged == [FILES[1].name]
    assert audit_governance(stores.governance).ok


def test_while_an_ingestion_holds_the_lock_its_unregistered_chunks_are_not_findings_and_nothing_is_repaired(
    stores: Stores, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lost = crash_before_the_flip(stores, corpus, monkeypatch)
    before = audit_governance(stores.governance)
    monkeypatch.setattr(governance_audit, "REPAIR_LOCK_WAIT_S", 0.2)
    monkeypatch.setattr(governance_ingest, "INGEST_LOCK_WAIT_S", 0.2)
    running = stores.governance.registry.ingest_lock()
    assert running.acquire()
    try:
        during = audit_governance(stores.governance)
        refused = repair_governance(stores.governance, before.findings)
        with pytest.raises(IngestionInProgressError):
            ingest_governance_corpus_files(stores.governance, corpus)
    finally:
        running.release()

    assert [(f.kind, f.generation) for f in before.findings] == [(GovernanceFindingKind.ORPHAN_GENERATION, lost)]
    assert during.ingestion_running and during.ok, during.findings
    assert [(a.ok, a.outcome) for a in refused] == [(False, "a corpus ingestion is running: audit again when it ends")]
    assert stores.governance.chunks.ids({"doc_gen": f"{TOOLING}@{lost}"}) != []
    assert [f.generation for f in audit_governance(stores.governance).findings] == [lost]
