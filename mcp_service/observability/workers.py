"""Metrics across uvicorn worker processes: prometheus-client's multiprocess mode, which must be chosen before
any worker imports it (``PROMETHEUS_MULTIPROC_DIR`` in the environment the workers inherit)."""

from __future__ import annotations

import logging
import os
from pathlib import Path

from lib.config import Settings

logger = logging.getLogger(__name__)


def share_metrics_between_workers(settings: Settings) -> Path:
    """The folder every worker keeps its metric values in, emptied (a previous run's files would be summed in) and
    named in this process's environment for the workers it starts: ``PROMETHEUS_MULTIPROC_DIR`` when set, else
    ``metrics/<pid>`` under the data directory."""
    folder = settings.observability.multiproc_dir or settings.paths.data_dir / "metrics" / str(os.getpid())
    folder.mkdir(parents=True, exist_ok=True)
    for stale in folder.glob("*.db"):
        stale.unlink()
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder)
    logger.info("metrics.multiprocess dir=%s", folder)
    return folder
