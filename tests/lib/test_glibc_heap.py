"""``lib.glibc_heap``: glibc keeps what Python frees until asked to give its pages back, and maps large blocks on
their own only while its threshold is fixed."""

from __future__ import annotations

import os
import subprocess
import sys

from deployments.stack.layout import PROJECT_ROOT
from lib.glibc_heap import MMAP_THRESHOLD, give_back, malloc_figures
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


ALLOCATE_AFTER_A_LARGE_FREE = """
import numpy as np
from lib.glibc_heap import malloc_figures
large = np.ones(8 * 2**20 // 8)  # 8 MB: a mapping of its own under any threshold glibc starts with
del large  # unset, freeing it raises glibc's threshold to 8 MB
before = malloc_figures()["malloc_mapped"]
block = np.ones(2**20 // 8)  # 1 MB
print(malloc_figures()["malloc_mapped"] - before >= 2**20)
"""


def allocated_on_its_own_mapping(env: dict[str, str]) -> bool:
    done = subprocess.run(
        [sys.executable, "-c", ALLOCATE_AFTER_A_LARGE_FREE],
        env=env,
        cwd=PROJECT_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip() == "True"


def test_a_fixed_mmap_threshold_keeps_a_block_freed_once_from_raising_it() -> None:
    plain = {k: v for k, v in os.environ.items() if not k.startswith(("MALLOC_", "GLIBC_TUNABLES"))}
    assert not allocated_on_its_own_mapping(plain), "glibc raised its threshold: the 1 MB block went to the heap"
    fixed = plain | {"MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD)}
    assert allocated_on_its_own_mapping(fixed), "the threshold stayed at 128 KB: the block was mapped, to be unmapped"
