"""``policy-kb delete-document``: the CLI removes an application document from every store, configured from
the environment as an operator's shell would be."""

from __future__ import annotations

import uuid

import pytest
import redis
from typer.testing import CliRunner

from deployments.cli import app
from lib.composition import Stores, open_stores
from lib.config import Settings
from lib.documents.ingest import ingest_document
from lib.documents.models import IngestSuccess
from lib.documents.reads import list_ingested_documents
from tests.fixtures_paths import TABLE_PDF
from tests.lib.documents.document_support import REF, assert_nothing_stored, put_in_inbox


@pytest.fixture
def env_kb(settings: Settings, redis_client: redis.Redis, monkeypatch: pytest.MonkeyPatch) -> Stores:
    """The test's stores, named in the environment the CLI reads."""
    collection = f"cli_docs_{uuid.uuid4().hex[:12]}"
    environment = {
        "REDIS_URL": str(settings.redis.url),
        "POLICY_KB_DATA_DIR": str(settings.paths.data_dir),
        "CHROMA_PERSIST_DIR": str(settings.chroma.persist_dir),
        "OBJECT_STORE_URL": str(settings.objects.url),
        "ALLOWED_FILE_ROOTS": str(settings.files.allowed_roots[0]),
        "CHROMA_DOCUMENT_COLLECTION": collection,
    }
    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    settings.files.allowed_roots[0].mkdir(parents=True, exist_ok=True)
    return open_stores(settings.replace(document_collection=collection))


def test_delete_document_command_removes_it_from_every_store(env_kb: Stores, redis_client: redis.Redis) -> None:
    result = ingest_document(env_kb.documents, put_in_inbox(env_kb, TABLE_PDF), REF)
    assert isinstance(result, IngestSuccess)

    run = CliRunner().invoke(app, ["delete-document", result.document_id])

    assert run.exit_code == 0, run.output
    assert f"deleted {result.document_id} of {REF}: {result.chunks_created} chunks, file removed" in run.output
    assert list_ingested_documents(env_kb.documents, REF).document_count == 0
    assert_nothing_stored(env_kb, redis_client)


def test_delete_document_command_reports_an_unknown_id_as_document_not_found(env_kb: Stores) -> None:
    run = CliRunner().invoke(app, ["delete-document", "25_01178_REM_000000"])
    assert run.exit_code == 2
    assert "error (document_not_found): Document not found: 25_01178_REM_000000" in run.output
