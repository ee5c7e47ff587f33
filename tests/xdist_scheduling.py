"""How pytest-xdist shares the suite between its workers (``--dist loadfile``, see decision 0033).

A work unit is a test file, as with xdist's ``loadfile``, so a module-scoped fixture (a service started, a
corpus ingested) is built once, on one worker; and every file under a folder of ``GROUPS`` is one unit, so the
whole local stack (``tests/stack``: its session fixture starts seven processes and ingests the NPPF) is built
on one worker, once, and two stacks never run at once; likewise the files sharing ``corpus_kb``. The groups are
chosen here by path, not with xdist's ``xdist_group`` mark: under pytest 9.2, xdist 3.8's ``loadgroup`` no
longer tags a test's id with its group (it sets ``item._nodeid``, which pytest 9 no longer reads), so marked
tests were scattered like any other.
"""

from __future__ import annotations

from xdist.scheduler import LoadFileScheduling

GROUPS = {
    "tests/stack/": "tests/stack (one local stack per session)",
    # ``corpus_kb`` (session) keeps its registry in Redis DB 0, which other files' ``redis_client`` flushes: its
    # files run together, in their order, as in one process (split, test_catalog found it emptied).
    "tests/lib/governance/": "tests/lib/governance (one corpus_kb)",
}
"""Folder (relative to the repository) -> the one work unit of every test under it."""


class FileGroupScheduling(LoadFileScheduling):
    """``loadfile`` in which each folder of ``GROUPS`` is one unit."""

    def _split_scope(self, nodeid: str) -> str:
        grouped = (unit for folder, unit in GROUPS.items() if nodeid.startswith(folder))
        return next(grouped, super()._split_scope(nodeid))
