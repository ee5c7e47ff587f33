"""Arrays a search borrows (``lib.retrieval.scratch``): a lease's arrays never overlap, nor another lease's
while both last; they are lent again once given back; only the sizes glibc would map afresh are lent; the
lender keeps no more than its bytes, the latest given back first."""

from __future__ import annotations

import threading

import numpy as np

from lib.glibc_heap import MMAP_THRESHOLD
from lib.retrieval.scratch import LEASED_MAX, SPARE, Scratch, lease


def test_arrays_of_one_lease_never_overlap_and_are_lent_again_after_it() -> None:
    scratch = Scratch()
    with scratch.lease() as take:
        first = take(MMAP_THRESHOLD // 8, np.float64)
        second = take(MMAP_THRESHOLD // 8, np.float64)
        third = take(300_000, np.int32)
        assert (first.shape, first.dtype, third.shape, third.dtype) == (
            (MMAP_THRESHOLD // 8,),
            np.float64,
            (300_000,),
            np.int32,
        )
        assert not np.shares_memory(first, second) and not np.shares_memory(first, third)
        first[:], second[:] = 1.0, 2.0
        assert first.sum() == MMAP_THRESHOLD // 8 and second.sum() == MMAP_THRESHOLD // 4
    assert scratch.kept() == 2 * MMAP_THRESHOLD + (1 << 21)  # 1.2 MB rounded up to 2 MiB
    with scratch.lease() as take:
        again = take(MMAP_THRESHOLD // 4, np.float32)
        assert np.shares_memory(again, first) or np.shares_memory(again, second)
        assert scratch.kept() == MMAP_THRESHOLD + (1 << 21)


def test_only_the_sizes_glibc_maps_afresh_are_lent() -> None:
    scratch = Scratch()
    with scratch.lease() as take:
        small, large = take(MMAP_THRESHOLD - 1, np.uint8), take(LEASED_MAX + 1, np.uint8)
        assert small.flags.owndata and large.flags.owndata
    assert scratch.kept() == 0
    with lease(None) as take:
        assert take(MMAP_THRESHOLD, np.uint8).flags.owndata


def test_the_lender_keeps_no_more_than_its_bytes_and_drops_the_longest_kept_first() -> None:
    scratch = Scratch(kept_bytes=2 * MMAP_THRESHOLD)
    with scratch.lease() as first:
        a = first(MMAP_THRESHOLD, np.uint8)
        with scratch.lease() as second:
            b, c = second(MMAP_THRESHOLD, np.uint8), second(MMAP_THRESHOLD, np.uint8)
        assert scratch.kept() == 2 * MMAP_THRESHOLD  # b and c
    assert scratch.kept() == 2 * MMAP_THRESHOLD  # a given back: b, kept longest, dropped
    with scratch.lease() as take:
        again = [take(MMAP_THRESHOLD, np.uint8) for _ in range(2)]
        assert not any(np.shares_memory(x, b) for x in again)
        assert any(np.shares_memory(x, a) for x in again) and any(np.shares_memory(x, c) for x in again)


def test_a_kept_buffer_up_to_spare_times_larger_is_lent_and_no_larger() -> None:
    scratch = Scratch(smallest=1)
    with scratch.lease() as take:
        large = take(SPARE * 4096, np.uint8)
    with scratch.lease() as take:
        assert np.shares_memory(take(4096, np.uint8), large)
    with scratch.lease() as take:
        assert not np.shares_memory(take(4096 // (2 * SPARE), np.uint8), large)


def test_leases_on_many_threads_never_share_an_array() -> None:
    scratch, failures = Scratch(smallest=1), []
    start = threading.Barrier(8)

    def work(mark: int) -> None:
        try:
            start.wait()
            for size in range(1, 400, 7):
                with scratch.lease() as take:
                    mine = [take(size * 100, np.int64) for _ in range(3)]
                    for array in mine:
                        array[:] = mark
                    threading.Event().wait(0.0001)  # let the others write meanwhile
                    assert all((array == mark).all() for array in mine)
        except BaseException as error:  # handed to the main thread's assertion
            failures.append(error)

    threads = [threading.Thread(target=work, args=(mark,)) for mark in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures[0]
