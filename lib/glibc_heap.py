"""The C allocator's own heap (glibc malloc): its figures, and giving back what it keeps.

Why: glibc keeps freed memory for reuse. A transient peak (a revision's slice read from Chroma, a big response)
leaves the process's RSS at its high-water mark, and the next higher peak raises it again, although Python
itself holds no more than before (the 8th soak: replica B's ``malloc_free`` grew from 14 to 85 MB in five
minutes while its live Python objects grew 9 MB; ``malloc_trim(0)`` gave 71 MB back). Decision 0004.
Elsewhere than glibc both functions do nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from functools import cache

MMAP_THRESHOLD = 128 * 1024
"""Bytes from which glibc gives a block a mapping of its own, returned to the kernel when freed: glibc's default,
set fixed (``MALLOC_MMAP_THRESHOLD_``, by the stack and the image) so that glibc does not raise it. Unset, each
freed mapped block raises the bar to its size (up to 32 MB), and the large short-lived blocks that follow (a
Chroma page, a response, a rebuilt matrix) land in the heap among long-lived ones and strand it: in the soak,
the kb/document-store service's freed-but-kept heap grew 44 → 98 MB with it unset (13th run) and stayed at
1–5 MB with it set (14th; docs/performance.md: Soak). Decision 0004."""


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (name, ctypes.c_size_t)
        for name in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


@cache
def _libc() -> ctypes.CDLL | None:
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
    except OSError:
        return None
    if libc is None or not hasattr(libc, "mallinfo2") or not hasattr(libc, "malloc_trim"):
        return None
    libc.mallinfo2.restype = _MallInfo2
    libc.malloc_trim.argtypes = [ctypes.c_size_t]
    libc.malloc_trim.restype = ctypes.c_int
    return libc


def malloc_figures() -> dict[str, int]:
    """glibc's figures, every arena together (empty off glibc): ``malloc_used`` bytes handed out,
    ``malloc_free`` bytes freed but kept (counted whether or not their pages were given back),
    ``malloc_mapped`` bytes in separate mappings (given back as soon as they are freed)."""
    libc = _libc()
    if libc is None:
        return {}
    info = libc.mallinfo2()
    return {"malloc_used": info.uordblks, "malloc_free": info.fordblks, "malloc_mapped": info.hblkhd}


def give_back() -> bool:
    """``malloc_trim(0)``: return the whole free pages of every arena to the kernel (the chunks stay free for
    reuse, so ``malloc_free`` does not change; RSS does). Whether anything was returned."""
    libc = _libc()
    return bool(libc.malloc_trim(0)) if libc is not None else False
