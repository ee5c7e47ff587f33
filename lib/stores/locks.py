"""Redis locks held for as long as their holder lives: redis-py's ``Lock``, its lease renewed by a thread.

A lock is one key set with ``SET NX PX`` to a random token (``redis.lock.Lock``). While it is held, a
daemon thread resets the key's expiry every third of the lease (``Lock.reacquire``), so the work under
the lock may take any time, while a holder that dies (process killed, machine gone) stops renewing and
frees the lock one lease later. Only the holder releases: redis-py compares the token and deletes in
one Lua call, so a holder whose lease lapsed and was taken over cannot free its successor's lock.

redis-py's ``Lock`` rather than ``python-redis-lock``: it is already installed and does the acquiring,
token check, release and renewal call; what python-redis-lock would add is its ``auto_renewal`` thread,
the ``_renew`` loop below, at the cost of one more dependency.
"""

from __future__ import annotations

import logging
import threading

import redis
from redis.exceptions import LockNotOwnedError
from redis.lock import Lock

from lib.errors import RegistryUnavailableError

logger = logging.getLogger(__name__)

LEASE_SECONDS = 30.0
"""A dead holder's lock is free this long after its last renewal."""
POLL_SECONDS = 0.1
"""How often a waiting ``acquire`` tries again."""


class LeaseLock:
    """One acquisition of the lock ``name``: ``acquire``, then ``release`` in a ``finally``.

    ``renew_every`` (a third of the lease unless given) is how often the holder renews; tests pass a
    short one to watch a renewal happen. Connection errors while acquiring raise
    ``RegistryUnavailableError``; while renewing or releasing they are logged, since the lease lapses
    by itself.
    """

    def __init__(
        self,
        client: redis.Redis,
        name: str,
        *,
        lease_seconds: float = LEASE_SECONDS,
        poll_seconds: float = POLL_SECONDS,
        renew_every: float | None = None,
    ) -> None:
        self.name = name
        # thread_local=False: the renewing thread must see the token the acquiring thread got.
        self._lock = Lock(client, name, timeout=lease_seconds, sleep=poll_seconds, thread_local=False)
        self._renew_every = renew_every if renew_every is not None else lease_seconds / 3
        self._stop = threading.Event()
        self._keeper: threading.Thread | None = None

    def acquire(self, wait_seconds: float = 0.0) -> bool:
        """Take the lock, polling up to ``wait_seconds`` while another holder has it; False if it never came free."""
        if self._keeper is not None:
            raise RuntimeError(f"lock {self.name} is already held by this LeaseLock")
        try:
            taken = self._lock.acquire(blocking=wait_seconds > 0, blocking_timeout=wait_seconds or None)
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise RegistryUnavailableError(f"Redis is not reachable: {exc}") from exc
        if taken:
            self._stop = threading.Event()
            self._keeper = threading.Thread(target=self._renew, name=f"lease:{self.name}", daemon=True)
            self._keeper.start()
        return bool(taken)

    def locked(self) -> bool:
        """Whether some holder (this one or another) has the lock now."""
        try:
            return bool(self._lock.locked())
        except (redis.ConnectionError, redis.TimeoutError) as exc:
            raise RegistryUnavailableError(f"Redis is not reachable: {exc}") from exc

    def release(self) -> None:
        """Stop renewing and free the lock if this holder still has it. Never raises for a lapsed lease."""
        if self._keeper is None:
            return
        self._stop.set()
        self._keeper.join()
        self._keeper = None
        try:
            self._lock.release()
        except LockNotOwnedError:
            logger.warning("locks.lapsed_before_release name=%s", self.name)
        except (redis.ConnectionError, redis.TimeoutError):
            logger.warning("locks.release_failed name=%s", self.name)

    def _renew(self) -> None:
        while not self._stop.wait(self._renew_every):
            try:
                self._lock.reacquire()
            except LockNotOwnedError:
                logger.warning("locks.lost name=%s", self.name)
                return
            except (redis.ConnectionError, redis.TimeoutError):
                logger.warning("locks.renew_failed name=%s", self.name)
