"""The ``policy-kb`` commands that run flows, end to end in this process with settings from the environment
(as an operator's shell has them)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from prefect.server.api.server import SubprocessASGIServer
from prefect.settings import PREFECT_API_URL, temporary_settings
from typer.testing import CliRunner

from deployments.cli import app
from lib.composition import Stores, open_stores
from lib.config import Settings
from tests.flows.policy_pdfs import write_policy_pdf


@pytest.fixture
def cli_env(flow_settings: Settings, redis_client: object, monkeypatch: pytest.MonkeyPatch) -> Stores:
    """The test's stores as environment variables, and a knowledge base over the same stores for checks."""
    env = {
        "REDIS_URL": str(flow_settings.redis.url),
        "POLICY_KB_DATA_DIR": str(flow_settings.paths.data_dir),
        "CHROMA_PERSIST_DIR": str(flow_settings.chroma.persist_dir),
        "CHROMA_POLICY_COLLECTION": flow_settings.chroma.policy_collection,
        "OBJECT_STORE_URL": str(flow_settings.objects.url),
        "ALLOWED_FILE_ROOTS": str(flow_settings.files.allowed_roots[0]),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    return open_stores(flow_settings)


def run(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(app, ["-v", *args])
    assert result.exit_code == code, result.output
    return result.output


def test_ingest_search_reindex_audit_and_delete_from_the_command_line(cli_env: Stores, tmp_path: Path) -> None:
    first = write_policy_pdf(tmp_path / "ltn-2020.pdf", edition="July 2020")
    second = write_policy_pdf(tmp_path / "ltn-2026.pdf", edition="2026 update")

    out = run(
        "ingest",
        "LTN_1_20",
        str(first),
        "--label",
        "July 2020",
        "--from",
        "2020-07-27",
        "--title",
        "Cycle Infrastructure Design",
        "--category",
        "national_guidance",
    )
    assert "rev_LTN_1_20_2020_07: registered, active, 6 chunks" in out
    assert "read: 0 policies, 4 paragraphs, 9% of text by chapter/page" in out
    out = run("ingest", "LTN_1_20", str(second), "--label", "2026 update", "--from", "2026-01-01")
    assert "superseded rev_LTN_1_20_2020_07" in out

    out = run("revisions", "LTN_1_20")
    assert "2020-07-27 → 2025-12-31 superseded" in out and "2026-01-01 → in force   active" in out
    out = run("search", "cycle lanes on busy roads", "--date", "2021-01-01", "-n", "1")
    assert "LTN_1_20 · July 2020 · Para 2 · PDF page 1" in out  # the test PDF prints no page numbers
    assert "6 chunks (6 before, 0 stale removed)" in run("reindex", "LTN_1_20", "rev_LTN_1_20_2020_07")
    assert "consistent" in run("audit")

    assert "6 chunks, file deleted" in run("delete", "LTN_1_20", "rev_LTN_1_20_2026_01")
    out = run("delete", "LTN_1_20", "rev_LTN_1_20_2020_07", code=2)
    assert "cannot_delete_sole_revision" in out


def test_audit_exits_1_while_findings_remain_and_repair_clears_them(cli_env: Stores, tmp_path: Path) -> None:
    pdf = write_policy_pdf(tmp_path / "nppf.pdf", edition="2024")
    run("ingest", "NPPF", str(pdf), "--label", "2024", "--from", "2024-12-12", "--title", "NPPF")
    ids = cli_env.policies.vectors.revision_chunk_ids("NPPF", "rev_NPPF_2024_12")
    cli_env.policies.vectors.collection.update(ids=ids, metadatas=[{"version_label": "wrong"}] * len(ids))

    assert "stale_metadata" in run("audit", code=1)
    out = run("audit", "--repair")
    assert "repaired" in out and "consistent" in out
    assert {m["version_label"] for _, m in cli_env.policies.vectors.iter_metadata()} == {"2024"}


def test_seed_prints_each_step_and_says_when_there_was_nothing_to_do(cli_env: Stores, flow_settings: Settings) -> None:
    folder = flow_settings.files.allowed_roots[0] / "seed"
    write_policy_pdf(folder / "lp.pdf", edition="2015")
    revision = {"version_label": "2015", "effective_from": "2015-07-20", "file": "lp.pdf"}
    config = {
        "policies": [{"source": "LOCAL_PLAN", "title": "Local Plan", "category": "local_plan", "revisions": [revision]}]
    }
    (folder / "seed.yaml").write_text(yaml.safe_dump(config))

    out = run("seed", "--config", str(folder / "seed.yaml"))
    assert "ingested        LOCAL_PLAN rev_LOCAL_PLAN_2015_07 (6 chunks)" in out
    assert "Nothing to do" in run("seed", "--config", str(folder / "seed.yaml"))


def test_seed_runs_without_prefect_when_its_local_api_will_not_start(
    cli_env: Stores, flow_settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 46: under load Prefect's local API missed its start-up limit and the seed failed; now the same
    seeding runs without Prefect, and the revision ends active."""
    folder = flow_settings.files.allowed_roots[0] / "seed"
    write_policy_pdf(folder / "lp.pdf", edition="2015")
    revision = {"version_label": "2015", "effective_from": "2015-07-20", "file": "lp.pdf"}
    config = {
        "policies": [{"source": "LOCAL_PLAN", "title": "Local Plan", "category": "local_plan", "revisions": [revision]}]
    }
    (folder / "seed.yaml").write_text(yaml.safe_dump(config))
    monkeypatch.setenv("LOCAL_API_START_TIMEOUT_SECONDS", "0.001")  # no server can start in that time
    running = SubprocessASGIServer._instances.pop(None, None)
    try:
        with temporary_settings(restore_defaults={PREFECT_API_URL}):  # the embedded default: no API URL
            out = run("seed", "--config", str(folder / "seed.yaml"))
        left = SubprocessASGIServer._instances.get(None)
    finally:
        if running is not None:
            SubprocessASGIServer._instances[None] = running
    assert "seeding without Prefect" in out
    assert "ingested        LOCAL_PLAN rev_LOCAL_PLAN_2015_07 (6 chunks)" in out
    assert cli_env.policies.registry.get_revision("LOCAL_PLAN", "rev_LOCAL_PLAN_2015_07").status.value == "active"
    assert left is None or left.server_process is None, "no server that missed its start is left"


def test_a_command_whose_local_api_will_not_start_stops_before_changing_anything(
    cli_env: Stores, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pdf = write_policy_pdf(tmp_path / "ltn.pdf", edition="July 2020")
    monkeypatch.setenv("LOCAL_API_START_TIMEOUT_SECONDS", "0.001")
    running = SubprocessASGIServer._instances.pop(None, None)
    try:
        with temporary_settings(restore_defaults={PREFECT_API_URL}):
            out = run(
                "ingest",
                "LTN_1_20",
                str(pdf),
                "--label",
                "July 2020",
                "--from",
                "2020-07-27",
                "--title",
                "Cycle Infrastructure Design",
                code=2,
            )
    finally:
        if running is not None:
            SubprocessASGIServer._instances[None] = running
    assert "local API did not answer" in out and "nothing was changed" in out
    assert not cli_env.policies.registry.policy_exists("LTN_1_20")
