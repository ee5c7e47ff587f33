"""The soak's warm-up ends when memory levels off (``benchmarks/soak.py``): caches filling must end it, a leak
must not, and a process that levels off late holds it back."""

from __future__ import annotations

from benchmarks.soak import PLATEAU_WINDOW_S, SAMPLE_EVERY_S, Sample, plateau

MB = 2**20


def series(rss_mb: list[float]) -> list[Sample]:
    return [Sample(i * SAMPLE_EVERY_S, int(mb * MB), 10, 10, 0) for i, mb in enumerate(rss_mb)]


def test_caches_filling_end_the_warm_up_once_a_whole_window_is_flat() -> None:
    filling = series([400 + min(i, 90) for i in range(180)])  # +1 MB per sample for 15 minutes, then flat
    at = plateau({"replica": filling}, 0.0)
    assert at is not None
    flat_from = 90 * SAMPLE_EVERY_S
    assert flat_from < at <= flat_from + PLATEAU_WINDOW_S


def test_a_steady_leak_never_ends_the_warm_up() -> None:
    assert plateau({"replica": series([400 + i for i in range(360)])}, 0.0) is None


def test_every_process_must_level_off() -> None:
    early = series([300.0] * 180)
    late = series([400 + min(i, 120) for i in range(180)])
    assert plateau({"a": early, "b": late}, 0.0) == plateau({"b": late}, 0.0)
    assert plateau({"a": early}, 0.0) == PLATEAU_WINDOW_S
