"""The embedded default: a private ``redis-server`` under ``$POLICY_KB_DATA_DIR/redis``.

With ``REDIS_URL`` unset every local process of the project (CLI, flows, MCP service) shares one
server listening on a unix socket in the data directory. The first process to need it starts it
(under a ``filelock`` lock, so two processes starting at once do not race; mirakuru's
``UnixSocketExecutor`` starts it and waits for its socket) and it keeps running after that process
exits, with AOF persistence, so the registry survives restarts like a real deployment's: the server
daemonises and carries no mirakuru process mark (the mark by which mirakuru kills what an executor
started when the starting interpreter exits), so its survival never depends on mirakuru missing it.

``appendfsync always``: Redis fsyncs the AOF before it answers a write, so a write the registry was told
succeeded survives ``kill -9`` of the server and a crash of the machine alike (``everysec`` would lose up
to a second of acknowledged writes to a power cut). The registry writes a few keys per ingestion, so the
cost does not show. Every client (``redis_client``) reconnects by itself after a restart: each command is
retried on a fresh connection with a short backoff, then ``registry_unavailable``.

With ``REDIS_SENTINELS`` set, no server is embedded and ``REDIS_URL`` is not used: every client asks the
sentinels for the primary (``lib.stores.sentinel``) and each write answers success only once a replica holds
it (``lib.stores.acknowledged``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import redis
import redis.asyncio as aioredis
from filelock import FileLock
from mirakuru import UnixSocketExecutor
from mirakuru.exceptions import ExecutorError
from redis.backoff import ExponentialWithJitterBackoff
from redis.retry import Retry

from lib.config import Settings
from lib.errors import RegistryUnavailableError
from lib.observability import store_call
from lib.stores.acknowledged import AcknowledgedRedis, Acknowledgement
from lib.stores.sentinel import async_sentinel_client, sentinel_client

logger = logging.getLogger(__name__)

_START_TIMEOUT_S = 10.0
COMMAND_RETRIES = 3
RETRY_BACKOFF = ExponentialWithJitterBackoff(base=0.1, cap=1.0)
"""Between attempts of one command while Redis is away: about 0.1, 0.2, 0.4 s, each at most 1 s."""
CONNECT_TIMEOUT_S = 2.0
SOCKET_TIMEOUT_S = 10.0


def _ping(url: str) -> bool:
    try:
        return bool(redis.Redis.from_url(url, socket_connect_timeout=0.5, socket_timeout=0.5).ping())
    except (redis.ConnectionError, redis.TimeoutError, OSError):
        return False


def embedded_url(redis_dir: Path) -> str:
    return f"unix://{redis_dir / 'redis.sock'}"


def ensure_embedded_redis(redis_dir: Path, binary: str = "redis-server") -> str:
    """Return the URL of the project's private Redis, starting it if it is not already running."""
    redis_dir.mkdir(parents=True, exist_ok=True)
    url = embedded_url(redis_dir)
    if _ping(url):
        return url
    executable = shutil.which(binary)
    if executable is None:
        raise RegistryUnavailableError(
            f"{binary} is not installed; install it (apt-get install redis-server) or set REDIS_URL"
        )
    with FileLock(redis_dir / "start.lock"):
        if _ping(url):
            return url
        socket_path = redis_dir / "redis.sock"
        socket_path.unlink(missing_ok=True)
        args = [
            executable,
            "--port",
            "0",
            "--unixsocket",
            str(socket_path),
            "--unixsocketperm",
            "700",
            "--dir",
            str(redis_dir),
            "--appendonly",
            "yes",
            "--appendfsync",
            "always",
            "--daemonize",
            "yes",
            "--pidfile",
            str(redis_dir / "redis.pid"),
            "--logfile",
            str(redis_dir / "redis.log"),
            "--save",
            "",
        ]
        quiet = subprocess.DEVNULL
        server = _DetachedServer(
            args, str(socket_path), timeout=_START_TIMEOUT_S, sleep=0.05, stdin=quiet, stdout=quiet, stderr=quiet
        )
        try:
            server.start()
        except ExecutorError as exc:
            raise RegistryUnavailableError(
                f"embedded redis-server did not start ({exc}); see {redis_dir / 'redis.log'}"
            ) from exc
        finally:
            server.release()
        logger.info("redis.embedded_started dir=%s", redis_dir)
        return url


class _DetachedServer(UnixSocketExecutor):
    """A daemonising server that outlives this process: its launcher (which exits once the server has forked)
    carries no mirakuru mark, so neither this executor nor mirakuru's exit hook kills the server."""

    @property
    def envvars(self) -> dict[str, str]:
        return os.environ | self._envvars

    def release(self) -> None:
        """Forget the launcher (reaped: it has exited by the time the socket answers) without stopping anything."""
        if self.process is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.process.wait(timeout=_START_TIMEOUT_S)
            self.process = None


