"""Every link in README.md and docs/**/*.md resolves: a relative file exists, and an ``#anchor`` names a heading of
its target as GitHub slugs it. Also the README stays a front door (at most 300 lines) naming the make targets
that exist. No services."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from deployments.docs.links import ROOT, Link, anchors, broken, links, markdown_files, slug

README_MAX_LINES = 300


def test_every_link_in_the_readme_and_docs_resolves() -> None:
    found = [link for path in markdown_files() for link in links(path)]
    assert len(found) > 50  # the README and docs/ link to each other throughout
    failures = [
        f"{link.source.relative_to(ROOT)}:{link.line}: ({link.target}) {why}" for link in found if (why := broken(link))
    ]
    assert failures == []


def test_the_readme_is_a_front_door() -> None:
    assert len((ROOT / "README.md").read_text().splitlines()) <= README_MAX_LINES


@pytest.mark.parametrize("target", ["demo", "test", "lint", "docs", "bench"])
def test_the_readme_names_each_habit_and_the_makefile_has_it(target: str) -> None:
    assert f"`make {target}`" in (ROOT / "README.md").read_text()
    assert re.search(rf"^{target}:", (ROOT / "Makefile").read_text(), re.MULTILINE)


@pytest.mark.parametrize(
    ("heading", "expected"),
    [
        ("Sections (`benchmarks/sections.py`)", "sections-benchmarkssectionspy"),
        ("REST API (`/api/v1`, spec 001)", "rest-api-apiv1-spec-001"),
        ("Time: how a date picks a revision", "time-how-a-date-picks-a-revision"),
        ("The data's way", "the-datas-way"),
        ("Redis failover (Sentinel)", "redis-failover-sentinel"),
    ],
)
def test_headings_slug_as_github_slugs_them(heading: str, expected: str) -> None:
    assert slug(heading) == expected


def test_a_broken_link_is_reported_and_code_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "other.md").write_text("# Other\n\n## Same\n\n## Same\n")
    page = tmp_path / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md#same-1) [here](#page) [gone](missing.md) [bad](other.md#nowhere) "
        "[web](https://example.org) `[code](nowhere.md)`\n\n```\n[fenced](nowhere.md)\n# not a heading\n```\n"
    )
    assert anchors((tmp_path / "other.md").read_text()) == {"other", "same", "same-1"}
    reasons = {link.target: broken(link) for link in links(page)}
    assert reasons == {
        "other.md#same-1": None,
        "#page": None,
        "missing.md": "no file missing.md",
        "other.md#nowhere": f"no heading #nowhere in {tmp_path / 'other.md'}",
    }
    assert broken(Link(page, 1, "page.md#not-a-heading")) == f"no heading #not-a-heading in {page}"
