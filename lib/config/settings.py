"""All the groups together (``Settings``), the derived paths, and ``load_settings`` with its overrides."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, Field, model_validator

from lib.config.access import AuthSettings, OAuthSettings, RateLimitSettings
from lib.config.base import SettingsGroup
from lib.config.pipeline import EmbeddingSettings, ExtractionSettings, FileSettings, SearchSettings
from lib.config.servers import GovernanceSettings, JobSettings, KbSettings, ObservabilitySettings, ServiceSettings
from lib.config.stores import ChromaSettings, ObjectStoreSettings, PathSettings, RedisSettings


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
    "redis_async_max_connections": "redis.async_max_connections",
    "redis_pool_timeout_seconds": "redis.pool_timeout_seconds",
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
    "search_snapshots": "search.snapshots",
    "max_results": "search.max_results",
    "search_threads": "search.threads",
    "search_leg_helpers": "search.leg_helpers",
    "search_queue_max": "search.queue_max",
    "search_queue_wait_ms": "search.queue_wait_ms",
    "search_admission_wait_ms": "search.admission_wait_ms",
    "search_admission_max_in_flight": "search.admission_max_in_flight",
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
    "allow_unauthenticated": "service.allow_unauthenticated",
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
    "local_api_start_timeout_seconds": "jobs.local_api_start_timeout_seconds",
    "task_ttl_seconds": "jobs.task_ttl_seconds",
    "task_max": "jobs.task_max",
    "task_max_per_caller": "jobs.task_max_per_caller",
    "task_poll_interval_ms": "jobs.task_poll_interval_ms",
    "metrics_api_key": "observability.metrics_api_key",
    "prometheus_multiproc_dir": "observability.multiproc_dir",
    "otel_exporter_otlp_endpoint": "observability.otlp_endpoint",
    "otel_service_name": "observability.service_name",
    "trace_allocations": "observability.trace_allocations",
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
