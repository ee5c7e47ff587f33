"""``python -m deployments.stack.ready STACK_DIR NAME...``: wait until the named processes of the stack in
STACK_DIR are healthy (exit 0), or give up (exit 1). The Procfile's lines run it before they ``exec`` a
process that needs others (a replica needs the stores, the worker needs the Prefect server)."""

from __future__ import annotations

import sys
from pathlib import Path

from deployments.stack.health import wait_healthy
from deployments.stack.layout import StackLayout

READY_TIMEOUT_S = 180.0


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: python -m deployments.stack.ready STACK_DIR NAME...", file=sys.stderr)
        return 2
    layout = StackLayout.load(Path(argv[0]))
    try:
        wait_healthy(argv[1:], layout, READY_TIMEOUT_S)
    except TimeoutError as exc:
        print(f"deployments.stack.ready: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
