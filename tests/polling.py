"""Waiting for a condition in tests: poll it until a deadline, never a blind sleep."""

from __future__ import annotations

import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar, cast

import anyio
import pytest

T = TypeVar("T")


def eventually(condition: Callable[[], T], within: float = 10.0, every: float = 0.01, what: str = "condition") -> T:
    """``condition()``'s first truthy value; fail the test if there is none within ``within`` seconds.

    A condition that can tell the wait is hopeless (the process it waits for died) fails the test itself.
    """
    deadline = time.monotonic() + within
    while not (value := condition()):
        if time.monotonic() > deadline:
            pytest.fail(f"{what} not met within {within:g} s", pytrace=False)
        time.sleep(every)
    return value


async def eventually_async(
    condition: Callable[[], T | Awaitable[T]], within: float = 10.0, every: float = 0.005, what: str = "condition"
) -> T:
    """``eventually`` inside an event loop, which keeps running between checks; ``condition`` may be a coroutine
    function, and a check still running at the deadline is cancelled."""
    with anyio.move_on_after(within):
        while True:
            value = condition()
            if inspect.isawaitable(value):
                value = await value
            if value:
                return cast(T, value)
            await anyio.sleep(every)
    pytest.fail(f"{what} not met within {within:g} s", pytrace=False)
