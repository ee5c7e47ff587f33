"""``lib.glibc_heap``: glibc keeps what Python frees until asked to give its pages back."""

from __future__ import annotations

from lib.glibc_heap import give_back, malloc_figures
from lib.observability.memory import rss_bytes

MB = 1024 * 1024


def fragment(megabytes: int) -> list[bytearray]:
    """Free ``megabytes`` of 1 KB blocks (glibc's, not pymalloc's: over 512 bytes) but every 64th, which pins
    the heap below them: the freed chunks stay with glibc, resident."""
    blocks = [bytearray(1024) for _ in range(megabytes * 1024)]
    return blocks[::64]


def test_freed_memory_is_counted_as_kept_and_a_trim_gives_its_pages_back() -> None:
    give_back()
    kept = fragment(150)
    assert malloc_figures()["malloc_free"] > 100 * MB, "freed, but kept by glibc"
    resident = rss_bytes()
    assert give_back()
    assert resident - rss_bytes() > 80 * MB, "the free pages went back to the kernel"
    assert malloc_figures()["malloc_free"] > 100 * MB, "the chunks themselves stay free for reuse"
    assert len(kept) == 150 * 1024 // 64
