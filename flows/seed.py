"""``seed_policies``: bring the stores up to a seed YAML of policies, revisions and files (spec 001 PolicySeeder).

One task per policy and per revision over ``lib.policies.seeding``'s step functions (the same ones the library's
``seed_policies`` loops over), so each revision shows, retries and fails on its own. Idempotent: a
second run keeps everything and says so. A missing file is a warning and the rest continue.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from prefect import flow, task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from pydantic import BaseModel, Field

from flows.common import IO_TASK_OPTIONS, flow_stores, log_event
from lib.paths import resolve_allowed
from lib.policies.seeding import (
    SeedAction,
    SeedPolicy,
    SeedRevision,
    SeedStep,
    ensure_policy,
    load_seed_config,
    seed_revision,
)
from lib.policies.stores import PolicyStores

PROJECT_ROOT = Path(__file__).resolve().parents[1]
BUNDLED_SEED_DIR = PROJECT_ROOT / "deployments" / "seed"
DEFAULT_SEED_CONFIG = "deployments/seed/seed.yaml"
SUMMARY_KEY = "seed-summary"


class SeedResult(BaseModel):
    config: str
    steps: list[SeedStep]
    changed: bool = Field(description="False when the run found everything already in place")
    message: str

    def counts(self) -> dict[str, int]:
        return dict(Counter(step.action.value for step in self.steps))


@task(name="ensure-policy", **IO_TASK_OPTIONS)
def ensure_policy_task(stores: PolicyStores, policy: SeedPolicy) -> SeedStep:
    return ensure_policy(stores.registry, policy)


@task(name="seed-revision", **IO_TASK_OPTIONS)
def seed_revision_task(stores: PolicyStores, source: str, revision: SeedRevision, base_dir: Path) -> SeedStep:
    return seed_revision(stores, source, revision, base_dir)


def resolve_seed_config(stores: PolicyStores, config: str) -> Path:
    """The seed file: the bundled one, or one inside ``ALLOWED_FILE_ROOTS`` (relative names: from the project)."""
    path = Path(config).expanduser()
    if not path.is_absolute():
        path = PROJECT_ROOT / path
    return resolve_allowed(path, [BUNDLED_SEED_DIR, *stores.settings.files.allowed_roots])


def _count(n: int, singular: str, plural: str = "") -> str:
    return f"{n} {singular if n == 1 else plural or singular + 's'}"


def summarise(steps: list[SeedStep]) -> tuple[bool, str]:
    """Whether the run changed anything, and one sentence that says what it did."""
    counts = Counter(step.action for step in steps)
    changed = any(step.changed for step in steps)
    if not changed and not counts[SeedAction.MISSING_FILE] and not counts[SeedAction.FAILED]:
        return False, "Nothing to do: every policy and revision in the seed file is already in place."
    parts = []
    if counts[SeedAction.CREATED_POLICY]:
        parts.append(f"created {_count(counts[SeedAction.CREATED_POLICY], 'policy', 'policies')}")
    if counts[SeedAction.INGESTED]:
        chunks = sum(s.chunks for s in steps if s.action == SeedAction.INGESTED)
        parts.append(f"ingested {_count(counts[SeedAction.INGESTED], 'revision')} ({chunks} chunks)")
    if counts[SeedAction.KEPT]:
        parts.append(f"kept {_count(counts[SeedAction.KEPT], 'revision')} already in place")
    if counts[SeedAction.MISSING_FILE]:
        parts.append(f"skipped {_count(counts[SeedAction.MISSING_FILE], 'revision')} whose file is missing")
    if counts[SeedAction.FAILED]:
        parts.append(f"{_count(counts[SeedAction.FAILED], 'revision')} FAILED")
    sentence = "; ".join(parts)
    return changed, sentence[0].upper() + sentence[1:] + "."


@flow(name="seed_policies", validate_parameters=True)
def seed_policies(config: str = DEFAULT_SEED_CONFIG) -> SeedResult:
    """Register and ingest the policies of a seed file; a second run changes nothing and says so.

    Args:
        config: Seed YAML: the bundled deployments/seed/seed.yaml, or a file inside ALLOWED_FILE_ROOTS.
            Revision files are read relative to it.
    """
    stores = flow_stores().policies
    path = resolve_seed_config(stores, config)
    seed = load_seed_config(path)
    log_event("seed.started", config=str(path), policies=len(seed.policies))
    steps: list[SeedStep] = []
    for policy in seed.policies:
        steps.append(ensure_policy_task.with_options(task_run_name=f"policy-{policy.source}")(stores, policy))
        for revision in policy.revisions:
            revision_id = revision.resolved_revision_id(policy.source)
            step = seed_revision_task.with_options(task_run_name=f"revision-{policy.source}-{revision_id}")(
                stores, policy.source, revision, path.parent
            )
            steps.append(step)
            level = 30 if step.action in (SeedAction.MISSING_FILE, SeedAction.FAILED) else 20
            log_event(
                f"seed.{step.action.value}",
                level=level,
                source=step.source,
                revision_id=step.revision_id or "",
                chunks=step.chunks,
                detail=step.detail,
            )
    changed, message = summarise(steps)
    create_table_artifact(
        [s.model_dump(mode="json", include={"source", "revision_id", "action", "chunks", "detail"}) for s in steps],
        key="seed-steps",
        description=f"Steps of seeding {path.name}",
    )
    create_markdown_artifact(f"# Seed: {path.name}\n\n{message}\n", key=SUMMARY_KEY, description=message)
    log_event("seed.done", changed=changed, message=message)
    return SeedResult(config=str(path), steps=steps, changed=changed, message=message)
