"""supervisord's restart policy on the session's stack: a process that dies at once on every start is retried
with growing pauses (BACKOFF, shown by ``stack status``) while the others keep running, and comes back by
itself once what killed it is gone.

moto's S3 server is killed and its port taken by this test: each start exits "Address already in use".
"""

from __future__ import annotations

import os
import signal
import socket

from deployments.stack import StackLayout
from deployments.stack.health import check
from deployments.stack.manager import status
from deployments.stack.supervisor_client import process_info, supervisor
from tests.polling import eventually


def test_a_process_that_dies_at_once_backs_off_is_shown_so_and_recovers_when_it_can_start(stack: StackLayout) -> None:
    before = {row.name: row for row in status(stack.directory)}
    victim = before["s3"].pid
    assert victim is not None
    squatter = socket.socket()
    squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        os.killpg(victim, signal.SIGKILL)

        def bound() -> bool:
            try:
                squatter.bind(("127.0.0.1", stack.ports["s3"]))
            except OSError:
                return False
            return True

        eventually(bound, within=30, every=0.01, what="the S3 port free for the squatter")
        squatter.listen()
        eventually(
            lambda: process_info(stack)["s3"]["statename"] == "BACKOFF", within=60, every=0.05, what="s3 in BACKOFF"
        )
        during = {row.name: row for row in status(stack.directory)}
        assert during["s3"].restarts >= 1 and during["s3"].last_exit is not None
        assert during["s3"].last_exit.startswith(("exit 1", "SIGKILL")), during["s3"]
        assert during["s3"].state in {"BACKOFF", "STARTING"} and not during["s3"].health.ok
        assert {n: r.pid for n, r in during.items() if n != "s3"} == {n: r.pid for n, r in before.items() if n != "s3"}
    finally:
        squatter.close()
        if process_info(stack).get("s3", {}).get("statename") == "FATAL":
            supervisor(stack).startProcess("s3")
    eventually(lambda: check("s3", stack).ok, within=60, every=0.1, what="s3 healthy again")
    eventually(lambda: process_info(stack)["s3"]["statename"] == "RUNNING", within=30, every=0.1, what="s3 RUNNING")
    after = {row.name: row for row in status(stack.directory)}["s3"]
    assert after.restarts >= 2
    assert after.last_exit is not None and after.last_exit.startswith("exit 1"), after
