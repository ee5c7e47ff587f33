"""SIGTERM ends a process of the project the way Ctrl-C does: through the normal exit path.

Python's default action for SIGTERM kills the process at once: no ``finally``, no ``atexit``. Whatever the
process started and stops on exit is then left behind; Prefect's temporary local API server (a uvicorn
subprocess, stopped from ``atexit``; its size: decision 0020) was, once per stopped service or CLI command.
SIGINT already raises ``KeyboardInterrupt``; ``exit_on_sigterm`` makes SIGTERM raise ``SystemExit``.
"""

from __future__ import annotations

import signal
import threading
from types import FrameType


def _raise_system_exit(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)


def exit_on_sigterm() -> bool:
    """Install the SIGTERM handler; True when it is in place.

    Only from the main thread (Python's rule for signal handlers), and only over the default action: a
    handler someone else installed is kept. uvicorn installs its own while serving and, after its graceful
    shutdown, restores this one and re-raises the signal, so a served process exits through here too.
    """
    if threading.current_thread() is not threading.main_thread():
        return False
    current = signal.getsignal(signal.SIGTERM)
    if current is _raise_system_exit:
        return True
    if current not in (signal.SIG_DFL, None):
        return False
    signal.signal(signal.SIGTERM, _raise_system_exit)
    return True
