"""Spec 001 PolicyModels TS-01..TS-07, plus the strict date parsing every adapter relies on."""

from __future__ import annotations

from datetime import date

import pytest
from pydantic import ValidationError

from lib.dates import IN_FORCE_INT, epoch_days, parse_date, to_int
from lib.errors import InvalidDateError
from lib.policies.models import PolicyCategory, PolicyCreate, RevisionCreate, default_revision_id


def test_ts01_valid_source_slug_passes() -> None:
    assert PolicyCreate(source="LTN_1_20", title="LTN 1/20", category="national_guidance").source == "LTN_1_20"


@pytest.mark.parametrize("source", ["invalid-format", "nppf", "_NPPF", "NPPF_", "NPPF__X", "1NPPF", "NP PF", ""])
def test_ts02_malformed_source_slug_fails_with_pattern_error(source: str) -> None:
    with pytest.raises(ValidationError, match="pattern"):
        PolicyCreate(source=source, title="x", category="national_policy")


def test_ts03_range_with_from_before_to_passes() -> None:
    rev = RevisionCreate(version_label="Sep 2023", effective_from="2023-09-05", effective_to="2024-12-11")
    assert (rev.effective_from, rev.effective_to) == (date(2023, 9, 5), date(2024, 12, 11))


def test_ts04_range_ending_before_it_starts_fails() -> None:
    with pytest.raises(ValidationError, match="effective_to must be on or after effective_from"):
        RevisionCreate(version_label="x", effective_from="2024-12-11", effective_to="2023-09-05")


def test_single_day_range_is_valid() -> None:
    assert RevisionCreate(version_label="x", effective_from="2024-01-01", effective_to="2024-01-01")


def test_ts05_missing_effective_to_means_in_force() -> None:
    assert RevisionCreate(version_label="Dec 2024", effective_from="2024-12-12").effective_to is None


@pytest.mark.parametrize("category", [c.value for c in PolicyCategory])
def test_ts06_every_category_of_the_specs_including_supplementary_is_accepted(category: str) -> None:
    assert PolicyCreate(source="X", title="x", category=category).category == category


def test_ts07_unknown_category_fails() -> None:
    with pytest.raises(ValidationError):
        PolicyCreate(source="X", title="x", category="invalid")


@pytest.mark.parametrize("text", ["2024-13-01", "2024-02-30", "15/03/2024", "2024-03-15T00:00", "20240315", "", "x"])
def test_parse_date_refuses_anything_but_a_real_iso_calendar_date(text: str) -> None:
    with pytest.raises(InvalidDateError):
        parse_date(text)


def test_revision_create_reports_a_malformed_date_as_a_validation_error() -> None:
    with pytest.raises(ValidationError, match="ISO date"):
        RevisionCreate(version_label="x", effective_from="15/03/2024")


def test_dates_become_yyyymmdd_integers_and_open_end_becomes_the_in_force_sentinel() -> None:
    assert to_int(date(2024, 12, 12)) == 20241212
    assert to_int(None) == IN_FORCE_INT == 99991231


def test_sorted_set_scores_are_days_since_the_unix_epoch() -> None:
    assert epoch_days(date(1970, 1, 2)) == 1
    assert epoch_days(date(2024, 12, 12)) == 20069


def test_default_revision_id_follows_rev_source_year_month() -> None:
    assert default_revision_id("NPPF", date(2024, 12, 12)) == "rev_NPPF_2024_12"
