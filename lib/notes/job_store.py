"""Ingestion jobs of the kb engine in Redis: queued, running, completed or failed, readable from any replica.

Keys::

    kbn:job:{job_id}          hash   JobRecord (a note's text under ``text`` until the job ends)
    kbn:jobs                  zset   every job id, scored by its creation time
    kbn:jobs:{status}         zset   the job ids in that status, scored by creation time
    kbn:jobs:drain-asked      string a drain run has been asked for and has not started (``ask_drain``)

A status change moves the id between the status sets and writes the record in one script, and a finished
job (``completed``/``failed``) never changes again, so a late or repeated report cannot undo an ending.
A runner claims a job before ingesting it (``claim``): the claim names the runner and its time, so two
runners never ingest one job, and a claim older than its lease (its runner died) may be taken over.
The lifecycle itself is ``lib.notes.jobs``.
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, TypeVar, cast

import redis

from lib.errors import InvalidArgumentError, StoreUnavailableError
from lib.notes.models import JobRecord, JobStatus

JOBS = "kbn:jobs"
DRAIN_ASKED = "kbn:jobs:drain-asked"
DEFAULT_LIST = 50
MAX_LIST = 500
_T = TypeVar("_T")

_MOVE = """
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return nil end
if current == 'completed' or current == 'failed' then return current end
local created = redis.call('ZSCORE', KEYS[2], ARGV[1])
redis.call('ZREM', ARGV[3] .. current, ARGV[1])
redis.call('ZADD', ARGV[3] .. ARGV[2], created or 0, ARGV[1])
redis.call('HSET', KEYS[1], 'status', ARGV[2])
for i = 4, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', KEYS[1], ARGV[i])
  else
    redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  end
end
if ARGV[2] == 'completed' or ARGV[2] == 'failed' then redis.call('HDEL', KEYS[1], 'text') end
return ARGV[2]
"""
"""KEYS: job, all jobs; ARGV: job id, new status, status-set prefix, then field/value pairs ('' deletes)."""

_CLAIM = """
local current = redis.call('HGET', KEYS[1], 'status')
if not current then return {'missing', ''} end
if current == 'completed' or current == 'failed' then return {current, ''} end
local owner = redis.call('HGET', KEYS[1], 'runner')
if current == 'running' and owner and owner ~= ARGV[2] then
  local at = tonumber(redis.call('HGET', KEYS[1], 'claimed_at') or '0')
  if tonumber(ARGV[3]) - at < tonumber(ARGV[4]) then return {'held', owner} end
end
if current == 'queued' then
  local created = redis.call('ZSCORE', KEYS[2], ARGV[1])
  redis.call('ZREM', ARGV[5] .. 'queued', ARGV[1])
  redis.call('ZADD', ARGV[5] .. 'running', created or 0, ARGV[1])
  redis.call('HSET', KEYS[1], 'status', 'running', 'started_at', ARGV[6])
