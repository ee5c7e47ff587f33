"""The work units xdist hands out: a test file each, and each folder of ``GROUPS`` whole."""

from __future__ import annotations

from tests.xdist_scheduling import GROUPS, FileGroupScheduling


def unit(nodeid: str) -> str:
    scheduler = object.__new__(FileGroupScheduling)  # ``_split_scope`` reads nothing of the scheduler's state
    return scheduler._split_scope(nodeid)


def test_a_file_is_one_unit_and_each_grouped_folder_is_one_unit_whatever_its_files() -> None:
    assert unit("tests/lib/test_config.py::test_a") == unit("tests/lib/test_config.py::test_b[x]")
    assert unit("tests/lib/test_config.py::test_a") != unit("tests/lib/test_paths.py::test_a")
    stack = {unit("tests/stack/test_stack_cli.py::test_a"), unit("tests/stack/test_stack_faults.py::test_b[redis]")}
    assert stack == {GROUPS["tests/stack/"]}
    governance = {unit("tests/lib/governance/test_catalog.py::t"), unit("tests/lib/governance/test_search.py::t")}
    assert governance == {GROUPS["tests/lib/governance/"]}
