"""Settings: read once from the environment into typed groups, one per concern, then passed in.

Nothing else in the project reads ``os.environ`` for configuration. Each group is a pydantic-settings
model that reads only its documented environment names (never its field names: ``HOST`` or ``URL`` in a
shell must not leak in), so a consumer can be handed the one group it reads. Derived defaults
(``CHROMA_PERSIST_DIR``, ``OBJECT_STORE_URL``, ``MODEL_CACHE_DIR``, ``ALLOWED_FILE_ROOTS``) are resolved
here, in :class:`Settings`, so every consumer sees the same absolute paths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal, cast

from pydantic import AliasChoices, BaseModel, Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class SettingsGroup(BaseSettings):
    """A settings group: populated by its environment names (aliases) only; unknown names are refused."""

    model_config = SettingsConfigDict(env_file=None, extra="forbid", validate_by_alias=True, validate_by_name=False)


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


class ExtractionSettings(SettingsGroup):
    """Text extraction from PDFs: OCR of image pages."""

    enable_ocr: bool = Field(default=True, alias="ENABLE_OCR")
    image_ratio_threshold: float = Field(default=0.7, ge=0.0, le=1.0, alias="IMAGE_RATIO_THRESHOLD")
    ocr_workers: int = Field(default=0, ge=0, alias="OCR_WORKERS", description="0 = one per core")
    ocr_dpi: int = Field(default=300, ge=72, le=600, alias="OCR_DPI")


class EmbeddingSettings(SettingsGroup):
    """The encoder of documents and queries, and where its model files are made."""

    batch_size: int = Field(default=32, ge=1, le=512, alias="EMBEDDING_BATCH_SIZE")
    onnx_queries: bool = Field(
        default=True,
        alias="ONNX_QUERY_EMBEDDINGS",
        description="With the torch encoder, embed search queries with an ONNX export of the model (kept in "
        "MODEL_CACHE_DIR)",
    )
    encoder: Literal["torch", "int8"] = Field(
        default="int8",
        alias="EMBEDDING_ENCODER",
        description="Encoder of documents and queries: int8 (the model's ONNX export, int8-quantised, kept in "
        "MODEL_CACHE_DIR) or torch (sentence-transformers); recorded with each collection, switched by the "
        "reencode flow",
    )
    model_cache_dir: Path | None = Field(
        default=None,
        alias="MODEL_CACHE_DIR",
        description="Where the model's ONNX export and its int8 quantisation are made, once per machine; unset = "
        "$XDG_CACHE_HOME/policy-kb/models (~/.cache/policy-kb/models)",
    )
    xdg_cache_home: Path | None = Field(default=None, alias="XDG_CACHE_HOME")


class SearchSettings(SettingsGroup):
    """How searches run: the per-process chunk cache, the result bound, the searches run at once."""

    cache_mb: int = Field(
        default=256,
        ge=0,
        alias="SEARCH_CACHE_MB",
        description="Per-process cache of the searched revisions' chunks for exact search; 0 = always ask Chroma",
    )
    max_results: int = Field(default=50, ge=1, le=1000, alias="MAX_RESULTS")
    threads: int = Field(
        default_factory=lambda: os.cpu_count() or 2,
        ge=1,
        le=64,
        alias="SEARCH_THREADS",
        description="Searches a server process runs at once (the rest wait their turn in order); default: the "
        "CPU count",
    )
    queue_max: int = Field(
        default=64,
        ge=0,
        alias="SEARCH_QUEUE_MAX",
        description="Searches that may wait for a thread of the lane; one more is refused at once (overloaded, "
        "REST 503 with Retry-After)",
    )
    queue_wait_ms: int = Field(
        default=5000,
        ge=1,
        alias="SEARCH_QUEUE_WAIT_MS",
        description="The longest a search waits for a thread of the lane before it is refused (overloaded)",
    )


class FileSettings(SettingsGroup):
    """Which local files ``file_path`` arguments may read, and how large a file or upload may be."""

    allowed_roots: Annotated[list[Path], NoDecode] = Field(
        default_factory=list,
        alias="ALLOWED_FILE_ROOTS",
        description="Folders file_path arguments may read; unset = $POLICY_KB_DATA_DIR/inbox, empty = none",
    )
    max_upload_bytes: int = Field(default=100 * 1024 * 1024, ge=1, alias="MAX_UPLOAD_BYTES")

    @field_validator("allowed_roots", mode="before")
    @classmethod
    def _split_roots(cls, value: object) -> object:
        if isinstance(value, str):
            return [part for part in value.replace(",", ":").split(":") if part.strip()]
        return value


class AuthSettings(SettingsGroup):
    """Static bearer keys of the MCP and REST paths: full and read-only; unset (and no OAuth) = open."""

    api_key: SecretStr | None = Field(default=None, alias="MCP_API_KEY")
    read_api_key: SecretStr | None = Field(default=None, alias="MCP_READ_API_KEY")
    governance_api_key: SecretStr | None = Field(
        default=None,
        alias="GOVERNANCE_API_KEY",
        description="The governance server's own key (it only reads); unset = MCP_API_KEY, empty = no key",
    )
    ui_session_secret: SecretStr | None = Field(
        default=None,
        alias="UI_SESSION_SECRET",
        description="Signs the web page's session cookie; unset: derived from MCP_API_KEY (the same on every replica)",
    )


FORBIDDEN_ALGORITHMS = ("none", "HS256", "HS384", "HS512")


class OAuthSettings(SettingsGroup):
    """The OAuth 2.1 resource server (MCP authorization): JWT access tokens of one issuer; unset issuer = off."""

    issuer_url: str | None = Field(
        default=None,
        alias="OAUTH_ISSUER_URL",
        description="The authorization server; its RFC 8414 metadata names the JWKS. Unset = static keys only",
    )
    audience: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        alias="OAUTH_AUDIENCE",
        description="Accepted token audiences, comma-separated; unset = each server's own resource URL",
    )
    algorithms: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["RS256", "PS256", "ES256", "EdDSA"],
        alias="OAUTH_ALGORITHMS",
        description="Accepted JWT signature algorithms, comma-separated (asymmetric only: never none or HS*)",
    )
    jwks_cache_seconds: int = Field(
        default=3600, ge=1, alias="OAUTH_JWKS_CACHE_SECONDS", description="How long a fetched JWKS is used"
    )
    jwks_min_refresh_seconds: float = Field(
        default=30.0,
        ge=0,
        alias="OAUTH_JWKS_MIN_REFRESH_SECONDS",
        description="At most one JWKS refetch per this interval for tokens naming an unknown kid",
    )
    leeway_seconds: int = Field(default=30, ge=0, le=300, alias="OAUTH_LEEWAY_SECONDS", description="exp/nbf slack")
    ui_client_id: str | None = Field(
        default=None,
        alias="UI_OAUTH_CLIENT_ID",
        description="The web page's client at the issuer (authorization code + PKCE); unset = key sign-in only",
    )
    ui_client_secret: SecretStr | None = Field(
        default=None, alias="UI_OAUTH_CLIENT_SECRET", description="That client's secret (client_secret_basic)"
    )
    resource_base_url: str | None = Field(
        default=None,
        alias="OAUTH_RESOURCE_BASE_URL",
        description="scheme://host callers reach the servers at (each server adds :port); unset = "
        "http://POLICY_KB_HOST",
    )

    @field_validator("audience", "algorithms", mode="before")
    @classmethod
    def _split(cls, value: object) -> object:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("algorithms")
    @classmethod
    def _asymmetric_only(cls, value: list[str]) -> list[str]:
        refused = [alg for alg in value if alg.lower() in {a.lower() for a in FORBIDDEN_ALGORITHMS}]
        if refused or not value:
            raise ValueError(f"OAUTH_ALGORITHMS: {', '.join(refused) or 'empty'} not accepted (asymmetric only)")
        return value

    def resource_url(self, host: str, port: int) -> str:
        """A server's resource identifier (RFC 8707/9728): the origin callers reach it at."""
        base = (self.resource_base_url or f"http://{host}").rstrip("/")
        return f"{base}:{port}"


