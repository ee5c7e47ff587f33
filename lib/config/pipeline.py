"""How text is read, embedded and searched, and which files and uploads are accepted."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal

from pydantic import Field, field_validator
from pydantic_settings import NoDecode

from lib.config.base import SettingsGroup
from lib.cpus import usable_cpus


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
    snapshots: bool = Field(
        default=True,
        alias="SEARCH_SNAPSHOTS",
        description="Keep each cached revision's index on disk ($POLICY_KB_DATA_DIR/index_snapshots) so the next "
        "start reads it back instead of Chroma; checked against Chroma in the background once served",
    )
    max_results: int = Field(default=50, ge=1, le=1000, alias="MAX_RESULTS")
    threads: int = Field(
        default_factory=lambda: min(usable_cpus(), 64),
        ge=1,
        le=64,
        alias="SEARCH_THREADS",
        description="Searches a server process runs at once (the rest wait their turn in order); default: the "
        "CPUs the process may use (its affinity: taskset, a cpuset; its cgroup CPU quota, rounded up)",
    )
    leg_helpers: int = Field(
        default_factory=lambda: min(usable_cpus() - 1, 64),
        ge=0,
        le=64,
        alias="SEARCH_LEG_HELPERS",
        description="Threads that run a hybrid search's lexical leg beside its dense leg when one is idle (0: the "
        "legs run one after the other); default: the CPUs the process may run on, less one",
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
    admission_wait_ms: int = Field(
        default=50,
        ge=0,
        alias="SEARCH_ADMISSION_WAIT_MS",
        description="The longest a search tool call may expect to wait behind the ones already admitted: past it "
        "the admission gate in front of /mcp refuses it (HTTP 503, Retry-After) before its body is read; 0 = no "
        "gate",
    )
    admission_max_in_flight: int = Field(
        default=0,
        ge=0,
        alias="SEARCH_ADMISSION_MAX_IN_FLIGHT",
        description="Search tool calls the admission gate lets be in flight at once whatever its estimate; 0 = no "
        "fixed bound",
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
