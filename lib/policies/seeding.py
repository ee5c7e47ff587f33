"""Seed configuration (spec 001 PolicySeeder): policies, revisions and their files, from YAML.

Seeding is idempotent by comparing what the config asks for with what the registry holds: a policy
that exists is kept, a revision that exists and is ``active``/``superseded`` is kept, a revision
left ``processing`` or ``failed`` by an earlier run is ingested again. A missing file is a warning
for that revision only.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from lib.errors import KBError, ObjectStoreError, RegistryUnavailableError
from lib.policies.ingest import ingest_revision
from lib.policies.lifecycle import register_revision
from lib.policies.models import PolicyCreate, RevisionCreate
from lib.policies.registry import PolicyRegistry
from lib.policies.stores import PolicyStores

logger = logging.getLogger(__name__)


class SeedRevision(RevisionCreate):
    file: str = Field(description="PDF path, relative to the seed file")


class SeedPolicy(PolicyCreate):
    revisions: list[SeedRevision] = Field(default_factory=list)


class SeedConfig(BaseModel):
    policies: list[SeedPolicy]


class SeedAction(StrEnum):
    CREATED_POLICY = "created_policy"
    KEPT_POLICY = "kept_policy"
    INGESTED = "ingested"
    KEPT = "kept"
    MISSING_FILE = "missing_file"
    FAILED = "failed"


class SeedStep(BaseModel):
    source: str
    revision_id: str | None = None
    action: SeedAction
    detail: str = ""
    chunks: int = 0
    seconds: dict[str, float] = Field(
        default_factory=dict, description="Seconds per stage (register, fetch, extract, chunk, embed, store, total)"
    )

    @property
    def changed(self) -> bool:
        return self.action in (SeedAction.CREATED_POLICY, SeedAction.INGESTED)


def load_seed_config(path: Path) -> SeedConfig:
    with path.open() as handle:
        return SeedConfig.model_validate(yaml.safe_load(handle))


def ensure_policy(registry: PolicyRegistry, policy: SeedPolicy) -> SeedStep:
    """Create the policy unless it is registered; an existing policy's metadata is left as the operator set it."""
    if registry.policy_exists(policy.source):
        return SeedStep(source=policy.source, action=SeedAction.KEPT_POLICY)
    registry.create_policy(PolicyCreate(**policy.model_dump(exclude={"revisions"})))
    return SeedStep(source=policy.source, action=SeedAction.CREATED_POLICY)


def seed_revision(stores: PolicyStores, source: str, revision: SeedRevision, base_dir: Path) -> SeedStep:
    """Bring one configured revision into place: keep it, ingest it, or say why not.

    ``revision.file`` is read relative to ``base_dir`` (the seed file's folder) and must stay inside it.
    Expected failures (missing or unreadable file, bad PDF) become a step, never an exception, so the
    other revisions of a seed run still go ahead; transient store errors propagate for a retry.
    """
    revision_id = revision.resolved_revision_id(source)
    current = next((r for r in stores.registry.list_revisions(source) if r.revision_id == revision_id), None)
    if current is not None and current.resolvable:
        return SeedStep(source=source, revision_id=revision_id, action=SeedAction.KEPT, chunks=current.chunk_count)
    base = base_dir.resolve()
    file_path = (base / revision.file).resolve()
    if not file_path.is_relative_to(base):
        return SeedStep(
            source=source,
            revision_id=revision_id,
            action=SeedAction.FAILED,
            detail=f"path_not_allowed: {revision.file} is outside the seed folder",
        )
    if current is None and not file_path.is_file():
        logger.warning("seed.missing_file source=%s revision_id=%s file=%s", source, revision_id, revision.file)
        return SeedStep(source=source, revision_id=revision_id, action=SeedAction.MISSING_FILE, detail=revision.file)
    started = time.perf_counter()
    try:
        if current is None:
            register_revision(
                stores,
                source,
                RevisionCreate(**revision.model_dump(exclude={"file", "revision_id"}), revision_id=revision_id),
                file_path.read_bytes(),
            )
        registered = round(time.perf_counter() - started, 3)
        outcome = ingest_revision(stores, source, revision_id)
    except (RegistryUnavailableError, ObjectStoreError):
        raise
    except KBError as exc:
        logger.warning("seed.failed source=%s revision_id=%s error_type=%s", source, revision_id, exc.error_type)
        return SeedStep(
            source=source, revision_id=revision_id, action=SeedAction.FAILED, detail=f"{exc.error_type}: {exc.message}"
        )
    return SeedStep(
        source=source,
        revision_id=revision_id,
        action=SeedAction.INGESTED,
        chunks=outcome.chunks_created,
        seconds={"register": registered, **outcome.seconds},
    )


def seed_policies(
    stores: PolicyStores, config_path: Path, *, on_step: Callable[[SeedStep], None] | None = None
) -> list[SeedStep]:
    """Bring the registry and vector store up to the seed file; return what was done, step by step."""
    config = load_seed_config(config_path)
    steps: list[SeedStep] = []

    def record(step: SeedStep) -> None:
        steps.append(step)
        if on_step:
            on_step(step)

    for policy in config.policies:
        record(ensure_policy(stores.registry, policy))
        for revision in policy.revisions:
            record(seed_revision(stores, policy.source, revision, config_path.parent))
    return steps
