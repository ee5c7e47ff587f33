"""Finding the registry's primary through Redis Sentinel (``REDIS_SENTINELS``, ``REDIS_SENTINEL_MASTER``).

redis-py's own Sentinel support: a client from ``Sentinel.master_for`` asks the sentinels for the primary's
address each time it opens a connection, so after a failover (the primary gone, a replica promoted) its next
connection goes to the new primary, and a connection still open to a demoted primary is dropped at its first
``READONLY`` reply. Until the sentinels agree the primary is down they still name it: connections are refused,
and a command fails after its retries as in any Redis outage (``registry_unavailable``). Why Sentinel, and
the failover time measured: docs/decisions/0026-redis-sentinel-failover.md.
"""

from __future__ import annotations

from typing import Any, TypeVar

import redis
import redis.asyncio as aioredis
import redis.asyncio.sentinel as async_sentinel
from redis.sentinel import Sentinel

from lib.config import RedisSettings

R = TypeVar("R", bound=redis.Redis)

SENTINEL_TIMEOUT_S = 1.0
"""Connect and read timeout of one question to one sentinel (the next sentinel is asked after it)."""


def _secret(value: Any) -> str | None:
    return None if value is None else str(value.get_secret_value())


def _sentinel_options(settings: RedisSettings) -> dict[str, Any]:
    options: dict[str, Any] = {"socket_connect_timeout": SENTINEL_TIMEOUT_S, "socket_timeout": SENTINEL_TIMEOUT_S}
    if settings.sentinel_password is not None:
        options["password"] = _secret(settings.sentinel_password)
    return options


def sentinel_client(settings: RedisSettings, redis_class: type[R], **options: Any) -> R:
    """A ``redis_class`` client of the primary of ``settings.sentinel_master``; ``options`` are its connections'
    (timeouts, retry, decoding)."""
    sentinel = Sentinel(
        settings.sentinel_addresses, sentinel_kwargs=_sentinel_options(settings), password=_secret(settings.password)
    )
    client: R = sentinel.master_for(settings.sentinel_master, redis_class=redis_class, **options)
    return client


class _AsyncPrimary(aioredis.Redis):
    """An asyncio client of the primary that closes its connections to the sentinels with its own: left open,
    they keep an event loop from closing."""

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        try:
            await super().aclose(close_connection_pool)
        finally:
            await self.connection_pool.sentinel_manager.aclose()  # type: ignore[attr-defined]


class BlockingSentinelPool(async_sentinel.SentinelConnectionPool, aioredis.BlockingConnectionPool):
    """The primary's connections, bounded: at ``max_connections`` a command waits up to ``timeout`` seconds for
    one to free (redis-py's ``BlockingConnectionPool``) instead of failing at once."""


def async_sentinel_client(settings: RedisSettings, **options: Any) -> aioredis.Redis:
    """The asyncio twin of :func:`sentinel_client` (the SSE relay's client), its connections in a bounded,
    blocking pool (``max_connections`` and ``timeout`` among ``options``)."""
    sentinel = async_sentinel.Sentinel(
        settings.sentinel_addresses, sentinel_kwargs=_sentinel_options(settings), password=_secret(settings.password)
    )
    client: aioredis.Redis = sentinel.master_for(
        settings.sentinel_master, redis_class=_AsyncPrimary, connection_pool_class=BlockingSentinelPool, **options
    )
    return client
