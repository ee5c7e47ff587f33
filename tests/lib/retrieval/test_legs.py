"""A hybrid search's two legs side by side (``lib.retrieval.legs``): the second on a helper when one is idle, on
the caller's thread otherwise, in the caller's context, with every error reported and nothing left running."""

from __future__ import annotations

import contextvars
import threading

import pytest

from lib.retrieval.arguments import SearchMode
from lib.retrieval.legs import SIDE_BY_SIDE_ROWS, Legs, side_by_side

REQUEST = contextvars.ContextVar("request", default="none")


def where() -> str:
    return threading.current_thread().name


def test_the_second_leg_runs_on_an_idle_helper_in_the_callers_context() -> None:
    REQUEST.set("call-7")
    first, second = Legs(1).both(where, lambda: (where(), REQUEST.get()))
    assert first == threading.current_thread().name
    assert second[0].startswith("search-leg") and second[1] == "call-7"


def test_with_no_idle_helper_or_none_at_all_the_legs_run_here_one_after_the_other() -> None:
    legs, release, started = Legs(1), threading.Event(), threading.Event()

    def hold() -> str:
        started.set()
        release.wait(30)
        return where()

    outer = threading.Thread(target=lambda: legs.both(lambda: release.wait(30), hold))
    outer.start()
    assert started.wait(30)  # the only helper is busy
    here = threading.current_thread().name
    assert legs.both(where, where) == (here, here)
    release.set()
    outer.join()
    assert legs.both(where, where)[1].startswith("search-leg")  # idle again
    assert Legs(0).both(where, where) == (here, here)
    assert Legs(1).both(where, where, together=False) == (here, here)


def test_an_error_of_either_leg_is_raised_once_both_have_finished() -> None:
    finished = threading.Event()

    def slow() -> None:
        threading.Event().wait(0.05)
        finished.set()

    def fails() -> None:
        raise ValueError("first")

    legs = Legs(1)
    with pytest.raises(ValueError, match="first"):
        legs.both(fails, slow)
    assert finished.is_set(), "returned before the helper's leg finished"

    def second_fails() -> None:
        raise KeyError("second")

    with pytest.raises(KeyError, match="second"):
        legs.both(lambda: 1, second_fails)
    assert legs.both(lambda: 1, lambda: 2) == (1, 2)  # the helper was given back after each error
    assert legs.both(where, where)[1].startswith("search-leg")


def test_only_a_large_hybrid_search_runs_its_legs_side_by_side() -> None:
    assert side_by_side(SearchMode.HYBRID, SIDE_BY_SIDE_ROWS)
    assert not side_by_side(SearchMode.HYBRID, SIDE_BY_SIDE_ROWS - 1)  # a handoff would cost more than it saves
    assert not side_by_side(SearchMode.DENSE, 10 * SIDE_BY_SIDE_ROWS)  # the other leg is empty
    assert not side_by_side(SearchMode.LEXICAL, 10 * SIDE_BY_SIDE_ROWS)
