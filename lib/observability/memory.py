"""What a running service's heap holds, on demand: for telling a leak from an allocator that keeps what was
freed.

``SIGUSR2`` logs one ``service.memory`` event: RSS, Python's live blocks (``sys.getallocatedblocks``) and the C
allocator's own figures (glibc ``mallinfo2``: bytes in use, bytes freed but still held, bytes mapped apart).
Python's blocks flat while ``malloc_free`` grows means fragmentation, not a leak. With
``POLICY_KB_TRACE_ALLOCATIONS=N`` (frames per allocation; off by default, it slows every allocation) the signal
also writes a ``tracemalloc`` snapshot under ``<data dir>/allocations/``; two snapshots compared
(``compare_snapshots``) name the lines whose allocations grew.
"""

from __future__ import annotations

import logging
import os
import signal
import sys
import time
import tracemalloc
from pathlib import Path
from types import FrameType

from lib.config import Settings
from lib.glibc_heap import malloc_figures

logger = logging.getLogger(__name__)

REPORT_SIGNAL = signal.SIGUSR2


def rss_bytes() -> int:
    """This process's resident set (``/proc/self/statm``), 0 where there is none."""
    try:
        resident_pages = int(Path("/proc/self/statm").read_text().split()[1])
    except (OSError, IndexError, ValueError):
        return 0
    return resident_pages * os.sysconf("SC_PAGE_SIZE")


def report(folder: Path | None = None) -> Path | None:
    """Log the ``service.memory`` event; with tracemalloc tracing, also write a snapshot into ``folder`` and
    return its path."""
    figures = {"rss": rss_bytes(), "python_blocks": sys.getallocatedblocks(), **malloc_figures()}
    path = None
    if tracemalloc.is_tracing() and folder is not None:
        traced, peak = tracemalloc.get_traced_memory()
        figures |= {"traced": traced, "traced_peak": peak}
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{os.getpid()}-{time.time_ns()}.tracemalloc"
        tracemalloc.take_snapshot().dump(str(path))
    logger.info("service.memory %s snapshot=%s", " ".join(f"{k}={v}" for k, v in figures.items()), path or "-")
    return path


def report_on_signal(settings: Settings) -> None:
    """From now on, ``SIGUSR2`` reports (``report``); with ``POLICY_KB_TRACE_ALLOCATIONS`` set, allocations are
    traced from now on and each report writes a snapshot into ``<data dir>/allocations``. Call from the main
    thread of the service's own process (``mcp_service.heap.claim_process``)."""
    folder = settings.paths.data_dir / "allocations"
    if settings.observability.trace_allocations:
        tracemalloc.start(settings.observability.trace_allocations)

    def on_signal(signum: int, frame: FrameType | None) -> None:
        try:
            report(folder)
        except Exception:
            logger.exception("service.memory_report_failed")

    signal.signal(REPORT_SIGNAL, on_signal)


def compare_snapshots(before: Path, after: Path, *, top: int = 15) -> list[tracemalloc.StatisticDiff]:
    """The ``top`` allocation sites (by traceback) whose traced bytes grew most from ``before`` to ``after``."""
    old, new = tracemalloc.Snapshot.load(str(before)), tracemalloc.Snapshot.load(str(after))
    return new.compare_to(old, "traceback")[:top]