class RateLimitSettings(SettingsGroup):
    """Requests per caller and server, counted in Redis so every replica shares the budget; unset = no limit."""

    per_minute: int | None = Field(
        default=None, ge=1, alias="RATE_LIMIT_PER_MINUTE", description="Requests per caller per window"
    )
    window_seconds: int = Field(
        default=60, ge=1, le=3600, alias="RATE_LIMIT_WINDOW_SECONDS", description="The window (tests shorten it)"
    )


class ServiceSettings(SettingsGroup):
    """Where the servers listen and how the policy-kb process serves."""

    host: str = Field(default="127.0.0.1", alias="POLICY_KB_HOST")
    policy_kb_port: int = Field(default=3003, alias="POLICY_KB_PORT")
    policy_kb_workers: int = Field(
        default=1,
        ge=1,
        le=64,
        alias="POLICY_KB_WORKERS",
        description="Worker processes for the policy-kb server alone (stateless: any worker answers any request)",
    )
    document_store_port: int = Field(default=3002, alias="DOCUMENT_STORE_PORT")
    kb_mcp_port: int = Field(default=3004, alias="KB_MCP_PORT")
    governance_port: int = Field(default=3005, alias="GOVERNANCE_PORT")
    single_exchange: bool = Field(
        default=False,
        alias="MCP_SINGLE_EXCHANGE",
        description="Answer plain /mcp requests in the single-exchange lane (SDK internals, verified with one "
        "mcp release; with any other the SDK transport serves alone)",
    )


