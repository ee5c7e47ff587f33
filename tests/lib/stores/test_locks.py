"""Lease locks on a real Redis: one holder at a time, renewal while held, a dead holder's lock lapses,
only the holder releases."""

from __future__ import annotations

import logging
import uuid

import pytest
import redis
from redis.backoff import NoBackoff
from redis.lock import Lock
from redis.retry import Retry

from lib.errors import RegistryUnavailableError
from lib.stores.locks import LeaseLock
from tests.conftest import free_port
from tests.polling import eventually


@pytest.fixture
def name() -> str:
    return f"test_lock:{uuid.uuid4().hex}"


def test_a_second_holder_is_refused_until_the_first_releases(redis_client: redis.Redis, name: str) -> None:
    first, second = LeaseLock(redis_client, name), LeaseLock(redis_client, name)
    assert first.acquire()
    assert not second.acquire()
    first.release()
    assert second.acquire()
    second.release()
    assert not redis_client.exists(name)


def test_a_waiting_acquire_gives_up_when_the_holder_keeps_the_lock(redis_client: redis.Redis, name: str) -> None:
    holder = LeaseLock(redis_client, name)
    assert holder.acquire()
    try:
        assert not LeaseLock(redis_client, name, poll_seconds=0.05).acquire(wait_seconds=0.2)
    finally:
        holder.release()


def test_the_holder_renews_its_lease_while_it_works(redis_client: redis.Redis, name: str) -> None:
    holder = LeaseLock(redis_client, name, lease_seconds=60, renew_every=0.01)
    assert holder.acquire()
    try:
        redis_client.pexpire(name, 5_000)
        eventually(lambda: redis_client.pttl(name) > 5_000)  # a renewal put the whole lease back
    finally:
        holder.release()
    assert not redis_client.exists(name)


def test_a_holder_that_died_frees_the_lock_after_its_lease(redis_client: redis.Redis, name: str) -> None:
    assert Lock(redis_client, name, timeout=0.3).acquire(blocking=False)  # acquired, then never renewed
    waiter = LeaseLock(redis_client, name, poll_seconds=0.05)
    assert not waiter.acquire()
    assert waiter.acquire(wait_seconds=10)
    waiter.release()


def test_a_holder_whose_lease_lapsed_does_not_release_its_successor(
    redis_client: redis.Redis, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="lib.stores.locks")
    stale = LeaseLock(redis_client, name)
    assert stale.acquire()
    redis_client.delete(name)  # its lease lapsed (a long pause, say) ...
    successor = LeaseLock(redis_client, name)
    assert successor.acquire()  # ... and someone else took the lock
    stale.release()
    assert redis_client.exists(name), "the stale holder freed its successor's lock"
    assert "locks.lapsed_before_release" in caplog.text
    successor.release()
    assert not redis_client.exists(name)


def test_a_holder_that_lost_its_lock_stops_renewing_it(
    redis_client: redis.Redis, name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="lib.stores.locks")
    holder = LeaseLock(redis_client, name, renew_every=0.01)
    assert holder.acquire()
    redis_client.set(name, "another holder")
    eventually(lambda: "locks.lost" in caplog.text)
    holder.release()
    assert redis_client.get(name) == "another holder"
    assert redis_client.pttl(name) == -1, "the lost holder touched the other holder's key"


def test_acquiring_without_redis_raises_registry_unavailable(name: str) -> None:
    unreachable = redis.Redis(port=free_port(), socket_connect_timeout=1, retry=Retry(NoBackoff(), retries=0))
    with pytest.raises(RegistryUnavailableError):
        LeaseLock(unreachable, name).acquire()
