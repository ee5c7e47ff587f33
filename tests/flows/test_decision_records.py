"""The project's own decision records (``docs/decisions``, MADR) as a governance corpus: ``policy-kb governance
ingest`` takes every record as an ADR in force from its front matter's date, and ``query_governance`` answers
why there is a search lane from the search lane's record."""

from __future__ import annotations

import uuid

import pytest
from typer.testing import CliRunner

from deployments.cli import app
from deployments.cli.service import DECISION_QUESTION, DECISIONS
from lib.composition import open_stores
from lib.config import Settings
from lib.governance.parsing import parse_document
from lib.governance.reads import list_governance_documents
from lib.governance.search import query_governance

SEARCH_LANE = "0003-search-lane"
MADR_HEADINGS = {"Context and Problem Statement", "Considered Options", "Decision Outcome", "Consequences"}


def test_every_decision_record_is_a_dated_madr_file_listed_in_the_index() -> None:
    index = (DECISIONS / "README.md").read_text()
    records = sorted(DECISIONS.glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert records
    for path in records:
        record = parse_document(path, path.read_text())
        headings = {section.heading.rsplit(" > ", 1)[-1] for section in record.sections}
        assert headings >= MADR_HEADINGS, path.name
        assert (record.id, record.type) == (path.stem, "adr")
        assert record.status in {"proposed", "accepted", "deprecated", "superseded", "rejected"}, path.name
        assert record.created is not None, path.name
        assert f"]({path.name})" in index, path.name


@pytest.fixture
def governance_settings(flow_settings: Settings, redis_client: object, monkeypatch: pytest.MonkeyPatch) -> Settings:
    """A governance collection of the test's own, and the test's stores as an operator's shell names them."""
    settings = flow_settings.replace(governance_collection=f"gov_{uuid.uuid4().hex[:12]}")
    env = {
        "REDIS_URL": str(settings.redis.url),
        "POLICY_KB_DATA_DIR": str(settings.paths.data_dir),
        "CHROMA_PERSIST_DIR": str(settings.chroma.persist_dir),
        "CHROMA_GOVERNANCE_COLLECTION": settings.chroma.governance_collection,
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    return settings


def test_the_decision_records_are_adrs_in_force_from_their_dates_and_answer_why_there_is_a_search_lane(
    governance_settings: Settings,
) -> None:
    records = sorted(path.stem for path in DECISIONS.glob("[0-9][0-9][0-9][0-9]-*.md"))
    assert SEARCH_LANE in records

    result = CliRunner().invoke(app, ["governance", "ingest", str(DECISIONS)])
    assert result.exit_code == 0, result.output
    assert f"{len(records) + 1} added, 0 changed, 0 unchanged, 0 removed, 0 failed" in result.output  # + README.md

    stores = open_stores(governance_settings).governance
    documents = {doc.id: doc for doc in list_governance_documents(stores)}
    assert {doc_id for doc_id, doc in documents.items() if doc.type == "adr"} == set(records)
    replaced = {old for doc in documents.values() for old in doc.replaces}
    assert "0010-single-exchange-lane" in replaced  # decision 0048 replaces it
    assert {doc_id: documents[doc_id].status for doc_id in records} == {
        doc_id: "superseded" if doc_id in replaced else "accepted" for doc_id in records
    }

    answer = query_governance(stores, DECISION_QUESTION)
    top = answer.results[0].metadata
    assert (top.id, top.type, top.file_path) == (SEARCH_LANE, "adr", f"{SEARCH_LANE}.md")
    assert top.created == "2026-11-23"

    before = query_governance(stores, DECISION_QUESTION, as_of="2026-11-22", top_k=20)
    assert SEARCH_LANE not in {hit.metadata.id for hit in before.results}
