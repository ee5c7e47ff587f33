"""``seed_policies``: spec 001 ITS-07 and PolicySeeder TS-01..TS-05: the bundled NPPF seed (with the real
December 2024 PDF), then the edge cases (a missing file, files outside the seed folder)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
import yaml
from prefect.artifacts import Artifact

from flows.seed import BUNDLED_SEED_DIR, SUMMARY_KEY, seed_policies
from lib.composition import Stores
from lib.errors import PathNotAllowedError
from lib.policies.models import RevisionStatus
from lib.policies.search import search_policy
from lib.policies.seeding import SeedAction, load_seed_config
from tests.flows.policy_pdfs import write_policy_pdf

HIGHWAYS = "When should development be refused on highways grounds?"
BUNDLED_SEED = BUNDLED_SEED_DIR / "seed.yaml"


def test_the_bundled_seed_file_holds_the_real_nppf_and_a_draft_at_an_obviously_hypothetical_date() -> None:
    config = load_seed_config(BUNDLED_SEED)
    (nppf,) = config.policies
    current, draft = nppf.revisions
    assert (nppf.source, current.revision_id, str(current.effective_from)) == ("NPPF", "rev_NPPF_2024_12", "2024-12-12")
    assert "draft" in draft.version_label and draft.effective_from.year == 2099
    for revision in nppf.revisions:
        assert (BUNDLED_SEED.parent / revision.file).read_bytes().startswith(b"%PDF-")
    assert "Open Government Licence" in (BUNDLED_SEED.parent / "ATTRIBUTION.md").read_text()


@pytest.fixture
def nppf_seed(inbox: Path) -> Path:
    """The bundled seed file's policy and revisions, with the real NPPF December 2024 PDF and a small
    generated stand-in for the 127-page draft (one real NPPF ingestion is enough for this suite)."""
    folder = inbox / "nppf-seed"
    folder.mkdir(parents=True)
    config = yaml.safe_load(BUNDLED_SEED.read_text())
    draft = config["policies"][0]["revisions"][1]
    shutil.copy(BUNDLED_SEED.parent / config["policies"][0]["revisions"][0]["file"], folder)
    write_policy_pdf(folder / draft["file"], edition="consultation draft")
    (folder / "seed.yaml").write_text(yaml.safe_dump(config))
    return folder / "seed.yaml"


def test_its07_seeding_ingests_both_nppf_revisions_and_a_second_run_changes_nothing_and_says_so(
    flow_stores: Stores, nppf_seed: Path
) -> None:
    first = seed_policies(config=str(nppf_seed))

    assert [(s.action, s.revision_id) for s in first.steps] == [
        (SeedAction.CREATED_POLICY, None),
        (SeedAction.INGESTED, "rev_NPPF_2024_12"),
        (SeedAction.INGESTED, "rev_NPPF_2099_01_DRAFT"),
    ]
    assert first.changed and "ingested 2 revisions" in first.message
    current, draft = (
        flow_stores.policies.registry.get_revision("NPPF", r) for r in ("rev_NPPF_2024_12", "rev_NPPF_2099_01_DRAFT")
    )
    assert (str(current.effective_from), str(current.effective_to), current.status, current.page_count) == (
        "2024-12-12",
        "2098-12-31",
        RevisionStatus.SUPERSEDED,
        82,
    )
    assert (str(draft.effective_from), draft.effective_to, draft.status) == ("2099-01-01", None, RevisionStatus.ACTIVE)
    chunks = flow_stores.policies.vectors.count()
    assert chunks == current.chunk_count + draft.chunk_count > 500

    second = seed_policies(config=str(nppf_seed))

    assert [s.action for s in second.steps] == [SeedAction.KEPT_POLICY, SeedAction.KEPT, SeedAction.KEPT]
    assert not second.changed and second.message.startswith("Nothing to do")
    assert (
        flow_stores.policies.vectors.count() == chunks
        and len(flow_stores.policies.registry.list_revisions("NPPF")) == 2
    )
    summary = Artifact.get(SUMMARY_KEY)
    assert summary is not None and "Nothing to do" in str(summary.data)

    mid_2025 = search_policy(flow_stores.policies, HIGHWAYS, effective_date="2025-06-01", n_results=3).results
    top = mid_2025[0]
    assert (top.version_label, top.section_ref, top.page_number) == ("December 2024", "Para 116", 33)
    assert {h.revision_id for h in mid_2025} == {"rev_NPPF_2024_12"}
    in_2099 = search_policy(flow_stores.policies, HIGHWAYS, effective_date="2099-06-01", n_results=3).results
    assert in_2099 and {h.revision_id for h in in_2099} == {"rev_NPPF_2099_01_DRAFT"}


def _seed_file(folder: Path, revisions: list[dict[str, object]]) -> Path:
    config = {
        "policies": [
            {
                "source": "LTN_1_20",
                "title": "Cycle Infrastructure Design",
                "category": "national_guidance",
                "revisions": revisions,
            }
        ]
    }
    path = folder / "seed.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def test_a_missing_file_is_a_warning_and_the_other_revisions_are_seeded(
    flow_stores: Stores, inbox: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = inbox / "seed"
    write_policy_pdf(folder / "ltn-2020.pdf", edition="July 2020")
    config = _seed_file(
        folder,
        [
            {
                "version_label": "July 2008",
                "effective_from": "2008-10-01",
                "effective_to": "2020-07-26",
                "file": "ltn-2008.pdf",
            },
            {"version_label": "July 2020", "effective_from": "2020-07-27", "file": "ltn-2020.pdf"},
        ],
    )

    with caplog.at_level(logging.WARNING):
        result = seed_policies(config=str(config))

    assert [s.action for s in result.steps] == [SeedAction.CREATED_POLICY, SeedAction.MISSING_FILE, SeedAction.INGESTED]
    assert "whose file is missing" in result.message
    assert any("seed.missing_file" in r.getMessage() and "ltn-2008.pdf" in r.getMessage() for r in caplog.records)
    assert [r.revision_id for r in flow_stores.policies.registry.list_revisions("LTN_1_20")] == ["rev_LTN_1_20_2020_07"]


def test_seed_files_must_stay_inside_the_seed_folder_and_the_seed_inside_the_allowed_roots(
    flow_stores: Stores, inbox: Path, tmp_path: Path
) -> None:
    write_policy_pdf(tmp_path / "elsewhere.pdf")
    config = _seed_file(inbox, [{"version_label": "x", "effective_from": "2020-07-27", "file": "../elsewhere.pdf"}])

    result = seed_policies(config=str(config))

    assert result.steps[-1].action == SeedAction.FAILED and "path_not_allowed" in result.steps[-1].detail
    outside = _seed_file(tmp_path, [])
    with pytest.raises(PathNotAllowedError):
        seed_policies(config=str(outside))
