"""The ``ingest_governance_corpus`` flow and ``policy-kb governance ingest``: one run per outcome, its table
artifact, and the command's summary and exit code."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path
from typing import cast

import pytest
from prefect.artifacts import Artifact
from typer.testing import CliRunner

from deployments.cli import app
from flows.governance import ARTIFACT_KEY, ingest_governance_corpus
from lib.composition import Stores, open_stores
from lib.config import Settings
from lib.governance.reads import governance_index_state
from lib.governance.search import query_governance
from tests.lib.governance.conftest import MADR, PEPS

FILES = [MADR / "0003-provide-own-madr-tools.md", PEPS / "pep-0003.rst", PEPS / "pep-0220.rst"]


@pytest.fixture
def governance_settings(flow_settings: Settings) -> Settings:
    return flow_settings.replace(governance_collection=f"gov_{uuid.uuid4().hex[:12]}")


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    folder = tmp_path / "governance"
    folder.mkdir()
    for file in FILES:
        shutil.copy(file, folder / file.name)
    return folder


def artifact_rows() -> list[dict[str, str]]:
    artifact = cast("Artifact | None", Artifact.get(ARTIFACT_KEY))
    assert artifact is not None and artifact.type == "table"
    data = artifact.data if isinstance(artifact.data, str) else json.dumps(artifact.data)
    return cast("list[dict[str, str]]", json.loads(data))


def test_the_flow_lists_added_changed_removed_and_failed_files_in_its_artifact(
    governance_settings: Settings, redis_client: object, corpus: Path
) -> None:
    from flows.common import bound_stores

    stores = open_stores(governance_settings)
    with bound_stores(stores):
        first = ingest_governance_corpus(str(corpus))
        assert len(first.added) == 3
        assert {(r["outcome"], r["file"]) for r in artifact_rows()} == {("added", f.name) for f in FILES}

        (corpus / "pep-0220.rst").unlink()
        (corpus / "0003-provide-own-madr-tools.md").write_text("# Own tooling\n\nWe write our own MADR tools.\n")
        (corpus / "unreadable.md").write_bytes(b"\xff\xfe not utf-8")
        second = ingest_governance_corpus(str(corpus))
    rows = {(r["outcome"], r["file"]) for r in artifact_rows()}
    assert rows == {
        ("changed", "0003-provide-own-madr-tools.md"),
        ("removed", "pep-0220.rst"),
        ("failed", "unreadable.md"),
    }
    assert second.unchanged == ["pep-0003.rst"]
    assert (
        query_governance(stores.governance, "own MADR tools", include_inactive=True).results[0].metadata.title
        == "Own tooling"
    )


def test_the_command_ingests_a_folder_and_exits_1_when_a_file_failed(
    governance_settings: Settings, redis_client: object, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = {
        "REDIS_URL": str(governance_settings.redis.url),
        "POLICY_KB_DATA_DIR": str(governance_settings.paths.data_dir),
        "CHROMA_PERSIST_DIR": str(governance_settings.chroma.persist_dir),
        "CHROMA_POLICY_COLLECTION": governance_settings.chroma.policy_collection,
        "CHROMA_GOVERNANCE_COLLECTION": governance_settings.chroma.governance_collection,
        "OBJECT_STORE_URL": str(governance_settings.objects.url),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)

    result = CliRunner().invoke(app, ["governance", "ingest", str(corpus)])
    assert result.exit_code == 0, result.output
    assert "3 added, 0 changed, 0 unchanged, 0 removed, 0 failed" in result.output
    stores: Stores = open_stores(governance_settings)
    assert governance_index_state(stores.governance).documents == 3

    (corpus / "empty.md").write_text("")
    result = CliRunner().invoke(app, ["governance", "ingest", str(corpus)])
    assert result.exit_code == 1
    assert "0 added, 0 changed, 3 unchanged, 0 removed, 1 failed" in result.output
    assert "failed empty.md" in result.output
