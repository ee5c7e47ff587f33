"""Abandoned kb uploads removed inside the service when no Prefect server runs the ``cleanup-kb-uploads``
schedule (spec 002: an upload not finished within its TTL is cleaned up). A plain ``policy-kb serve --servers kb``
would otherwise never delete their staged chunks. Every replica runs this loop; ``UploadStaging.sweep`` lets one
of them clean per interval, calling the same ``cleanup`` the flow calls."""

from __future__ import annotations

import logging

import anyio
import anyio.to_thread

from lib.errors import KBError
from lib.notes.uploads import UploadStaging

logger = logging.getLogger(__name__)


async def sweep_uploads(staging: UploadStaging, every_seconds: int) -> None:
    """Until cancelled: every ``every_seconds``, sweep if no other replica did in this interval. A store outage is
    logged and the next interval tries again."""
    while True:
        try:
            cleaned = await anyio.to_thread.run_sync(staging.sweep, every_seconds)
        except KBError as exc:
            logger.warning("kb_upload.sweep_failed error_type=%s", exc.error_type)
        else:
            if cleaned is not None:
                logger.info(
                    "kb_upload.swept expired=%d orphan_objects=%d", cleaned.expired_uploads, cleaned.orphan_objects
                )
        await anyio.sleep(every_seconds)