end
redis.call('HSET', KEYS[1], 'runner', ARGV[2], 'claimed_at', ARGV[3])
return {'claimed', owner or ''}
"""
"""KEYS: job, all jobs; ARGV: job id, runner, now (epoch s), lease (s), status-set prefix, now (ISO).
Returns [outcome, previous runner]: ``claimed`` (queued, a retry of the same runner, or a stale claim taken
over), ``held`` (another runner's live claim), ``completed``/``failed`` (ended), ``missing``."""


def job_key(job_id: str) -> str:
    return f"kbn:job:{job_id}"


def status_key(status: JobStatus) -> str:
    return f"{JOBS}:{status.value}"


class JobStore:
    """All Redis access for kb jobs. Thread-safe."""

    def __init__(self, client: redis.Redis) -> None:
        self._r = client
        self._move = client.register_script(_MOVE)
        self._claim = client.register_script(_CLAIM)

    def create(self, job: JobRecord) -> JobRecord:
        data = {k: str(v) for k, v in job.model_dump(mode="json").items() if v is not None and k != "tags"}
        data["tags"] = "\x1f".join(job.tags)
        if job.text is not None:
            data["text"] = job.text
        score = job.created_at.timestamp()
        pipe = self._r.pipeline(transaction=True)
        pipe.hset(job_key(job.job_id), mapping=cast(dict[Any, str], data))
        pipe.zadd(JOBS, {job.job_id: score})
        pipe.zadd(status_key(job.status), {job.job_id: score})
        _call(pipe.execute)
        return job

    def get(self, job_id: str) -> JobRecord | None:
        data = cast(dict[str, str], _call(self._r.hgetall, job_key(job_id)))
        return _from_hash(data) if data else None

    def list(self, status: JobStatus | None = None, limit: int = DEFAULT_LIST) -> list[JobRecord]:
        """Newest first, at most ``limit``."""
        if not 1 <= limit <= MAX_LIST:
            raise InvalidArgumentError(f"limit must be from 1 to {MAX_LIST}, got {limit}")
        ids = cast(list[str], _call(self._r.zrevrange, status_key(status) if status else JOBS, 0, limit - 1))
        pipe = self._r.pipeline(transaction=False)
        for job_id in ids:
            pipe.hgetall(job_key(job_id))
        return [_from_hash(row) for row in _call(pipe.execute) if row]

    def counts(self) -> dict[str, int]:
        pipe = self._r.pipeline(transaction=False)
        for status in JobStatus:
            pipe.zcard(status_key(status))
        return {status.value: int(n) for status, n in zip(JobStatus, _call(pipe.execute), strict=True)}

    def claim(self, job_id: str, runner: str, lease_s: float, *, now: float, started_at: str) -> tuple[str, str]:
        """Claim the job for ``runner`` (``_CLAIM``): the outcome and the runner that held it before."""
        args = [job_id, runner, repr(now), repr(lease_s), f"{JOBS}:", started_at]
        outcome, previous = cast(builtins.list[str], _call(self._claim, [job_key(job_id), JOBS], args))
        return outcome, previous

    def oldest(self, status: JobStatus, limit: int) -> builtins.list[str]:
        """The ids of the oldest ``limit`` jobs in ``status``, oldest first."""
        return cast(builtins.list[str], _call(self._r.zrange, status_key(status), 0, limit - 1))

    def claims(self, status: JobStatus, limit: int) -> builtins.list[tuple[str, float]]:
        """The claimed jobs among the oldest ``limit`` in ``status``, with their claims' times."""
        ids = self.oldest(status, limit)
        pipe = self._r.pipeline(transaction=False)
        for job_id in ids:
            pipe.hget(job_key(job_id), "claimed_at")
        return [(job_id, float(at)) for job_id, at in zip(ids, _call(pipe.execute), strict=True) if at]

    def queued_before(self, created_before: float, limit: int) -> builtins.list[str]:
        """The ids of queued jobs created before ``created_before`` (epoch s), oldest first, at most ``limit``."""
        found = _call(self._r.zrangebyscore, status_key(JobStatus.QUEUED), "-inf", created_before, 0, limit)
        return cast(builtins.list[str], found)

    def ask_drain(self, ttl_s: int) -> bool:
        """Whether the caller should start a drain run: ``False`` while one asked for has not yet started (it
        will see the caller's job). The ask expires after ``ttl_s``, should that run never start."""
        return bool(_call(self._r.set, DRAIN_ASKED, "1", nx=True, ex=ttl_s))

    def drain_starting(self) -> None:
        """A drain run starts: jobs queued from now on ask for another (this one may already have looked)."""
        _call(self._r.delete, DRAIN_ASKED)

    def move(self, job_id: str, status: JobStatus, **fields: str | None) -> JobStatus | None:
        """Set the status (and fields) unless the job has already ended; the status it has afterwards."""
        args: list[str] = [job_id, status.value, f"{JOBS}:"]
        for name, value in fields.items():
            args += [name, value or ""]
        result = _call(self._move, [job_key(job_id), JOBS], args)
        return None if result is None else JobStatus(result)


def _from_hash(data: dict[str, str]) -> JobRecord:
    values: dict[str, Any] = {k: v for k, v in data.items() if k in JobRecord.model_fields}
    values["tags"] = [t for t in data.get("tags", "").split("\x1f") if t]
    return JobRecord.model_validate(values)


def _call(fn: Callable[..., _T], *args: Any, **kwargs: Any) -> _T:
    try:
        return fn(*args, **kwargs)
    except (redis.ConnectionError, redis.TimeoutError) as exc:
        raise StoreUnavailableError(f"Redis is not reachable: {exc}") from exc
