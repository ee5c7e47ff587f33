"""Writes that answer success only once replicas hold them: ``WAIT`` after every write, on its own connection.

Redis replicates asynchronously: the primary answers a write before any replica has it, so a primary killed
right after answering takes the write with it when Sentinel promotes a replica. ``WAIT n timeout`` blocks until
``n`` replicas have acknowledged everything the connection wrote. ``AcknowledgedRedis`` sends it after every
write command (``WRITE_COMMANDS``: Redis's ``@write`` category and scripts) and after every MULTI/EXEC or
pipeline holding one, and a write whose replicas fall short raises ``UnacknowledgedWriteError``: a redis
``TimeoutError``, so every registry reports it as it reports Redis being down, and nothing is claimed. The
write may still be on the primary (Redis cannot take it back) and may or may not outlive a failover.

WAIT must run on the connection that wrote (Redis keeps each client's own replication offset), so it is sent
here, inside redis-py's command and pipeline paths where that connection is known, and outside redis-py's
retry loop: a write is never sent twice because its WAIT fell short. The guarantee and what it costs:
docs/decisions/0026-redis-sentinel-failover.md.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any

import redis
from redis.client import Pipeline
from redis.connection import AbstractConnection

logger = logging.getLogger(__name__)

_WRITES = """
    APPEND BITFIELD BITOP BLMOVE BLMPOP BLPOP BRPOP BRPOPLPUSH BZMPOP BZPOPMAX BZPOPMIN COPY DECR DECRBY DEL EXPIRE
    EXPIREAT FLUSHALL FLUSHDB FUNCTION GEOADD GEORADIUS GEORADIUSBYMEMBER GEOSEARCHSTORE GETDEL GETEX GETSET HDEL
    HINCRBY HINCRBYFLOAT HMSET HSET HSETNX INCR INCRBY INCRBYFLOAT LINSERT LMOVE LMPOP LPOP LPUSH LPUSHX LREM LSET
    LTRIM MIGRATE MOVE MSET MSETNX PERSIST PEXPIRE PEXPIREAT PFADD PFDEBUG PFMERGE PSETEX RENAME RENAMENX RESTORE
    RESTORE-ASKING RPOP RPOPLPUSH RPUSH RPUSHX SADD SDIFFSTORE SET SETBIT SETEX SETNX SETRANGE SINTERSTORE SMOVE SORT
    SPOP SREM SUNIONSTORE SWAPDB UNLINK XACK XADD XAUTOCLAIM XCLAIM XDEL XGROUP XREADGROUP XSETID XTRIM ZADD
    ZDIFFSTORE ZINCRBY ZINTERSTORE ZMPOP ZPOPMAX ZPOPMIN ZRANGESTORE ZREM ZREMRANGEBYLEX ZREMRANGEBYRANK
    ZREMRANGEBYSCORE ZUNIONSTORE
    EVAL EVALSHA FCALL
"""
WRITE_COMMANDS = frozenset(_WRITES.split())
"""Redis 7's ``@write`` commands (``COMMAND LIST FILTERBY ACLCAT write``; a test compares them with the server's),
and the scripting commands, which Redis does not class as writes but which are how the registries write."""


def is_write(command_name: object) -> bool:
    """Whether a command as redis-py names it (``"SET"``, ``"XGROUP CREATE"``) may write."""
    return str(command_name).split(" ", 1)[0].upper() in WRITE_COMMANDS


class UnacknowledgedWriteError(redis.TimeoutError):
    """The primary applied a write but fewer replicas than required acknowledged it in time (or the primary
    went away before saying): the write is not acknowledged to the caller."""


class _Unacknowledged(Exception):
    """Carries ``UnacknowledgedWriteError`` out of redis-py's retry loop, which would send the write again."""

    def __init__(self, error: UnacknowledgedWriteError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True)
class Acknowledgement:
    """``replicas`` must acknowledge each write within ``timeout_ms``."""

    replicas: int
    timeout_ms: int

    def wait(self, connection: AbstractConnection, what: object) -> None:
        """``WAIT`` on ``connection``, which has just written ``what``; ``_Unacknowledged`` if it falls short."""
        try:
            connection.send_command("WAIT", self.replicas, self.timeout_ms)
            acknowledged = int(connection.read_response())
        except (redis.ConnectionError, redis.TimeoutError, redis.ResponseError) as exc:
            connection.disconnect()
            logger.warning("redis.write_unacknowledged command=%s reason=%s", what, type(exc).__name__)
            raise _Unacknowledged(
                UnacknowledgedWriteError(f"Redis did not confirm that a replica holds the write ({exc})")
            ) from exc
        if acknowledged < self.replicas:
            logger.warning(
                "redis.write_unacknowledged command=%s replicas=%d wanted=%d timeout_ms=%d",
                what,
                acknowledged,
                self.replicas,
                self.timeout_ms,
            )
            raise _Unacknowledged(
                UnacknowledgedWriteError(
                    f"{acknowledged} of {self.replicas} Redis replicas acknowledged the write within "
                    f"{self.timeout_ms} ms; it is not confirmed"
                )
            )


class _Acknowledging:
    """What the client and its pipelines share: WAIT after a write sent alone, and the error it raises."""

    acknowledgement: Acknowledgement | None = None

    def execute_command(self, *args: Any, **options: Any) -> Any:
        try:
            return super().execute_command(*args, **options)  # type: ignore[misc]
        except _Unacknowledged as unacknowledged:
            raise unacknowledged.error from unacknowledged.__cause__

    def _send_command_parse_response(
        self, conn: AbstractConnection, command_name: str, *args: Any, **options: Any
    ) -> Any:
        response = super()._send_command_parse_response(conn, command_name, *args, **options)  # type: ignore[misc]
        if self.acknowledgement is not None and is_write(command_name):
            self.acknowledgement.wait(conn, command_name)
        return response


class AcknowledgedPipeline(_Acknowledging, Pipeline):
    """A pipeline (MULTI/EXEC or not) that WAITs once after it ran, when it held a write."""

    def execute(self, raise_on_error: bool = True) -> list[Any]:
        try:
            return super().execute(raise_on_error)
        except _Unacknowledged as unacknowledged:
            raise unacknowledged.error from unacknowledged.__cause__

    def _execute_transaction(self, connection: Any, commands: Any, raise_on_error: bool) -> list[Any]:
        return self._acknowledged(
            super()._execute_transaction(connection, commands, raise_on_error), connection, commands, "EXEC"
        )

    def _execute_pipeline(self, connection: Any, commands: Any, raise_on_error: bool) -> list[Any]:
        return self._acknowledged(
            super()._execute_pipeline(connection, commands, raise_on_error), connection, commands, "PIPELINE"
        )

    def _acknowledged(self, replies: list[Any], connection: Any, commands: Any, what: str) -> list[Any]:
        if self.acknowledgement is not None and any(is_write(args[0]) for args, _ in commands):
            self.acknowledgement.wait(connection, what)
        return replies


class AcknowledgedRedis(_Acknowledging, redis.Redis):
    """A client whose writes answer only once ``acknowledgement.replicas`` replicas hold them (see the module)."""

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> AcknowledgedPipeline:
        pipe = AcknowledgedPipeline(self.connection_pool, self.response_callbacks, transaction, shard_hint)
        pipe.acknowledgement = self.acknowledgement
        return pipe
