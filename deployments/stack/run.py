"""``python -m deployments.stack.run NAME``: become the Procfile line NAME (``exec sh -c LINE``);
``python -m deployments.stack.run -- COMMAND...``: become COMMAND (a second worker, in the tests).

supervisord starts each process of the stack through this, so the Procfile stays the one definition of the
processes and no shell line has to survive supervisord's config syntax (``%`` interpolation, ``;`` and ``#``
comments, its own word splitting). The pid supervisord watches is the one the line's ``exec`` ends in.

SIGINT and SIGQUIT are set back to their default actions first. A shell without job control starts a
background job (``make test &`` in a script, a CI step) with both ignored, every descendant inherits that, and a
shell cannot undo it (POSIX: signals ignored on entry to a non-interactive shell cannot be trapped or reset). A
Prefect worker stops on SIGTERM by sending itself SIGINT: with SIGINT ignored it never stops (decision 0047).
"""

from __future__ import annotations

import os
import signal
import sys

from deployments.stack.layout import procfile

RESTORED_SIGNALS = (signal.SIGINT, signal.SIGQUIT)
"""The signals a shell's background job ignores."""


def restore_default_signals() -> None:
    """Give the signals a background job ignores their default actions again (kept across ``exec``)."""
    for signum in RESTORED_SIGNALS:
        signal.signal(signum, signal.SIG_DFL)


def main(argv: list[str]) -> int:
    lines = procfile()
    if argv[:1] == ["--"] and len(argv) > 1:
        restore_default_signals()
        os.execvp(argv[1], argv[1:])
    if len(argv) != 1 or argv[0] not in lines:
        print(
            f"usage: python -m deployments.stack.run NAME (one of {', '.join(lines)}) | -- COMMAND...",
            file=sys.stderr,
        )
        return 2
    restore_default_signals()
    os.execvp("sh", ["sh", "-c", lines[argv[0]]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
