"""The process's BLAS is pinned to one thread from the main thread, and worker threads (where searches run)
see the pin: with numpy's OpenBLAS a limit set from a worker thread is ignored, which is why the pin is not
taken per query (``lib.retrieval.blas``). Each check runs in a fresh interpreter, where nothing is pinned yet."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

PROBE = """
import json, threading
import numpy as np
from lib.retrieval.blas import blas_thread_counts, pin_single_blas_thread

np.ones((64, 64), np.float32) @ np.ones(64, np.float32)
seen = {}
def worker(name):
    seen[name] = (pin_single_blas_thread() if name == "worker pins" else None, blas_thread_counts())
before = blas_thread_counts()
started = threading.Thread(target=lambda: (ready.wait(), worker("started before the pin")))
ready = threading.Event()
started.start()
t = threading.Thread(target=worker, args=("worker pins",)); t.start(); t.join()
pinned = pin_single_blas_thread()
ready.set(); started.join()
t = threading.Thread(target=worker, args=("started after the pin",)); t.start(); t.join()
print(json.dumps({"before": before, "pinned": pinned, "main": blas_thread_counts(), "seen": seen}))
"""


def run_probe() -> dict:
    out = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "2", "PYTHONPATH": str(ROOT)},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_main_thread_pins_every_thread_to_one_blas_thread_and_a_worker_cannot() -> None:
    probe = run_probe()
    numpy_blas = [path for path in probe["before"] if Path(path).parent.name == "numpy.libs"]
    assert numpy_blas and probe["before"][numpy_blas[0]] == 2
    refused, counts = probe["seen"]["worker pins"]
    assert refused is False and counts[numpy_blas[0]] == 2
    assert probe["pinned"] is True and probe["main"][numpy_blas[0]] == 1
    for name in ("started before the pin", "started after the pin"):
        assert probe["seen"][name][1][numpy_blas[0]] == 1, name
