"""Settings: read once from the environment into one typed object, then passed in.

Nothing else in the project reads ``os.environ`` for configuration. Derived defaults
(``CHROMA_PERSIST_DIR`` and ``OBJECT_STORE_URL`` live under ``POLICY_KB_DATA_DIR``) are resolved
here so every consumer sees the same absolute paths.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import Field, SecretStr, field_validator, model_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict


class Settings(BaseSettings):
    """Every knob of policy-kb. Environment names are the contract with operators and compose files."""

    model_config = SettingsConfigDict(env_file=None, extra="ignore", populate_by_name=True)

    # Stores
    redis_url: str | None = Field(default=None, alias="REDIS_URL")
    data_dir: Path = Field(default=Path("./data"), alias="POLICY_KB_DATA_DIR")
    chroma_persist_dir: Path | None = Field(default=None, alias="CHROMA_PERSIST_DIR")
    chroma_host: str | None = Field(default=None, alias="CHROMA_HOST")
    chroma_port: int = Field(default=8000, alias="CHROMA_PORT")
    object_store_url: str | None = Field(default=None, alias="OBJECT_STORE_URL")
    s3_endpoint_url: str | None = Field(default=None, alias="S3_ENDPOINT_URL")
    aws_access_key_id: str | None = Field(default=None, alias="AWS_ACCESS_KEY_ID")
    aws_secret_access_key: SecretStr | None = Field(default=None, alias="AWS_SECRET_ACCESS_KEY")
    aws_region: str = Field(default="us-east-1", alias="AWS_DEFAULT_REGION")
    redis_server_binary: str = Field(default="redis-server", alias="REDIS_SERVER_BIN")
    policy_collection: str = Field(
        default="policy_docs",
        min_length=3,
        max_length=63,
        alias="CHROMA_POLICY_COLLECTION",
        description="Chroma collection of policy chunks; one per deployment (tests use one each)",
    )
    document_collection: str = Field(
        default="application_docs",
        min_length=3,
        max_length=63,
        alias="CHROMA_DOCUMENT_COLLECTION",
        description="Chroma collection of application-document chunks (spec 003 FR-008)",
    )

    # Extraction
    enable_ocr: bool = Field(default=True, alias="ENABLE_OCR")
    image_ratio_threshold: float = Field(default=0.7, ge=0.0, le=1.0, alias="IMAGE_RATIO_THRESHOLD")
    ocr_workers: int = Field(default=0, ge=0, alias="OCR_WORKERS", description="0 = one per core")
    ocr_dpi: int = Field(default=300, ge=72, le=600, alias="OCR_DPI")

    # Embeddings
    embedding_batch_size: int = Field(default=32, ge=1, le=512, alias="EMBEDDING_BATCH_SIZE")
    onnx_query_embeddings: bool = Field(
        default=True,
        alias="ONNX_QUERY_EMBEDDINGS",
        description="With the torch encoder, embed search queries with an ONNX export of the model (kept in "
        "MODEL_CACHE_DIR)",
    )
    embedding_encoder: Literal["torch", "int8"] = Field(
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

    # Search
    search_cache_mb: int = Field(
        default=256,
        ge=0,
        alias="SEARCH_CACHE_MB",
        description="Per-process cache of the searched revisions' chunks for exact search; 0 = always ask Chroma",
    )

    # Security and limits
    allowed_file_roots: Annotated[list[Path], NoDecode] = Field(
        default_factory=list,
        alias="ALLOWED_FILE_ROOTS",
        description="Folders file_path arguments may read; unset = $POLICY_KB_DATA_DIR/inbox, empty = none",
    )
    mcp_api_key: SecretStr | None = Field(default=None, alias="MCP_API_KEY")
    mcp_read_api_key: SecretStr | None = Field(default=None, alias="MCP_READ_API_KEY")
    max_upload_bytes: int = Field(default=100 * 1024 * 1024, ge=1, alias="MAX_UPLOAD_BYTES")
    max_results: int = Field(default=50, ge=1, le=1000, alias="MAX_RESULTS")

    # Service
    policy_kb_port: int = Field(default=3003, alias="POLICY_KB_PORT")
    policy_kb_workers: int = Field(
        default=1,
        ge=1,
        le=64,
        alias="POLICY_KB_WORKERS",
        description="Worker processes for the policy-kb server alone (stateless: any worker answers any request)",
    )
    search_threads: int = Field(
        default_factory=lambda: os.cpu_count() or 2,
        ge=1,
        le=64,
        alias="SEARCH_THREADS",
        description="Searches a server process runs at once (the rest wait their turn in order); default: the "
        "CPU count",
    )
    document_store_port: int = Field(default=3002, alias="DOCUMENT_STORE_PORT")
    host: str = Field(default="127.0.0.1", alias="POLICY_KB_HOST")
    mcp_single_exchange: bool = Field(
        default=False,
        alias="MCP_SINGLE_EXCHANGE",
        description="Answer plain /mcp requests in the single-exchange lane (SDK internals, verified with one "
        "mcp release; with any other the SDK transport serves alone)",
    )

    # kb server (spec 002): notes, collections, chunked uploads
    kb_mcp_port: int = Field(default=3004, alias="KB_MCP_PORT")
    kb_engine_url: str | None = Field(
        default=None,
        alias="KB_ENGINE_URL",
        description="The kb engine the kb MCP server calls; unset = this deployment's own service",
    )
    kb_api_key: SecretStr | None = Field(default=None, alias="KB_API_KEY", description="The engine's key")
    kb_mcp_api_key: SecretStr | None = Field(
        default=None, alias="KB_MCP_API_KEY", description="Callers of the kb MCP server; unset = open"
    )
    kb_collection: str = Field(
        default="kb_docs", min_length=3, max_length=63, alias="CHROMA_KB_COLLECTION",
        description="Chroma collection of notes and uploaded files",
    )  # fmt: skip
    kb_max_upload_bytes: int = Field(default=100 * 1024 * 1024, ge=1, alias="KB_MAX_UPLOAD_BYTES")
    kb_upload_ttl_seconds: int = Field(default=600, ge=1, alias="KB_UPLOAD_TTL_SECONDS")

    # governance server (spec 004): ADRs, PRDs, PEPs for agents
    governance_port: int = Field(default=3005, alias="GOVERNANCE_PORT")
    governance_collection: str = Field(
        default="governance_docs", min_length=3, max_length=63, alias="CHROMA_GOVERNANCE_COLLECTION",
        description="Chroma collection of governance chunks",
    )  # fmt: skip
    governance_log_questions: bool = Field(
        default=False,
        alias="GOVERNANCE_LOG_QUESTIONS",
        description="Log each query's question in clear; by default only its hash is logged (spec 004 NF4)",
    )

    # Jobs (Prefect flows)
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

    @field_validator("allowed_file_roots", mode="before")
    @classmethod
    def _split_roots(cls, value: object) -> object:
        if isinstance(value, str):
            return [part for part in value.replace(",", ":").split(":") if part.strip()]
        return value

    @model_validator(mode="after")
    def _resolve_paths(self) -> Settings:
        self.data_dir = self.data_dir.expanduser().resolve()
        if self.chroma_persist_dir is None:
            self.chroma_persist_dir = self.data_dir / "chroma"
        self.chroma_persist_dir = self.chroma_persist_dir.expanduser().resolve()
        if not self.object_store_url:
            self.object_store_url = (self.data_dir / "objects").as_uri()
        if self.model_cache_dir is None:
            self.model_cache_dir = (self.xdg_cache_home or Path("~/.cache")) / "policy-kb" / "models"
        self.model_cache_dir = self.model_cache_dir.expanduser().resolve()
        if "allowed_file_roots" not in self.model_fields_set:
            self.allowed_file_roots = [self.inbox_dir]
        self.allowed_file_roots = [root.expanduser().resolve() for root in self.allowed_file_roots]
        return self

    @property
    def inbox_dir(self) -> Path:
        """The file root when ``ALLOWED_FILE_ROOTS`` is unset: ``$POLICY_KB_DATA_DIR/inbox`` (open_kb creates it)."""
        return self.data_dir / "inbox"

    @property
    def redis_dir(self) -> Path:
        """Where the embedded redis-server keeps its socket, AOF and pid file."""
        return self.data_dir / "redis"


def load_settings(**overrides: Any) -> Settings:
    """Build the settings from the environment; keyword overrides win (tests, CLI flags)."""
    return Settings(**overrides)
