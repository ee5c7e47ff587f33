"""Waiting for a condition in tests: poll it until a deadline, never a blind sleep."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest


def eventually(condition: Callable[[], bool], within: float = 10.0, every: float = 0.01) -> None:
    """Return as soon as ``condition()`` holds; fail the test if it still does not after ``within`` seconds."""
    deadline = time.monotonic() + within
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"condition not met within {within:g} s")
        time.sleep(every)