class KbSettings(SettingsGroup):
    """The kb server (spec 002): the engine it calls, its callers' key, chunked uploads."""

    engine_url: str | None = Field(
        default=None,
        alias="KB_ENGINE_URL",
        description="The kb engine the kb MCP server calls; unset = this deployment's own service",
    )
    engine_api_key: SecretStr | None = Field(default=None, alias="KB_API_KEY", description="The engine's key")
    mcp_api_key: SecretStr | None = Field(
        default=None, alias="KB_MCP_API_KEY", description="Callers of the kb MCP server; unset = open"
    )
    max_upload_bytes: int = Field(default=100 * 1024 * 1024, ge=1, alias="KB_MAX_UPLOAD_BYTES")
    upload_ttl_seconds: int = Field(default=600, ge=1, alias="KB_UPLOAD_TTL_SECONDS")
    upload_sweep_seconds: int = Field(
        default=300,
        ge=1,
        alias="KB_UPLOAD_SWEEP_SECONDS",
        description="Without PREFECT_API_URL, the kb server itself removes abandoned uploads this often (one "
        "replica of the deployment per interval); with it, the cleanup-kb-uploads schedule does",
    )


class GovernanceSettings(SettingsGroup):
    """The governance server (spec 004)."""

    log_questions: bool = Field(
        default=False,
        alias="GOVERNANCE_LOG_QUESTIONS",
        description="Log each query's question in clear; by default only its hash is logged (spec 004 NF4)",
    )


class JobSettings(SettingsGroup):
    """Long work (Prefect flows): where it is submitted, retried, and when it counts as stuck."""

    prefect_api_url: str | None = Field(
        default=None,
        alias="PREFECT_API_URL",
        description="A Prefect server: long work is submitted to its deployments; unset = run in-process",
    )
    processing_timeout_seconds: int = Field(
        default=3600,
        ge=0,
        alias="PROCESSING_TIMEOUT_SECONDS",
        description="A revision still `processing` this long after creation is reported stuck by the audit",
    )
    ingest_retry_delay_seconds: float = Field(
        default=2.0,
        ge=0,
        alias="INGEST_RETRY_DELAY_SECONDS",
        description="Before the first retry of an ingestion's pipeline after a store outage; doubled for each of "
        "its 3 retries (2, 4, 8 s: a store may be down about 15 s before the revision is marked failed)",
    )


class ObservabilitySettings(SettingsGroup):
    """Metrics (``/metrics`` on every server) and traces (OpenTelemetry over OTLP, off unless an endpoint is set)."""

    metrics_api_key: SecretStr | None = Field(
        default=None,
        alias="METRICS_API_KEY",
        description="A key that may read /metrics only (a scraper's); the service's own keys read it too",
    )
    multiproc_dir: Path | None = Field(
        default=None,
        alias="PROMETHEUS_MULTIPROC_DIR",
        description="prometheus-client's folder shared by several worker processes; set by `serve` when unset",
    )
    otlp_endpoint: str | None = Field(
        default=None, alias="OTEL_EXPORTER_OTLP_ENDPOINT", description="Where spans go (OTLP/gRPC); unset = no tracing"
    )
    service_name: str = Field(default="policy-kb", min_length=1, alias="OTEL_SERVICE_NAME")


