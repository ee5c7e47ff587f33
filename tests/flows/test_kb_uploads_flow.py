"""``cleanup_kb_uploads`` under the Prefect harness, with a two-second ``KB_UPLOAD_TTL_SECONDS``: an upload left
unfinished past it loses its tracking and staged chunks, on the local folder and on S3; a live one is kept.

On a loaded machine the abandoned upload may expire before its one chunk is stored (the chunk is then refused
``upload_not_found``, as it should be): it is started again until a chunk lands within its TTL."""

from __future__ import annotations

import base64

import pytest
import redis

from flows.kb_uploads import cleanup_kb_uploads
from lib.composition import Stores
from lib.errors import UploadNotFoundError
from lib.notes.uploads import OBJECT_PREFIX, UploadStaging, upload_staging
from tests.polling import eventually


@pytest.mark.usefixtures("backend")
def test_the_cleanup_flow_removes_uploads_abandoned_past_the_ttl_and_keeps_live_ones(
    flow_stores: Stores, redis_client: redis.Redis
) -> None:
    live = upload_staging(flow_stores.notes)
    short = UploadStaging(redis_client, flow_stores.objects, max_upload_bytes=1000, ttl_seconds=2)
    for _ in range(10):
        abandoned = short.start("abandoned.md", 10, ["collection:documents"]).upload_id
        try:
            short.put_chunk(abandoned, 0, base64.b64encode(b"# half").decode())
            break
        except UploadNotFoundError:  # expired before its chunk was recorded: its object is already gone
            continue
    else:
        raise AssertionError("no chunk was stored within a two-second TTL in ten tries")
    kept = live.start("kept.md", 10, []).upload_id
    live.put_chunk(kept, 0, base64.b64encode(b"# kept").decode())
    eventually(lambda: not redis_client.exists(f"kbup:{abandoned}"), within=10, every=0.1)

    cleaned = cleanup_kb_uploads()

    assert (cleaned.expired_uploads, cleaned.orphan_objects) == (1, 0)
    remaining = list(flow_stores.objects.list(OBJECT_PREFIX))
    assert len(remaining) == 1 and remaining[0].startswith(f"{OBJECT_PREFIX}{kept}-")
    assert redis_client.zscore("kbup:index", abandoned) is None and live.in_progress() == 1
