"""Artifacts an ingestion or reindex leaves in the Prefect UI, under keys stable per revision.

``{flow}-{source}-{revision}``: a markdown summary (status, counts, extraction method, superseded
revisions, seconds per stage); ``{flow}-sections-...``: chunks per section; ``{flow}-progress-...``:
a progress bar that moves through fetch, extract, chunk, embed and store while the run works.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast
from uuid import UUID

from prefect.artifacts import (
    create_markdown_artifact,
    create_progress_artifact,
    create_table_artifact,
    update_progress_artifact,
)

from flows.common import artifact_key
from lib.policies.models import IngestOutcome, Revision

STAGES = ("fetch", "extract", "chunk", "embed", "store", "total")


class ProgressArtifact:
    """A progress artifact fed by ``ingest_revision``'s ``progress(phase, percent)`` callback."""

    def __init__(self, flow: str, source: str, revision_id: str) -> None:
        self.key = artifact_key(flow, "progress", source, revision_id)
        self.label = f"{source} {revision_id}"
        self._id: UUID | None = None
        self._last: tuple[str, int] | None = None

    def __call__(self, phase: str, percent: float) -> None:
        step = (phase, int(percent))
        if step == self._last:
            return
        self._last = step
        description = f"{self.label}: {phase}"
        if self._id is None:
            self._id = cast(UUID, create_progress_artifact(percent, key=self.key, description=description))
        else:
            update_progress_artifact(self._id, percent, description=description)


def _dates(revision: Revision) -> str:
    end = revision.effective_to.isoformat() if revision.effective_to else "in force"
    return f"{revision.effective_from.isoformat()} → {end}"


def _rows(pairs: Sequence[tuple[str, object]]) -> str:
    return "\n".join(["| | |", "|---|---|", *(f"| {name} | {value} |" for name, value in pairs)])


def publish_outcome(
    flow: str,
    revision: Revision,
    outcome: IngestOutcome,
    *,
    superseded: Sequence[Revision] = (),
    action: str = "",
) -> None:
    """The summary and the chunks-per-section table of a completed ingestion."""
    pairs: list[tuple[str, object]] = [
        ("Status", f"**{revision.status.value}**"),
        ("Version label", revision.version_label),
        ("Effective", _dates(revision)),
        ("Pages", outcome.page_count),
        ("Chunks", f"{outcome.chunks_created} written, {outcome.chunks_removed} stale removed"),
        ("Sections", len(outcome.sections)),
        ("Read", outcome.reading.summary() if outcome.reading else "n/a"),
        ("Extraction method", outcome.extraction_method),
        ("File", f"`{revision.file_path}` ({outcome.file_size_bytes:,} bytes)"),
        ("Superseded", ", ".join(f"`{r.revision_id}` (now ends {r.effective_to})" for r in superseded) or "none"),
    ]
    if action:
        pairs.insert(0, ("Registration", action))
    stages = [s for s in STAGES if s in outcome.seconds]
    timing = "\n".join(
        [
            "| " + " | ".join(stages) + " |",
            "|" + "---|" * len(stages),
            "| " + " | ".join(f"{outcome.seconds[s]:.2f}" for s in stages) + " |",
        ]
    )
    title = f"# {flow}: {revision.source} `{revision.revision_id}`"
    markdown = f"{title}\n\n{_rows(pairs)}\n\n## Seconds per stage\n\n{timing}\n"
    create_markdown_artifact(
        markdown,
        key=artifact_key(flow, revision.source, revision.revision_id),
        description=f"{flow} of {revision.source} {revision.revision_id}",
    )
    create_table_artifact(
        [{"section_ref": ref, "chunks": count} for ref, count in outcome.sections.items()],
        key=artifact_key(flow, "sections", revision.source, revision.revision_id),
        description=f"Chunks per section of {revision.source} {revision.revision_id}",
    )


def publish_message(flow: str, source: str, revision_id: str, title: str, pairs: Sequence[tuple[str, object]]) -> None:
    """A summary without an outcome: a failure, or a run that found nothing to do."""
    create_markdown_artifact(
        f"# {flow}: {source} `{revision_id}`: {title}\n\n{_rows(pairs)}\n",
        key=artifact_key(flow, source, revision_id),
        description=f"{flow} of {source} {revision_id}: {title}",
    )
