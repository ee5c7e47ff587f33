"""One BLAS thread for the whole process, pinned once from the main thread (``open_kb`` does it).

A query's dense product (26k x 384 float32 for the whole governance folder) is memory-bound: OpenBLAS
splitting it over every core gains nothing on 2 cores and loses a lot when they are busy, and concurrent
queries each asking for every core only queue behind each other. Worse, OpenBLAS's helper threads spin
between products: a stream of queries on 2 BLAS threads kept a second core at 100% for nothing.

Why pinned once for the process rather than limited around each product: numpy's OpenBLAS (0.3.31 here)
ignores a thread count set from any thread but the main one, and searches run on worker threads (the search
lane, Prefect's task threads). A limit taken per query there left every product on 2 threads: one query
stream used 1.97 cores of CPU for 1 core's work (measured, issue 12). A limit set from the main thread
applies to every thread, those started before it included. Nothing in these processes gains from more BLAS
threads: the encoders run on onnxruntime and torch, which have their own thread pools.
"""

from __future__ import annotations

import logging
import threading

from threadpoolctl import threadpool_info, threadpool_limits

logger = logging.getLogger(__name__)

_pinned = threading.Event()


def pin_single_blas_thread() -> bool:
    """Limit every BLAS library loaded now to one thread, for good; ``True`` once that is in force.

    Only the main thread can do it (see the module): from another thread this does nothing (a debug log
    line says so), and a later call from the main thread still pins. Libraries loaded later are not limited."""
    if _pinned.is_set():
        return True
    if threading.current_thread() is not threading.main_thread():
        logger.debug("blas.pin_skipped thread=%s reason=not_main_thread", threading.current_thread().name)
        return False
    threadpool_limits(limits=1, user_api="blas")
    _pinned.set()
    logger.info("blas.pinned threads=1 libraries=%d", len(blas_thread_counts()))
    return True


def blas_thread_counts() -> dict[str, int]:
    """Each loaded BLAS library's thread count as the calling thread sees it, by file path."""
    return {str(lib["filepath"]): int(lib["num_threads"]) for lib in threadpool_info() if lib["user_api"] == "blas"}
