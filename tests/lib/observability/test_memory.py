"""``lib.observability.memory``: what the heap holds, reported on ``SIGUSR2``, and snapshots that name the line
whose allocations grew."""

from __future__ import annotations

import logging
import os
import signal
import tracemalloc
from collections.abc import Iterator
from pathlib import Path

import pytest

from lib.config import Settings
from lib.observability import memory


@pytest.fixture
def restored_signal() -> Iterator[None]:
    before = signal.getsignal(memory.REPORT_SIGNAL)
    yield
    signal.signal(memory.REPORT_SIGNAL, before)
    tracemalloc.stop()


def _figures(caplog: pytest.LogCaptureFixture) -> dict[str, str]:
    [line] = [r.getMessage() for r in caplog.records if r.getMessage().startswith("service.memory ")]
    return dict(part.split("=", 1) for part in line.split()[1:])


def test_a_report_gives_rss_python_blocks_and_the_c_allocators_figures(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger=memory.__name__):
        assert memory.report(None) is None  # not tracing: no snapshot
    figures = _figures(caplog)
    assert int(figures["rss"]) > 10 * 1024 * 1024 and int(figures["python_blocks"]) > 10_000
    assert int(figures["malloc_used"]) > 0 and "malloc_free" in figures, "glibc's mallinfo2 on Debian"
    assert figures["snapshot"] == "-"


def test_sigusr2_writes_a_snapshot_and_two_name_the_line_that_grew(
    settings: Settings, restored_signal: None, caplog: pytest.LogCaptureFixture
) -> None:
    traced = settings.model_copy(
        update={"observability": settings.observability.model_copy(update={"trace_allocations": 4})}
    )
    memory.report_on_signal(traced)
    folder = traced.paths.data_dir / "allocations"
    with caplog.at_level(logging.INFO, logger=memory.__name__):
        os.kill(os.getpid(), memory.REPORT_SIGNAL)  # handled in this (the main) thread before kill returns
        held = [bytearray(1024) for _ in range(2_000)]  # the growth: about 2 MB on the next line
        os.kill(os.getpid(), memory.REPORT_SIGNAL)
    before, after = sorted(folder.glob("*.tracemalloc"))  # named <pid>-<time in ns>
    top = memory.compare_snapshots(Path(before), Path(after), top=1)[0]
    assert top.size_diff >= 2_000 * 1024 and top.traceback[-1].filename == __file__  # the most recent frame
    assert len(held) == 2_000
    assert int(_figures_last(caplog)["traced"]) > 2_000 * 1024


def _figures_last(caplog: pytest.LogCaptureFixture) -> dict[str, str]:
    lines = [r.getMessage() for r in caplog.records if r.getMessage().startswith("service.memory ")]
    assert len(lines) == 2
    return dict(part.split("=", 1) for part in lines[-1].split()[1:])