class Settings(BaseModel):
    """Every knob of policy-kb, by concern. Environment names are the contract with operators and compose files."""

    paths: PathSettings = Field(default_factory=PathSettings)
    redis: RedisSettings = Field(default_factory=RedisSettings)
    chroma: ChromaSettings = Field(default_factory=ChromaSettings)
    objects: ObjectStoreSettings = Field(default_factory=ObjectStoreSettings)
    extraction: ExtractionSettings = Field(default_factory=ExtractionSettings)
    embeddings: EmbeddingSettings = Field(default_factory=EmbeddingSettings)
    search: SearchSettings = Field(default_factory=SearchSettings)
    files: FileSettings = Field(default_factory=FileSettings)
    auth: AuthSettings = Field(default_factory=AuthSettings)
    oauth: OAuthSettings = Field(default_factory=OAuthSettings)
    rate_limit: RateLimitSettings = Field(default_factory=RateLimitSettings)
    service: ServiceSettings = Field(default_factory=ServiceSettings)
    kb: KbSettings = Field(default_factory=KbSettings)
    governance: GovernanceSettings = Field(default_factory=GovernanceSettings)
    jobs: JobSettings = Field(default_factory=JobSettings)
    observability: ObservabilitySettings = Field(default_factory=ObservabilitySettings)

    @model_validator(mode="after")
    def _resolve_paths(self) -> Settings:
        paths, chroma, objects, embeddings, files = self.paths, self.chroma, self.objects, self.embeddings, self.files
        paths.data_dir = paths.data_dir.expanduser().resolve()
        chroma.persist_dir = (chroma.persist_dir or paths.data_dir / "chroma").expanduser().resolve()
        if not objects.url:
            objects.url = (paths.data_dir / "objects").as_uri()
        if embeddings.model_cache_dir is None:
            embeddings.model_cache_dir = (embeddings.xdg_cache_home or Path("~/.cache")) / "policy-kb" / "models"
        embeddings.model_cache_dir = embeddings.model_cache_dir.expanduser().resolve()
        if "allowed_roots" not in files.model_fields_set:
            files.allowed_roots = [paths.inbox_dir]
        files.allowed_roots = [root.expanduser().resolve() for root in files.allowed_roots]
        return self

    def replace(self, **overrides: Any) -> Settings:
        """An independent copy with some knobs changed, named as :func:`load_settings` names them (not re-validated)."""
        copy = self.model_copy(deep=True)
        for name, value in overrides.items():
            group, field = _route(name)
            setattr(getattr(copy, group), field, value)
        return copy


