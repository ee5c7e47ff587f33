"""Where the stores are: data paths, Redis (and Sentinel), Chroma and the object store."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

from pydantic import AliasChoices, Field, SecretStr, field_validator
from pydantic_settings import NoDecode

from lib.config.base import SettingsGroup


class PathSettings(SettingsGroup):
    """The data directory every embedded store lives under."""

    data_dir: Path = Field(default=Path("./data"), alias="POLICY_KB_DATA_DIR")

    @property
    def inbox_dir(self) -> Path:
        """The file root when ``ALLOWED_FILE_ROOTS`` is unset (created at start)."""
        return self.data_dir / "inbox"

    @property
    def redis_dir(self) -> Path:
        """Where the embedded redis-server keeps its socket, AOF and pid file."""
        return self.data_dir / "redis"


class RedisSettings(SettingsGroup):
    """The registry's Redis: a primary found through Sentinel, a server by URL, or neither for an embedded
    redis-server under the data directory. With Sentinel, a write answers success only once
    ``replicas_to_acknowledge`` replicas hold it (``lib.stores.acknowledged``)."""

    url: str | None = Field(default=None, alias="REDIS_URL")
    server_binary: str = Field(default="redis-server", alias="REDIS_SERVER_BIN")
    sentinels: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        alias="REDIS_SENTINELS",
        description="Sentinels to ask for the primary, host:port comma-separated; set = REDIS_URL is not used",
    )
    sentinel_master: str = Field(
        default="policy-kb", min_length=1, alias="REDIS_SENTINEL_MASTER", description="The name Sentinel monitors"
    )
    password: SecretStr | None = Field(
        default=None,
        alias="REDIS_PASSWORD",
        description="The primary's and replicas' password with REDIS_SENTINELS (REDIS_URL carries its own)",
    )
    sentinel_password: SecretStr | None = Field(default=None, alias="REDIS_SENTINEL_PASSWORD")
    min_replicas_acked: int | None = Field(
        default=None,
        ge=0,
        alias="REDIS_MIN_REPLICAS_ACKED",
        description="Replicas that must hold a write before it answers success (WAIT after each write); unset = "
        "1 with REDIS_SENTINELS, else 0",
    )
    wait_timeout_ms: int = Field(
        default=1000,
        ge=1,
        le=5000,
        alias="REDIS_WAIT_TIMEOUT_MS",
        description="How long a write waits for its replicas before it answers registry_unavailable",
    )
    async_max_connections: int = Field(
        default=32,
        ge=4,
        le=10_000,
        alias="REDIS_ASYNC_MAX_CONNECTIONS",
        description="Connections each asyncio client (the SSE relay, the rate limiter) holds at most; past them a "
        "command waits REDIS_POOL_TIMEOUT_SECONDS for one to free (decision 0045)",
    )
    pool_timeout_seconds: float = Field(
        default=2.0,
        gt=0,
        le=60,
        alias="REDIS_POOL_TIMEOUT_SECONDS",
        description="How long an asyncio command waits for a free connection before it fails (a relayed SSE "
        "message then answers 503 with Retry-After)",
    )

    @field_validator("sentinels", mode="before")
    @classmethod
    def _split_sentinels(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("sentinels")
    @classmethod
    def _check_sentinels(cls, value: list[str]) -> list[str]:
        for address in value:
            host, _, port = address.rpartition(":")
            if not host or not port.isdigit() or not 0 < int(port) < 65536:
                raise ValueError(f"REDIS_SENTINELS: {address!r} is not host:port")
        return value

    @property
    def sentinel_addresses(self) -> list[tuple[str, int]]:
        return [(host, int(port)) for host, _, port in (address.rpartition(":") for address in self.sentinels)]

    @property
    def replicas_to_acknowledge(self) -> int:
        """How many replicas must hold each write before it answers success (0: no WAIT)."""
        if self.min_replicas_acked is not None:
            return self.min_replicas_acked
        return 1 if self.sentinels else 0


def _collection(default: str, alias: str, description: str) -> Any:
    """A Chroma collection name: 3 to 63 characters, as Chroma requires."""
    return Field(default=default, min_length=3, max_length=63, alias=alias, description=description)


class ChromaSettings(SettingsGroup):
    """Where the vectors live (embedded under the data directory, or a server) and the collection names."""

    persist_dir: Path | None = Field(default=None, alias="CHROMA_PERSIST_DIR")
    host: str | None = Field(default=None, alias="CHROMA_HOST")
    port: int = Field(default=8000, alias="CHROMA_PORT")
    policy_collection: str = _collection(
        "policy_docs", "CHROMA_POLICY_COLLECTION", "Policy chunks; one per deployment (tests use one each)"
    )
    document_collection: str = _collection(
        "application_docs", "CHROMA_DOCUMENT_COLLECTION", "Application-document chunks (spec 003 FR-008)"
    )
    kb_collection: str = _collection("kb_docs", "CHROMA_KB_COLLECTION", "Notes and uploaded files")
    governance_collection: str = Field(
        default="governance_docs",
        min_length=3,
        max_length=63,
        alias="CHROMA_GOVERNANCE_COLLECTION",
        validation_alias=AliasChoices("CHROMA_GOVERNANCE_COLLECTION", "CHROMA_COLLECTION"),
        description="Governance chunks; CHROMA_COLLECTION, spec 004's name for it, is read when this is unset",
    )


class ObjectStoreSettings(SettingsGroup):
    """The object store of originals and extracted text: ``file://`` or ``s3://`` (S3/MinIO)."""

    url: str | None = Field(default=None, alias="OBJECT_STORE_URL")
    s3_endpoint_url: str | None = Field(default=None, alias="S3_ENDPOINT_URL")
    aws_access_key_id: str | None = Field(default=None, alias="AWS_ACCESS_KEY_ID")
    aws_secret_access_key: SecretStr | None = Field(default=None, alias="AWS_SECRET_ACCESS_KEY")
    aws_region: str = Field(default="us-east-1", alias="AWS_DEFAULT_REGION")
