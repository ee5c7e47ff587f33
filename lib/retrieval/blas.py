"""One BLAS thread for the whole process, pinned once from the main thread (``open_stores`` does it).

Why: a query's dense product is memory-bound, so more BLAS threads gain nothing, and OpenBLAS's helper threads
spin between products, burning a core. The pin is set once from the main thread because numpy's OpenBLAS
ignores a thread count set from any other thread, and searches run on worker threads; set there, it applies to
every thread. The encoders (onnxruntime, torch) keep their own thread pools. Measurements:
docs/decisions/0008-one-blas-thread.md.
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
