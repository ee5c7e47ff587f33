"""How the servers run: ports and hosts, the kb and governance servers, Prefect jobs, metrics and traces."""

from __future__ import annotations

from pathlib import Path

from pydantic import Field, SecretStr

from lib.config.base import SettingsGroup


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
    allow_unauthenticated: bool = Field(
        default=False,
        alias="ALLOW_UNAUTHENTICATED",
        description="Serve a server that has no key and no OAuth (open to anyone who reaches it); only on a "
        "loopback POLICY_KB_HOST. Unset: a server without credentials refuses to start (decision 0045)",
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
        default=None,
        alias="KB_MCP_API_KEY",
        description="Callers of the kb MCP server; unset = refused at start-up unless ALLOW_UNAUTHENTICATED",
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
    local_api_start_timeout_seconds: float = Field(
        default=120.0,
        gt=0,
        alias="LOCAL_API_START_TIMEOUT_SECONDS",
        description="Embedded default: how long one start of Prefect's temporary local API may take (wall clock; "
        "tried 3 times). A job whose local API does not start runs without Prefect",
    )
    task_ttl_seconds: int = Field(
        default=3600,
        ge=1,
        alias="TASK_TTL_SECONDS",
        description="How long a finished MCP task (an ingestion run as a task) and its result stay readable with "
        "tasks/get after it finished; a working task is kept until it ends",
    )
    task_max: int = Field(
        default=256,
        ge=1,
        alias="TASK_MAX",
        description="MCP tasks one server process keeps at once, working or finished; past it a new one is "
        "refused (overloaded) until finished ones expire",
    )
    task_max_per_caller: int = Field(
        default=4,
        ge=1,
        alias="TASK_MAX_PER_CALLER",
        description="MCP tasks one caller (key, OAuth subject, or address) may have working at once",
    )
    task_poll_interval_ms: int = Field(
        default=1000,
        ge=100,
        alias="TASK_POLL_INTERVAL_MS",
        description="How often a client is asked to poll a working MCP task (its pollIntervalMs)",
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
    trace_allocations: int = Field(
        default=0,
        ge=0,
        le=64,
        alias="POLICY_KB_TRACE_ALLOCATIONS",
        description="Frames tracemalloc keeps per allocation, for SIGUSR2's snapshots; 0 = not traced",
    )