def stop_embedded_redis(redis_dir: Path) -> bool:
    """Shut the private server down (AOF is flushed). Returns False if it was not running."""
    url = embedded_url(redis_dir)
    if not _ping(url):
        return False
    with contextlib.suppress(redis.ConnectionError):
        redis.Redis.from_url(url).shutdown(nosave=False)
    return True


def redis_client(settings: Settings) -> redis.Redis:
    """A client of the primary named by ``REDIS_SENTINELS``, or of ``REDIS_URL``, or of the embedded server.

    A connection lost (a restart, ``kill -9``, a failover) is replaced on the next command: each command is
    retried ``COMMAND_RETRIES`` times on a new connection (through Sentinel: to whichever primary the sentinels
    name then), ``RETRY_BACKOFF`` apart, so a request that arrives while Redis is down fails within about two
    seconds (``registry_unavailable``) and the first one after it is back succeeds. A WATCHed transaction is
    never retried blindly: redis-py raises and the registry's optimistic loop re-reads
    (``lib.policies.transaction``). With ``replicas_to_acknowledge`` (1 under Sentinel unless set), a write
    answers only once that many replicas hold it (``lib.stores.acknowledged``).
    """
    config = settings.redis
    options: dict[str, Any] = {
        "decode_responses": True,
        "health_check_interval": 30,
        "socket_connect_timeout": CONNECT_TIMEOUT_S,
        "socket_timeout": SOCKET_TIMEOUT_S,
        "retry": Retry(RETRY_BACKOFF, COMMAND_RETRIES),
    }
    redis_class = ObservedAcknowledgedRedis if config.replicas_to_acknowledge else ObservedRedis
    if config.sentinels:
        client = sentinel_client(config, redis_class, **options)
    else:
        url = config.url or ensure_embedded_redis(settings.paths.redis_dir, config.server_binary)
        client = redis_class.from_url(url, **options)
    if isinstance(client, AcknowledgedRedis):
        client.acknowledgement = Acknowledgement(config.replicas_to_acknowledge, config.wait_timeout_ms)
    return client


class _Observed:
    """Each command sent alone, and each pipeline run, in a ``store_call("redis", ...)``: a span, and a failure
    counted (a transaction's ``WatchError`` is the optimistic loop's signal to re-read, not a failure)."""

    def execute_command(self, *args: Any, **options: Any) -> Any:
        with store_call("redis", str(args[0]) if args else "command"):
            return super().execute_command(*args, **options)  # type: ignore[misc]

    def pipeline(self, transaction: bool = True, shard_hint: Any = None) -> Any:
        pipe = super().pipeline(transaction, shard_hint)  # type: ignore[misc]
        execute = pipe.execute

        def observed(raise_on_error: bool = True) -> Any:
            with store_call("redis", "EXEC" if transaction else "PIPELINE", expected=(redis.WatchError,)):
                return execute(raise_on_error)

        pipe.execute = observed
        return pipe


class ObservedRedis(_Observed, redis.Redis):
    pass


class ObservedAcknowledgedRedis(_Observed, AcknowledgedRedis):
    pass


def async_redis_connector(settings: Settings) -> Callable[..., aioredis.Redis]:
    """Makes asyncio clients (given their connection options) of the same Redis as :func:`redis_client`; the
    embedded server is started now, if it is the one. Their writes are not WAITed for: the asyncio users, the
    SSE relay and the rate limiter, keep only short-lived keys that they write again after any Redis hiccup.

    Each client holds at most ``REDIS_ASYNC_MAX_CONNECTIONS`` connections, and past them a command waits up to
    ``REDIS_POOL_TIMEOUT_SECONDS`` for one to free (a blocking pool): a burst of a thousand SSE sessions queues
    for connections instead of failing with redis-py's "Too many connections", and leaves no more than the bound
    open after it. A command that waited in vain raises ``ConnectionError`` (a ``RedisError``), which the relay
    answers 503 with ``Retry-After``."""
    config = settings.redis
    most, wait = config.async_max_connections, config.pool_timeout_seconds
    if config.sentinels:
        return partial(async_sentinel_client, config, max_connections=most, timeout=wait)
    url = config.url or ensure_embedded_redis(settings.paths.redis_dir, config.server_binary)
    return partial(bounded_async_client, url, max_connections=most, timeout=wait)


def bounded_async_client(url: str, *, max_connections: int, timeout: float, **options: Any) -> aioredis.Redis:
    """An asyncio client of ``url`` over a pool of at most ``max_connections`` that waits ``timeout`` seconds for a
    free one; ``options`` are its connections' (timeouts, retry). Closing the client closes the pool."""
    pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=max_connections, timeout=timeout, **options)
    return aioredis.Redis.from_pool(pool)


def redis_location(settings: Settings) -> str:
    """Where the registry's Redis is, for people: the sentinels and service name, or the URL (embedded: started)."""
    if settings.redis.sentinels:
        return f"sentinel {settings.redis.sentinel_master} via {','.join(settings.redis.sentinels)}"
    return settings.redis.url or ensure_embedded_redis(settings.paths.redis_dir, settings.redis.server_binary)
