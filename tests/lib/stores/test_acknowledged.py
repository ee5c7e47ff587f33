"""Acknowledged writes (``lib.stores.acknowledged``) against a real redis-server with no replica: every write
asks for one, so none is ever acknowledged. A write that falls short raises once and is applied once (never
sent again by the client's retry), each registry reports it as it reports Redis being down, and reads wait for
nothing."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
import redis

from lib.config import Settings, load_settings
from lib.errors import RegistryUnavailableError, StoreUnavailableError
from lib.notes.registry import NoteRegistry
from lib.policies.models import PolicyCreate
from lib.policies.registry import PolicyRegistry
from lib.stores.acknowledged import WRITE_COMMANDS, AcknowledgedRedis, UnacknowledgedWriteError, is_write
from lib.stores.redis_server import redis_client


@pytest.fixture
def settings(tmp_path: Path, redis_url: str) -> Settings:
    return load_settings(data_dir=tmp_path, redis_url=redis_url, redis_min_replicas_acked=1, redis_wait_timeout_ms=50)


@pytest.fixture
def key() -> str:
    return f"acknowledged:{uuid.uuid4().hex}"


def test_every_write_command_of_the_server_waits(redis_url: str) -> None:
    names = redis.Redis.from_url(redis_url, decode_responses=True).command_list(category="write")
    server_writes = {str(name).split("|", 1)[0].upper() for name in names}
    assert server_writes, "the server lists its write commands"
    assert server_writes <= WRITE_COMMANDS
    assert is_write("XGROUP CREATE") and is_write("evalsha") and not is_write("HGETALL") and not is_write("WAIT")


def test_with_a_url_and_no_replicas_asked_for_the_client_is_redis_own(tmp_path: Path, redis_url: str) -> None:
    client = redis_client(load_settings(data_dir=tmp_path, redis_url=redis_url))
    assert isinstance(client, redis.Redis) and not isinstance(client, AcknowledgedRedis)  # spanned, never WAITing


def test_an_unacknowledged_write_raises_and_is_applied_once(settings: Settings, key: str) -> None:
    client = redis_client(settings)
    assert isinstance(client, AcknowledgedRedis)
    plain = redis.Redis.from_url(settings.redis.url or "", decode_responses=True)

    with pytest.raises(UnacknowledgedWriteError, match="0 of 1"):
        client.incr(key)
    assert plain.get(key) == "1", "applied by the primary, and not sent again"

    with client.pipeline(transaction=True) as pipe:
        pipe.incr(key)
        with pytest.raises(UnacknowledgedWriteError):
            pipe.execute()
    assert plain.get(key) == "2"

    with pytest.raises(UnacknowledgedWriteError):
        client.register_script("return redis.call('INCR', KEYS[1])")(keys=[key])
    assert plain.get(key) == "3"


def test_reads_wait_for_no_replica(settings: Settings, key: str) -> None:
    client = redis_client(settings)
    redis.Redis.from_url(settings.redis.url or "").set(key, "value")
    assert client.get(key) == "value"
    with client.pipeline(transaction=False) as pipe:
        pipe.get(key)
        pipe.exists(key)
        assert pipe.execute() == ["value", 1]


def test_each_registry_reports_an_unacknowledged_write_as_its_store_unavailable(settings: Settings) -> None:
    client = redis_client(settings)
    source = f"ACK_{uuid.uuid4().hex[:8].upper()}"
    with pytest.raises(RegistryUnavailableError):
        PolicyRegistry(client).create_policy(PolicyCreate(source=source, title="t", category="national_policy"))
    with pytest.raises(StoreUnavailableError):
        NoteRegistry(client).allocate_id()
