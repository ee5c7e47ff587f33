"""The tasks a server process keeps (``tools.tasks.store``): each its caller's, bounded per caller and in all,
kept while working and for ``TASK_TTL_SECONDS`` after it finished; a cancelled one stops its work at the next
progress report, never at ``done``."""

from __future__ import annotations

import pytest

from lib.config import load_settings
from lib.errors import OverloadedError, WorkCancelledError
from mcp_service.tools.tasks.store import TaskStore

HOUR = 3600


def store(**bounds: int) -> TaskStore:
    """A store with the settings as ``load_settings`` makes them (the task bounds by their override names)."""
    return TaskStore(load_settings(task_ttl_seconds=HOUR, **bounds).jobs)


def test_a_task_is_only_its_owners_and_its_id_is_not_guessable() -> None:
    tasks = store()
    one, two = tasks.create("key:full", "ingest_document"), tasks.create("key:full", "ingest_document")
    assert tasks.get("key:full", one.task_id) is one and tasks.get("sub:someone-else", one.task_id) is None
    assert len(one.task_id) == 32 and one.task_id != two.task_id


def test_a_caller_past_its_working_tasks_is_refused_and_may_start_again_once_one_ends() -> None:
    tasks = store(task_max_per_caller=2)
    first = tasks.create("key:full", "ingest_document")
    tasks.create("key:full", "ingest_document")
    with pytest.raises(OverloadedError, match="TASK_MAX_PER_CALLER"):
        tasks.create("key:full", "ingest_document")
    assert tasks.create("sub:other", "ingest_document").owner == "sub:other"
    first.finish("completed", result={"content": []})
    assert tasks.create("key:full", "ingest_document").status == "working"


def test_the_process_keeps_at_most_task_max_and_drops_none_to_make_room() -> None:
    tasks = store(task_max=2)
    kept = [tasks.create(f"key:{n}", "ingest_document") for n in range(2)]
    for task in kept:
        task.finish("completed", result={"content": []})
    with pytest.raises(OverloadedError, match="TASK_MAX"):
        tasks.create("key:2", "ingest_document")
    assert [tasks.get(t.owner, t.task_id) for t in kept] == kept


def test_a_finished_task_is_kept_its_ttl_after_it_finished_and_a_working_one_always() -> None:
    tasks = store()
    working, finished = tasks.create("key:a", "ingest_document"), tasks.create("key:a", "ingest_document")
    working.created -= 10 * HOUR  # started ten hours ago, still working
    finished.created -= 2 * HOUR  # worked two hours
    finished.finish("completed", result={"content": []})
    assert finished.ttl_ms >= (2 * HOUR + HOUR) * 1000  # readable an hour after it finished
    assert tasks.get("key:a", working.task_id) is working and tasks.get("key:a", finished.task_id) is finished
    assert finished.finished is not None
    finished.finished -= HOUR
    finished.created -= HOUR  # as if it had finished an hour and a bit ago
    assert tasks.get("key:a", finished.task_id) is None and len(tasks) == 1


def test_a_cancelled_task_stops_at_its_next_report_but_not_once_done() -> None:
    tasks = store()
    task = tasks.create("key:a", "ingest_document")
    task.progress("embed", 40.0)
    assert task.wire(detailed=True)["statusMessage"] == "embed 40%"
    task.cancel()
    task.progress("done", 100.0)  # past stopping: the work has stored
    with pytest.raises(WorkCancelledError):
        task.progress("store", 85.0)
    assert task.stopped_by_cancel and task.status == "working"
    task.finish("cancelled")
    wire = task.wire(detailed=True)
    assert wire["status"] == "cancelled" and "result" not in wire and "error" not in wire
