"""``python -m deployments.docs`` (``make docs``): rewrite the generated reference tables in docs/ from the code,
and say which changed. ``--check`` changes nothing and exits 1 when one is stale."""

from __future__ import annotations

import argparse
import sys

from deployments.docs.generated import BLOCKS, regenerate


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m deployments.docs", description=__doc__)
    parser.add_argument("--check", action="store_true", help="exit 1 if a generated table is stale; write nothing")
    args = parser.parse_args(argv)
    if args.check:
        stale = [f"{b.document}:{b.name}" for b in BLOCKS if b.committed() != b.render()]
        for name in stale:
            print(f"stale: {name} (run make docs)")
        return 1 if stale else 0
    changed = regenerate()
    print("\n".join(f"rewrote {name}" for name in changed) or "docs: every generated table is up to date")
    return 0


if __name__ == "__main__":
    sys.exit(main())
