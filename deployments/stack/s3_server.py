"""``python -m deployments.stack.s3_server PORT FOLDER``: moto's S3 server, its state kept on disk so a
restart (supervisord's, after a crash) finds the bucket and every original again.

moto keeps its state in memory. Its recorder (``MOTO_ENABLE_RECORDING``) appends every request it serves to
a file, one JSON line each, before it answers; on start this replays the file's writes (PUT, POST, DELETE;
reads change nothing and are dropped from it) into a scratch server on a free port, then serves the restored
state on PORT. The file is compacted to those writes first, so it grows with the writes, not the reads.
"""

from __future__ import annotations

import json
import os
import socket
import sys
from pathlib import Path

from werkzeug.serving import run_simple

RECORDING = "requests.jsonl"
WRITES = {"PUT", "POST", "DELETE"}


def compact(recording: Path) -> int:
    """Keep the writes of ``recording`` (atomically: a kill mid-way leaves the old file); their number."""
    writes = [line for line in recording.read_text().splitlines() if json.loads(line).get("method") in WRITES]
    scratch = recording.with_suffix(".compacting")
    scratch.write_text("".join(f"{line}\n" for line in writes))
    os.replace(scratch, recording)
    return len(writes)


def restore(recording: Path) -> int:
    """Replay the recorded writes into this process's moto state; how many there were."""
    from moto.moto_api import recorder
    from moto.moto_server.threaded_moto_server import ThreadedMotoServer

    count = compact(recording)
    scratch = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    scratch.start()
    try:
        host, port = scratch.get_host_and_port()
        recorder.replay_recording(target_host=f"http://{host}:{port}")
    finally:
        scratch.stop()
    return count


def port_free(port: int) -> bool:
    """Whether PORT can be bound now: checked before the restore, so a busy port fails the start at once (and
    supervisord backs off) instead of after a restore longer than its ``startsecs``."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python -m deployments.stack.s3_server PORT FOLDER", file=sys.stderr)
        return 2
    port, folder = int(argv[0]), Path(argv[1])
    if not port_free(port):
        print(f"s3_server: port {port} is in use", file=sys.stderr)
        return 1
    folder.mkdir(parents=True, exist_ok=True)
    recording = folder / RECORDING
    os.environ["MOTO_RECORDER_FILEPATH"] = str(recording)  # read when moto is first imported
    os.environ["MOTO_ENABLE_RECORDING"] = "true"
    os.environ.setdefault("MOTO_PORT", str(port))
    if recording.exists():
        print(f"s3_server: restored {restore(recording)} writes from {recording}", flush=True)

    from moto.moto_server.werkzeug_app import DomainDispatcherApplication, MotoRequestHandler, create_backend_app

    app = DomainDispatcherApplication(create_backend_app)
    run_simple("127.0.0.1", port, app, threaded=True, request_handler=MotoRequestHandler)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
