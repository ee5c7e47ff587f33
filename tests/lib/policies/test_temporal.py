"""Spec 001 EffectiveDateResolver TS-01..TS-08 and PolicyRegistry TS-10/TS-11, on a real redis-server."""

from __future__ import annotations

from datetime import date

import pytest

from lib.errors import InvalidDateError
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.policies.registry import PolicyRegistry
from lib.policies.resolver import EffectiveDateResolver
from lib.policies.temporal import REASON_BEFORE_FIRST, REASON_IN_GAP, REASON_NO_REVISIONS


def policy(registry: PolicyRegistry, source: str) -> None:
    registry.create_policy(PolicyCreate(source=source, title=source, category="national_guidance"))


def revision(
    registry: PolicyRegistry, source: str, rid: str, start: str, end: str | None = None, ingest: bool = True
) -> None:
    registry.create_revision(
        source, RevisionCreate(revision_id=rid, version_label=rid, effective_from=start, effective_to=end)
    )
    if ingest:
        registry.mark_ingested(source, rid, page_count=1, chunk_count=1, file_size_bytes=1, extraction_method="x")


@pytest.fixture
def ltn(registry: PolicyRegistry) -> PolicyRegistry:
    policy(registry, "LTN_1_20")
    return registry


def test_ts01_single_open_ended_revision_covers_a_later_date(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    revision(ltn, "LTN_1_20", "A", "2020-07-27")
    assert resolver.resolve_for_policy("LTN_1_20", "2024-01-01").revision.revision_id == "A"


def test_ts02_middle_date_resolves_to_the_middle_revision(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    revision(ltn, "LTN_1_20", "A", "2020-07-27", "2023-09-04")
    revision(ltn, "LTN_1_20", "B", "2023-09-05", "2024-12-11")
    revision(ltn, "LTN_1_20", "C", "2024-12-12")
    assert resolver.resolve_for_policy("LTN_1_20", "2024-03-15").revision.revision_id == "B"


def test_ts03_date_before_first_revision_resolves_to_none_with_reason(
    ltn: PolicyRegistry, resolver: EffectiveDateResolver
):
    revision(ltn, "LTN_1_20", "A", "2020-07-27")
    res = resolver.resolve_for_policy("LTN_1_20", "2019-01-01")
    assert res.revision is None and res.reason == REASON_BEFORE_FIRST


def test_ts04_effective_from_is_inclusive(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    revision(ltn, "LTN_1_20", "A", "2020-07-27")
    assert resolver.resolve_for_policy("LTN_1_20", "2020-07-27").revision.revision_id == "A"
    assert resolver.resolve_for_policy("LTN_1_20", "2020-07-26").revision is None


def test_ts05_effective_to_is_inclusive(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    revision(ltn, "LTN_1_20", "A", "2020-07-27", "2023-09-04")
    assert resolver.resolve_for_policy("LTN_1_20", "2023-09-04").revision.revision_id == "A"
    assert resolver.resolve_for_policy("LTN_1_20", "2023-09-05").reason == REASON_IN_GAP


def test_ts06_date_in_gap_resolves_to_none_with_reason(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    revision(ltn, "LTN_1_20", "A", "2020-01-01", "2020-06-30")
    revision(ltn, "LTN_1_20", "B", "2020-08-01")
    res = resolver.resolve_for_policy("LTN_1_20", "2020-07-15")
    assert res.revision is None and res.reason == REASON_IN_GAP


def test_ts07_snapshot_resolves_every_policy_for_a_date(registry: PolicyRegistry, resolver: EffectiveDateResolver):
    for source in ["BICESTER_LCWIP", "CHERWELL_LOCAL_PLAN", "LTN_1_20", "NPPF", "OCC_LTCP"]:
        policy(registry, source)
    revision(registry, "LTN_1_20", "rev_LTN_1_20_2020_07", "2020-07-27")
    revision(registry, "NPPF", "rev_NPPF_2021_07", "2021-07-20")
    revision(registry, "NPPF", "rev_NPPF_2023_09", "2023-09-05")
    revision(registry, "NPPF", "rev_NPPF_2024_12", "2024-12-12")
    revision(registry, "CHERWELL_LOCAL_PLAN", "rev_CLP", "2015-07-20")
    revision(registry, "OCC_LTCP", "rev_LTCP", "2022-07-12")
    revision(registry, "BICESTER_LCWIP", "rev_LCWIP", "2024-06-01")
    snapshot = {r.source: r for r in resolver.resolve_snapshot("2024-03-15")}
    assert {s: (r.revision.revision_id if r.revision else r.reason) for s, r in snapshot.items()} == {
        "BICESTER_LCWIP": REASON_BEFORE_FIRST,
        "CHERWELL_LOCAL_PLAN": "rev_CLP",
        "LTN_1_20": "rev_LTN_1_20_2020_07",
        "NPPF": "rev_NPPF_2023_09",
        "OCC_LTCP": "rev_LTCP",
    }
    assert resolver.get_revision_ids_for_date("2024-03-15") == {
        "CHERWELL_LOCAL_PLAN": "rev_CLP",
        "LTN_1_20": "rev_LTN_1_20_2020_07",
        "NPPF": "rev_NPPF_2023_09",
        "OCC_LTCP": "rev_LTCP",
    }


def test_ts08_policy_without_revisions_resolves_to_none(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    res = resolver.resolve_for_policy("LTN_1_20", "2024-01-01")
    assert res.revision is None and res.reason == REASON_NO_REVISIONS


def test_registry_ts10_get_effective_revision_for_2024_03_15_is_the_2023_revision(ltn: PolicyRegistry):
    revision(ltn, "LTN_1_20", "r2021", "2021-07-20")
    revision(ltn, "LTN_1_20", "r2023", "2023-09-05")
    revision(ltn, "LTN_1_20", "r2024", "2024-12-12")
    assert ltn.get_effective_revision("LTN_1_20", "2024-03-15").revision_id == "r2023"


def test_registry_ts11_no_revision_for_an_early_date(ltn: PolicyRegistry):
    revision(ltn, "LTN_1_20", "A", "2020-07-27")
    assert ltn.get_effective_revision("LTN_1_20", "2019-01-01") is None


def test_processing_revisions_are_never_resolved(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    revision(ltn, "LTN_1_20", "A", "2020-07-27")
    revision(ltn, "LTN_1_20", "B", "2025-01-01", ingest=False)
    assert resolver.resolve_for_policy("LTN_1_20", "2024-12-31").revision.revision_id == "A"
    assert resolver.resolve_for_policy("LTN_1_20", "2025-06-01").revision is None


def test_failed_revisions_are_skipped_and_their_dates_return_to_the_previous_revision(
    ltn: PolicyRegistry, resolver: EffectiveDateResolver
):
    revision(ltn, "LTN_1_20", "A", "2020-07-27")
    revision(ltn, "LTN_1_20", "B", "2025-01-01", ingest=False)
    ltn.mark_failed("LTN_1_20", "B", "no_content")
    assert resolver.resolve_for_policy("LTN_1_20", "2025-06-01").revision.revision_id == "A"


def test_an_invalid_date_is_refused_with_invalid_date(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    with pytest.raises(InvalidDateError) as err:
        resolver.resolve_for_policy("LTN_1_20", "2024-02-30")
    assert err.value.error_type == "invalid_date"


def test_resolution_echoes_the_date_it_answered_for(ltn: PolicyRegistry, resolver: EffectiveDateResolver):
    revision(ltn, "LTN_1_20", "A", "2020-07-27")
    assert resolver.resolve_for_policy("LTN_1_20", date(2021, 1, 1)).effective_date == date(2021, 1, 1)
