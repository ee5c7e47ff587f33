"""``ingest_governance_corpus``: bring the governance index in line with a folder of documents (spec 004).

Incremental by content hash (``lib.governance.ingest``): unchanged files are skipped, changed ones re-chunked
with their old chunks searchable until the new ones are in, deleted ones removed; a file that cannot be read
is listed as failed and the rest go on. The run ends with a table artifact (``governance-ingest``) of every
file added, changed, removed or failed, so the Prefect UI shows what one run did.
"""

from __future__ import annotations

from prefect import flow, task
from prefect.artifacts import create_table_artifact

from flows.common import IO_TASK_OPTIONS, flow_stores, log_event
from lib.governance.ingest import ingest_governance_corpus_files
from lib.governance.models import CorpusIngestReport
from lib.governance.stores import GovernanceStores

ARTIFACT_KEY = "governance-ingest"


@task(name="ingest-governance-files", **IO_TASK_OPTIONS)
def ingest_files_task(stores: GovernanceStores, path: str) -> CorpusIngestReport:
    return ingest_governance_corpus_files(stores, path)


def report_rows(report: CorpusIngestReport) -> list[dict[str, str]]:
    """One row per file the run touched (unchanged files are counted in the description, not listed)."""
    rows = [
        {"outcome": outcome, "file": file, "error": ""}
        for outcome, files in (("added", report.added), ("changed", report.changed), ("removed", report.removed))
        for file in files
    ]
    rows += [{"outcome": "failed", "file": failed.file, "error": failed.error} for failed in report.failed]
    return rows or [{"outcome": "unchanged", "file": "(every file)", "error": ""}]


@flow(name="ingest_governance_corpus", validate_parameters=True)
def ingest_governance_corpus(path: str) -> CorpusIngestReport:
    """Ingest the governance documents under ``path`` (Markdown with front matter, PEP-style reStructuredText
    or text): added and changed files chunked and embedded, unchanged skipped, deleted ones removed.

    Args:
        path: A folder (searched recursively for .md, .markdown, .rst and .txt files) or one file.
    """
    stores = flow_stores().governance
    report = ingest_files_task(stores, path)
    create_table_artifact(
        report_rows(report),
        key=ARTIFACT_KEY,
        description=(
            f"{len(report.added)} added, {len(report.changed)} changed, {len(report.unchanged)} unchanged, "
            f"{len(report.removed)} removed, {len(report.failed)} failed; {report.chunks_written} chunks written "
            f"in {report.seconds:.1f} s"
        ),
    )
    log_event(
        "governance.ingest_done",
        added=len(report.added),
        changed=len(report.changed),
        unchanged=len(report.unchanged),
        removed=len(report.removed),
        failed=len(report.failed),
        chunks=report.chunks_written,
    )
    return report
