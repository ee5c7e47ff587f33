"""How pytest-xdist shares the suite between its workers (``--dist loadgroup``, see decision 0033).

xdist's own ``loadgroup`` keeps the tests of one ``xdist_group`` on one worker but hands out every other test
alone, so a module-scoped fixture (a service started, a corpus ingested) would be built on both workers.
Here a work unit is a test file, as with ``loadfile``, and every file of an ``xdist_group`` is one unit: the
whole local stack (``tests/stack``, its session fixture starting seven processes and ingesting the NPPF) is
built on one worker, once.
"""

from __future__ import annotations

import pytest
from xdist.scheduler import LoadGroupScheduling

GROUPS = {"tests/stack/": "stack"}
"""Folder (relative to the repository) -> the xdist group of every test in it."""


class FileGroupScheduling(LoadGroupScheduling):
    """``loadgroup`` whose ungrouped tests go out a file at a time (``loadfile``)."""

    def _split_scope(self, nodeid: str) -> str:
        group = super()._split_scope(nodeid)
        return group if group != nodeid else nodeid.split("::", 1)[0]


def mark_groups(items: list[pytest.Item]) -> None:
    """Put every test under a folder of ``GROUPS`` in that folder's xdist group."""
    for item in items:
        group = next((name for folder, name in GROUPS.items() if item.nodeid.startswith(folder)), None)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
