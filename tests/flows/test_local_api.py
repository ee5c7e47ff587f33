"""``flows.local_api``: Prefect's temporary local API started by several processes sharing one Prefect home at
once (uvicorn workers of one service, the CLI beside it), as real processes on one SQLite database.

Prefect's own start failed here: each process migrated the fresh database at the same time ("database is
locked") and its start-up limit, counted in sleeps, ran out under the load the starts made (issue 46).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from flows.local_api import LOCK_FILE

PROCESSES = 3
START_TIMEOUT_S = 240.0
CHILD = """
import sys
from flows.local_api import ensure_local_api, stop_local_api
try:
    print("url", ensure_local_api(start_timeout_s=float(sys.argv[1])), flush=True)
finally:
    stop_local_api()
"""


def test_processes_sharing_a_prefect_home_each_start_their_local_api(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"} | {
        "PREFECT_HOME": str(tmp_path),
        "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "20",  # Prefect's default, which failed under load
    }
    children = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, str(START_TIMEOUT_S)],
            env=env,
            cwd=Path(__file__).parents[2],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(PROCESSES)
    ]
    outputs = [child.communicate(timeout=START_TIMEOUT_S * 3 * PROCESSES)[0] for child in children]
    for child, output in zip(children, outputs, strict=True):
        assert child.returncode == 0, output[-3000:]
        assert "url http://127.0.0.1:" in output, output[-3000:]
    assert (tmp_path / LOCK_FILE).exists()
    assert (tmp_path / "prefect.db").exists(), "the processes shared one database"
