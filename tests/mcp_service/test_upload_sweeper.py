"""Spec 002: "WHEN an agent starts an upload but does not call kb_upload_finish within 10 minutes THEN the MCP server
SHALL clean up the staged chunks and remove the upload tracking entry", with no Prefect server to run the
``cleanup-kb-uploads`` schedule: the kb server sweeps by itself (here every second, with a short TTL)."""

from __future__ import annotations

import base64
import uuid
from pathlib import Path

import redis

from lib.composition import open_stores
from lib.notes.uploads import INDEX, OBJECT_PREFIX, upload_staging
from mcp_service.kb import create_app
from tests.mcp_service.conftest import running, service_settings
from tests.polling import eventually

SWEEP_DB = 12
"""A database of its own (the others are taken by the service tests)."""
ABANDON_TTL_S = 4
"""Long enough for the start and the chunk to land before expiry on a loaded machine."""


def test_the_kb_server_without_prefect_removes_an_abandoned_uploads_chunks_and_tracking(
    service_base: Path, redis_url: str, chroma_dir: Path
) -> None:
    settings = service_settings(
        service_base,
        redis_url,
        chroma_dir,
        SWEEP_DB,
        kb_collection=f"kb_{uuid.uuid4().hex[:12]}",
        kb_upload_ttl_seconds=ABANDON_TTL_S,
        kb_upload_sweep_seconds=1,
        prefect_api_url=None,
    )
    client = redis.Redis.from_url(settings.redis.url or "", decode_responses=True)
    client.flushdb()
    stores = open_stores(settings)
    staging = upload_staging(stores.notes)
    upload_id = staging.start("abandoned.md", 10, ["collection:documents"]).upload_id
    staging.put_chunk(upload_id, 0, base64.b64encode(b"# half").decode())
    assert list(stores.objects.list(f"{OBJECT_PREFIX}{upload_id}"))
    with running(create_app(settings, stores=stores, warm=False)):
        eventually(
            lambda: not list(stores.objects.list(f"{OBJECT_PREFIX}{upload_id}")),
            within=60,
            every=0.2,
            what="the abandoned upload's chunks removed",
        )
    assert client.zscore(INDEX, upload_id) is None and not client.exists(f"kbup:{upload_id}")
    client.flushdb()
