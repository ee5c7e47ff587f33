"""query_governance over the real fixture corpus: in force today by default, as_of another day, include_inactive,
doc_types, both legs filtered before ranking, the chain links on every hit, and its errors."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from lib.composition import Stores
from lib.errors import DocumentNotFoundError, IndexNotBuiltError, InvalidArgumentError, InvalidDateError
from lib.governance.models import CorpusIngestReport
from lib.governance.reads import get_governance_document, governance_index_state, list_governance_documents
from lib.governance.search import PER_DOCUMENT, query_governance
from lib.stores.embeddings import Embedder
from tests.lib.governance.conftest import stores_with_governance

Corpus = tuple[Stores, CorpusIngestReport]
MANYLINUX = "portable linux wheels platform tag manylinux"
SCRIPTS = "declare dependencies of a single-file Python script"


def ids(stores: Stores, question: str, **options: object) -> list[str]:
    return [hit.metadata.id for hit in query_governance(stores.governance, question, top_k=20, **options).results]  # type: ignore[arg-type]


def test_the_fixture_corpus_ingests_every_file(corpus_kb: Corpus) -> None:
    _, report = corpus_kb
    assert len(report.added) == 10 and not report.failed and report.chunks_written > 100


def test_by_default_only_documents_in_force_today_are_searched(corpus_kb: Corpus) -> None:
    stores, _ = corpus_kb
    for mode in ("hybrid", "dense", "lexical"):
        found = ids(stores, MANYLINUX, mode=mode)
        assert "PEP-0600" in found
        assert "PEP-0513" not in found, mode
        assert not {"PEP-0722", "PEP-0003", "PEP-0220"} & set(found)


def test_as_of_a_day_before_the_successor_finds_the_superseded_document(corpus_kb: Corpus) -> None:
    stores, _ = corpus_kb
    answer = query_governance(stores.governance, MANYLINUX, as_of="2017-06-01", top_k=5, per_document=None)
    assert answer.as_of == "2017-06-01"
    assert {hit.metadata.id for hit in answer.results} == {"PEP-0513"}
    hit = answer.results[0]
    assert (hit.metadata.status, hit.metadata.superseded_by, hit.metadata.created) == (
        "Superseded",
        ["PEP-0600"],
        "2016-01-19",
    )
    assert "PEP-0513" not in ids(stores, MANYLINUX, as_of="2019-05-03")
    assert "PEP-0513" in ids(stores, MANYLINUX, as_of="2019-05-02")


def test_include_inactive_searches_rejected_and_superseded_documents_too(corpus_kb: Corpus) -> None:
    stores, _ = corpus_kb
    assert "PEP-0722" not in ids(stores, SCRIPTS)
    assert "PEP-0722" in ids(stores, SCRIPTS, include_inactive=True)
    assert "PEP-0513" in ids(stores, MANYLINUX, include_inactive=True)
    hit = next(h for h in query_governance(stores.governance, SCRIPTS, top_k=20).results if h.metadata.id == "PEP-0723")
    assert hit.metadata.replaces == ["PEP-0722"] and hit.metadata.heading


def test_before_the_successor_existed_neither_chain_member_is_in_force_when_the_first_was_rejected(
    corpus_kb: Corpus,
) -> None:
    stores, _ = corpus_kb
    assert not {"PEP-0722", "PEP-0723"} & set(ids(stores, SCRIPTS, as_of="2023-08-03"))


def test_doc_types_filter_both_legs_whatever_the_spelling(corpus_kb: Corpus) -> None:
    stores, _ = corpus_kb
    for mode in ("dense", "lexical", "hybrid"):
        answer = query_governance(
            stores.governance, "YAML front matter metadata", doc_types=["ADR"], mode=mode, top_k=20
        )
        assert answer.results and {h.metadata.type for h in answer.results} == {"adr"}
    tracks = query_governance(
        stores.governance, MANYLINUX, doc_types=["standards-track"], include_inactive=True, top_k=20
    )
    assert {h.metadata.id for h in tracks.results} <= {"PEP-0600", "PEP-0722", "PEP-0723"}


def test_a_query_naming_a_pep_finds_it_by_its_label(corpus_kb: Corpus) -> None:
    stores, _ = corpus_kb
    answer = query_governance(stores.governance, "PEP 723", mode="lexical", top_k=3)
    assert {h.metadata.id for h in answer.results} == {"PEP-0723"}
    assert all(0.0 <= h.score <= 1.0 and h.lexical_score is not None for h in answer.results)


@pytest.mark.parametrize("mode", ["hybrid", "dense", "lexical"])
def test_a_top_k_holds_at_most_per_document_chunks_of_one_document(corpus_kb: Corpus, mode: str) -> None:
    """Without the limit PEP 723's many sections fill the whole top 10; with it the answering PEP still
    ranks first and the other documents in force get the rest, none with more than ``PER_DOCUMENT``."""
    stores, _ = corpus_kb
    question = "single-file script dependencies"
    unlimited = ids(stores, question, mode=mode, per_document=None)[:10]
    assert unlimited == ["PEP-0723"] * 10
    limited = [hit.metadata.id for hit in query_governance(stores.governance, question, top_k=10, mode=mode).results]
    assert limited[0] == "PEP-0723" and limited.count("PEP-0723") == PER_DOCUMENT
    assert max(Counter(limited).values()) <= PER_DOCUMENT and len(set(limited)) >= 10 // PER_DOCUMENT


@pytest.mark.parametrize(
    ("options", "error"),
    [
        ({"top_k": 0}, InvalidArgumentError),
        ({"top_k": 21}, InvalidArgumentError),
        ({"as_of": "2024/01/01"}, InvalidDateError),
        ({"mode": "fuzzy"}, InvalidArgumentError),
    ],
)
def test_bad_arguments_are_refused(corpus_kb: Corpus, options: dict[str, object], error: type[Exception]) -> None:
    with pytest.raises(error):
        query_governance(corpus_kb[0], "anything", **options)  # type: ignore[arg-type]


def test_an_empty_index_says_which_command_builds_it(
    redis_url: str, chroma_dir: Path, embedder: Embedder, tmp_path: Path
) -> None:
    stores = stores_with_governance(redis_url, tmp_path, chroma_dir, embedder)
    with pytest.raises(IndexNotBuiltError, match="policy-kb governance ingest PATH"):
        query_governance(stores.governance, "anything")
    assert not governance_index_state(stores.governance).built


def test_documents_are_read_whole_listed_and_counted(corpus_kb: Corpus) -> None:
    stores, report = corpus_kb
    doc = get_governance_document(stores.governance, "PEP 600")
    assert doc.id == "PEP-0600" and doc.replaces == ["PEP-0513", "PEP-0571", "PEP-0599"]
    assert "manylinux" in doc.text and doc.chunk_count > 1
    with pytest.raises(DocumentNotFoundError):
        get_governance_document(stores.governance, "PEP 9999")
    rejected = list_governance_documents(stores.governance, status="rejected")
    assert [d.id for d in rejected] == ["PEP-0220", "PEP-0722"]
    assert [d.id for d in list_governance_documents(stores.governance, doc_types=["Process"])] == ["PEP-0003"]
    state = governance_index_state(stores.governance)
    assert state.built and state.documents == 10 and state.chunks == report.chunks_written
    assert state.last_updated is not None