# The keyword overrides load_settings and Settings.replace take: one flat name per knob (the names tests and
# CLI flags have always used), and the group field it sets. test_config checks it names every field once.
OVERRIDES: dict[str, str] = {
    "data_dir": "paths.data_dir",
    "redis_url": "redis.url",
    "redis_server_binary": "redis.server_binary",
    "redis_sentinels": "redis.sentinels",
    "redis_sentinel_master": "redis.sentinel_master",
    "redis_password": "redis.password",
    "redis_sentinel_password": "redis.sentinel_password",
    "redis_min_replicas_acked": "redis.min_replicas_acked",
    "redis_wait_timeout_ms": "redis.wait_timeout_ms",
    "chroma_persist_dir": "chroma.persist_dir",
    "chroma_host": "chroma.host",
    "chroma_port": "chroma.port",
    "policy_collection": "chroma.policy_collection",
    "document_collection": "chroma.document_collection",
    "kb_collection": "chroma.kb_collection",
    "governance_collection": "chroma.governance_collection",
    "object_store_url": "objects.url",
    "s3_endpoint_url": "objects.s3_endpoint_url",
    "aws_access_key_id": "objects.aws_access_key_id",
    "aws_secret_access_key": "objects.aws_secret_access_key",
    "aws_region": "objects.aws_region",
    "enable_ocr": "extraction.enable_ocr",
    "image_ratio_threshold": "extraction.image_ratio_threshold",
    "ocr_workers": "extraction.ocr_workers",
    "ocr_dpi": "extraction.ocr_dpi",
    "embedding_batch_size": "embeddings.batch_size",
    "onnx_query_embeddings": "embeddings.onnx_queries",
    "embedding_encoder": "embeddings.encoder",
    "model_cache_dir": "embeddings.model_cache_dir",
    "xdg_cache_home": "embeddings.xdg_cache_home",
    "search_cache_mb": "search.cache_mb",
    "max_results": "search.max_results",
    "search_threads": "search.threads",
    "search_queue_max": "search.queue_max",
    "search_queue_wait_ms": "search.queue_wait_ms",
    "allowed_file_roots": "files.allowed_roots",
    "max_upload_bytes": "files.max_upload_bytes",
    "mcp_api_key": "auth.api_key",
    "mcp_read_api_key": "auth.read_api_key",
    "governance_api_key": "auth.governance_api_key",
    "oauth_issuer_url": "oauth.issuer_url",
    "oauth_audience": "oauth.audience",
    "oauth_algorithms": "oauth.algorithms",
    "oauth_jwks_cache_seconds": "oauth.jwks_cache_seconds",
    "oauth_jwks_min_refresh_seconds": "oauth.jwks_min_refresh_seconds",
    "oauth_leeway_seconds": "oauth.leeway_seconds",
    "oauth_resource_base_url": "oauth.resource_base_url",
    "ui_oauth_client_id": "oauth.ui_client_id",
    "ui_oauth_client_secret": "oauth.ui_client_secret",
    "rate_limit_per_minute": "rate_limit.per_minute",
    "rate_limit_window_seconds": "rate_limit.window_seconds",
    "ui_session_secret": "auth.ui_session_secret",
    "host": "service.host",
    "policy_kb_port": "service.policy_kb_port",
    "policy_kb_workers": "service.policy_kb_workers",
    "document_store_port": "service.document_store_port",
    "kb_mcp_port": "service.kb_mcp_port",
    "governance_port": "service.governance_port",
    "mcp_single_exchange": "service.single_exchange",
    "kb_engine_url": "kb.engine_url",
    "kb_api_key": "kb.engine_api_key",
    "kb_mcp_api_key": "kb.mcp_api_key",
    "kb_max_upload_bytes": "kb.max_upload_bytes",
    "kb_upload_ttl_seconds": "kb.upload_ttl_seconds",
    "kb_upload_sweep_seconds": "kb.upload_sweep_seconds",
    "governance_log_questions": "governance.log_questions",
    "prefect_api_url": "jobs.prefect_api_url",
    "processing_timeout_seconds": "jobs.processing_timeout_seconds",
    "ingest_retry_delay_seconds": "jobs.ingest_retry_delay_seconds",
    "metrics_api_key": "observability.metrics_api_key",
    "prometheus_multiproc_dir": "observability.multiproc_dir",
    "otel_exporter_otlp_endpoint": "observability.otlp_endpoint",
    "otel_service_name": "observability.service_name",
}


GROUPS: dict[str, type[SettingsGroup]] = {
    name: cast("type[SettingsGroup]", field.annotation) for name, field in Settings.model_fields.items()
}


def _route(name: str) -> tuple[str, str]:
    if name not in OVERRIDES:
        raise TypeError(f"unknown setting {name!r}; known: {', '.join(sorted(OVERRIDES))}")
    group, field = OVERRIDES[name].split(".")
    return group, field


def load_settings(**overrides: Any) -> Settings:
    """Build the settings from the environment; keyword overrides (flat names, see ``OVERRIDES``) win."""
    by_group: dict[str, dict[str, Any]] = {group: {} for group in GROUPS}
    for name, value in overrides.items():
        group, field = _route(name)
        by_group[group][GROUPS[group].model_fields[field].alias or field] = value
    return Settings.model_validate({group: GROUPS[group](**values) for group, values in by_group.items()})
