"""``python -m deployments.stack.run NAME``: become the Procfile line NAME (``exec sh -c LINE``).

supervisord starts each process of the stack through this, so the Procfile stays the one definition of the
processes and no shell line has to survive supervisord's config syntax (``%`` interpolation, ``;`` and ``#``
comments, its own word splitting). The pid supervisord watches is the one the line's ``exec`` ends in.
"""

from __future__ import annotations

import os
import sys

from deployments.stack.layout import procfile


def main(argv: list[str]) -> int:
    lines = procfile()
    if len(argv) != 1 or argv[0] not in lines:
        print(f"usage: python -m deployments.stack.run NAME (one of {', '.join(lines)})", file=sys.stderr)
        return 2
    os.execvp("sh", ["sh", "-c", lines[argv[0]]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
