"""The local stack without Docker: its definition (``Procfile``), where it lives (``layout``), health
checks (``health``), the whole stack under supervisord (``manager``: ``policy-kb stack up|down|status`` and
the tests' session fixture; restart policy and config in ``supervision``, restarts and last exits in
``history``) and one process at a time under mirakuru (``process``: fault tests).

Processes (one Procfile line each): ``redis`` (redis-server, AOF), ``chroma`` (``chroma run``), ``s3``
(moto's S3 server, its writes kept on disk: ``s3_server``), ``prefect`` (``prefect server start``, its
database under ``<dir>/prefect``), ``worker`` (work pool created, ``prefect deploy --all``, a process worker
on ``policy-kb``), ``replica-a`` and ``replica-b`` (``policy-kb serve`` on two ports over the same stores).

Usage, the whole stack (as ``policy-kb stack up --free-ports --dir DIR`` does)::

    from deployments.stack import StackLayout, manager
    layout = StackLayout.with_free_ports(tmp / "stack", extra_env={"ENABLE_OCR": "false"})
    manager.up(layout)                       # returns once all seven are healthy
    layout.replica_urls()                    # ["http://127.0.0.1:<a>", "http://127.0.0.1:<b>"]
    layout.settings_env()                    # REDIS_URL, CHROMA_HOST/PORT, OBJECT_STORE_URL, S3_ENDPOINT_URL, ...
    manager.status(layout.directory)         # [ProcessStatus(name, pid, port, health, state, restarts, ...)]
    manager.down(layout.directory)           # stops all of it, and whatever it started

A running stack's ports from its folder alone: ``StackLayout.load(Path(".../stack"))``.

Usage, single processes for fault tests (each on the layout's ports, its own process group)::

    from deployments.stack import StackLayout, start_process
    layout = StackLayout.with_free_ports(tmp / "faults")
    redis = start_process(layout, "redis")        # waits until healthy; a StackProcess
    chroma = start_process(layout, "chroma")
    s3 = start_process(layout, "s3")
    prefect = start_process(layout, "prefect")    # needed by a replica's readiness wait and uploads
    replica = start_process(layout, "replica-a")  # serves over the stores above
    redis.kill()                                  # SIGKILL to its group (kill -9)
    redis.restart()                               # same port, same folder: the same AOF
    redis.health()                                # Health(ok, detail), never raises
    chroma.stop(); chroma.start()                 # SIGTERM, then start again
    for p in (replica, prefect, s3, chroma, redis):
        p.close()                                 # stop + close its log (logs/<name>.log)
"""

from __future__ import annotations

from deployments.stack.health import Health, check, wait_healthy
from deployments.stack.layout import StackLayout, process_names
from deployments.stack.process import StackProcess, start_process

__all__ = ["Health", "StackLayout", "StackProcess", "check", "process_names", "start_process", "wait_healthy"]
