"""The two context managers the instrumented places use: ``measured`` (a span, or for the short legs an event, and
a duration histogram) and ``store_call`` (a span per store call, failures counted by store)."""

from __future__ import annotations

import functools
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import ParamSpec, TypeVar

from lib.observability.metrics import index_load_duration, index_loads, search_leg_duration, store_errors
from lib.observability.tracing import span, span_event, tracing_on

P = ParamSpec("P")
R = TypeVar("R")

LEGS = ("resolve", "embed", "dense", "lexical", "fuse")
EVENT_LEGS = frozenset({"resolve", "fuse"})
"""Legs of microseconds of work (a registry snapshot already read, a fusion of two short lists): an event on the
current span, not a span of their own (a span costs them more than their work; docs/decisions/0032)."""
_LEG_TIMERS = {leg: search_leg_duration.labels(leg) for leg in LEGS}
_LEG_NAMES = {leg: f"search.{leg}" for leg in LEGS}
_DB_SYSTEM = {"redis": "redis", "chroma": "chromadb", "objects": "object_store"}


@contextmanager
def measured(leg: str, **attributes: str | int | float | bool) -> Iterator[None]:
    """One leg of a search (``LEGS``): a span ``search.<leg>`` (an event of that name on the current span for
    ``EVENT_LEGS``), its time in ``policy_kb_search_leg_duration_seconds``."""
    timer = _LEG_TIMERS[leg]
    started = time.perf_counter()
    try:
        if leg in EVENT_LEGS:
            with span_event(_LEG_NAMES[leg], attributes or None):
                yield
        else:
            with span(_LEG_NAMES[leg], attributes or None):
                yield
    finally:
        timer.observe(time.perf_counter() - started)


@contextmanager
def store_call(store: str, operation: str, *, expected: tuple[type[BaseException], ...] = ()) -> Iterator[None]:
    """A call to ``store`` (redis, chroma, objects): a span ``<store> <operation>`` (a leaf: not made the current
    span, nothing below it to parent); an exception other than ``expected`` ones (a missing object is an answer,
    not a failure) counts in ``policy_kb_store_errors_total``. Its name and attributes are built only when
    tracing is on."""
    try:
        if tracing_on():
            attributes = {"db.system.name": _DB_SYSTEM[store], "db.operation.name": operation}
            with span(f"{store} {operation}", attributes, current=False):
                yield
        else:
            yield
    except expected:
        raise
    except BaseException:
        store_errors.labels(store).inc()
        raise


def search_leg(leg: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """``measured(leg)`` around every call of the decorated function."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(function)
        def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
            with measured(leg):
                return function(*args, **kwargs)

        return wrapper

    return decorate


@contextmanager
def timed_load(kind: str) -> Iterator[None]:
    """One corpus index slice loaded (``load``: a search waits for it) or refreshed ahead of its expiry (``refresh``):
    counted, timed and spanned."""
    index_loads.labels(kind).inc()
    started = time.perf_counter()
    try:
        with span(f"index.{kind}"):
            yield
    finally:
        index_load_duration.labels(kind).observe(time.perf_counter() - started)


C = TypeVar("C", bound=type)


def store_calls(
    store: str, methods: Iterable[str], *, expected: tuple[type[BaseException], ...] = ()
) -> Callable[[C], C]:
    """A class decorator: each of ``methods`` runs in ``store_call(store, <method>)`` (a backend of a store keeps its
    own type, so what checks ``isinstance`` still sees it)."""

    def decorate(cls: C) -> C:
        for name in methods:
            setattr(cls, name, _in_store_call(store, name, expected, getattr(cls, name)))
        return cls

    return decorate


def _in_store_call(
    store: str, operation: str, expected: tuple[type[BaseException], ...], method: Callable[..., R]
) -> Callable[..., R]:
    @functools.wraps(method)
    def wrapper(*args: object, **kwargs: object) -> R:
        with store_call(store, operation, expected=expected):
            return method(*args, **kwargs)

    return wrapper
