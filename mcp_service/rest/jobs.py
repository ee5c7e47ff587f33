"""Starting ingestions from the service: the flows' ``submit_ingestion`` (a Prefect deployment run when
``PREFECT_API_URL`` has it, else a background thread of this process), imported on first use because
Prefect is a heavy import that only uploads and reindexes need. Job state lives on the revision in
Redis (status, progress), so any replica can answer ``.../status``."""

from __future__ import annotations

from lib.config import Settings


def start_ingestion(settings: Settings, source: str, revision_id: str, *, reindex: bool = False) -> str:
    """Submit the ingestion (or reindex) of a registered revision; return the job id (a flow run id)."""
    from flows.submit import submit_ingestion

    return submit_ingestion(settings, source, revision_id, reindex=reindex)
