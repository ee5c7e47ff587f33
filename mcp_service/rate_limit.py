"""Requests per caller per server, counted in Redis so every replica draws on one budget.

A fixed window per caller: one Lua script increments ``ratelimit:<server>:<caller>`` and starts its expiry on
the first request of a window, atomically, so two replicas never both see a fresh count; over
``RATE_LIMIT_PER_MINUTE`` in ``RATE_LIMIT_WINDOW_SECONDS`` (60 s) the caller waits out the key's remaining
time (``Retry-After``). If Redis does not answer, requests are let through and a warning logged: a limiter
must not turn a Redis outage into a service outage.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Callable

import redis.asyncio as aioredis
from redis.commands.core import AsyncScript
from redis.exceptions import RedisError

from lib.config import RateLimitSettings

logger = logging.getLogger(__name__)

WINDOW_SCRIPT = """
local count = redis.call('INCR', KEYS[1])
if count == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then redis.call('PEXPIRE', KEYS[1], ARGV[1]); ttl = tonumber(ARGV[1]) end
return {count, ttl}
"""


class RateLimiter:
    """``retry_after(caller)``: ``None`` while the caller is within budget, else the seconds to wait."""

    def __init__(self, settings: RateLimitSettings, server: str, connect: Callable[[], aioredis.Redis]) -> None:
        if settings.per_minute is None:
            raise ValueError("RateLimiter needs RATE_LIMIT_PER_MINUTE")
        self.budget = settings.per_minute
        self.window_ms = settings.window_seconds * 1000
        self.prefix = f"ratelimit:{server}:"
        self.connect = connect
        self._client: aioredis.Redis | None = None
        self._script: AsyncScript | None = None

    async def retry_after(self, caller: str) -> int | None:
        try:
            if self._script is None:
                self._client = self.connect()
                self._script = self._client.register_script(WINDOW_SCRIPT)
            count, ttl_ms = await self._script(keys=[self.prefix + caller], args=[self.window_ms])
        except (RedisError, OSError) as exc:
            logger.warning("rate_limit.unavailable caller=%s reason=%r; request let through", caller, str(exc))
            return None
        if int(count) <= self.budget:
            return None
        return max(1, math.ceil(int(ttl_ms) / 1000))

    async def aclose(self) -> None:
        """Close the Redis client (at the app's shutdown, on the loop that opened it)."""
        client, self._client, self._script = self._client, None, None
        if client is not None:
            await client.aclose()
