"""Seed configuration (spec 001 PolicySeeder): policies, revisions and their files, from YAML.

Seeding is idempotent by comparing what the config asks for with what the registry holds: a policy
that exists is kept, a revision that exists and is ``active``/``superseded`` is kept, a revision
left ``processing`` or ``failed`` by an earlier run is ingested again. A missing file is a warning
for that revision only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path

import yaml
from pydantic import BaseModel, Field

from lib.errors import KBError
from lib.ingest import ingest_revision
from lib.kb import KnowledgeBase
from lib.lifecycle import register_revision
from lib.models import PolicyCreate, RevisionCreate

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


def load_seed_config(path: Path) -> SeedConfig:
    with path.open() as handle:
        return SeedConfig.model_validate(yaml.safe_load(handle))


def seed_policies(
    kb: KnowledgeBase, config_path: Path, *, on_step: Callable[[SeedStep], None] | None = None
) -> list[SeedStep]:
    """Bring the registry and vector store up to the seed file; return what was done, step by step."""
    config = load_seed_config(config_path)
    steps: list[SeedStep] = []

    def record(step: SeedStep) -> None:
        steps.append(step)
        if on_step:
            on_step(step)

    for policy in config.policies:
        if kb.registry.policy_exists(policy.source):
            record(SeedStep(source=policy.source, action=SeedAction.KEPT_POLICY))
        else:
            kb.registry.create_policy(PolicyCreate(**policy.model_dump(exclude={"revisions"})))
            record(SeedStep(source=policy.source, action=SeedAction.CREATED_POLICY))
        existing = {r.revision_id: r for r in kb.registry.list_revisions(policy.source)}
        for revision in policy.revisions:
            revision_id = revision.resolved_revision_id(policy.source)
            current = existing.get(revision_id)
            if current is not None and current.resolvable:
                record(SeedStep(source=policy.source, revision_id=revision_id, action=SeedAction.KEPT,
                                chunks=current.chunk_count))  # fmt: skip
                continue
            file_path = (config_path.parent / revision.file).resolve()
            if current is None and not file_path.is_file():
                logger.warning("seed.missing_file source=%s revision_id=%s file=%s", policy.source, revision_id,
                               revision.file)  # fmt: skip
                record(SeedStep(source=policy.source, revision_id=revision_id, action=SeedAction.MISSING_FILE,
                                detail=revision.file))  # fmt: skip
                continue
            try:
                if current is None:
                    register_revision(
                        kb, policy.source,
                        RevisionCreate(**revision.model_dump(exclude={"file", "revision_id"}), revision_id=revision_id),
                        file_path.read_bytes(),
                    )  # fmt: skip
                outcome = ingest_revision(kb, policy.source, revision_id)
                record(SeedStep(source=policy.source, revision_id=revision_id, action=SeedAction.INGESTED,
                                chunks=outcome.chunks_created))  # fmt: skip
            except KBError as exc:
                logger.warning("seed.failed source=%s revision_id=%s error_type=%s", policy.source, revision_id,
                               exc.error_type)  # fmt: skip
                record(SeedStep(source=policy.source, revision_id=revision_id, action=SeedAction.FAILED,
                                detail=f"{exc.error_type}: {exc.message}"))  # fmt: skip
    return steps
