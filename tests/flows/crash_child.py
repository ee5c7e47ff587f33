"""Run ``ingest_policy_revision`` in a process that SIGKILLs itself at a chosen point (crash-safety test).

Usage: ``python -m tests.flows.crash_child POINT SOURCE VERSION_LABEL EFFECTIVE_FROM FILE``. Settings come
from the environment, as on a worker. The real methods run; the wrapper only decides when to die:

- ``file_stored``: right after the original is written to the object store;
- ``revision_created``: right after the registry has the revision (``processing``);
- ``mid_upsert``: after the first half of the chunks reached Chroma.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from typing import Any

from lib.policies.chunks import PolicyVectorStore
from lib.policies.registry import PolicyRegistry
from lib.stores.objects import LocalObjectStore, S3ObjectStore

EXIT_NOT_CRASHED = 3


def die() -> None:
    sys.stdout.flush()
    os.kill(os.getpid(), signal.SIGKILL)


def after(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def call_then_die(*args: Any, **kwargs: Any) -> Any:
        method(*args, **kwargs)
        die()

    return call_then_die


def half_then_die(method: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(method)
    def upsert_half(self: PolicyVectorStore, ids: Any, texts: Any, embeddings: Any, metadatas: Any) -> None:
        half = max(1, len(ids) // 2)
        method(self, ids[:half], texts[:half], embeddings[:half], metadatas[:half])
        print(f"upserted {half} of {len(ids)}", flush=True)
        die()

    return upsert_half


def install(point: str) -> None:
    if point == "file_stored":
        LocalObjectStore.put_bytes = after(LocalObjectStore.put_bytes)  # type: ignore[method-assign]
        S3ObjectStore.put_bytes = after(S3ObjectStore.put_bytes)  # type: ignore[method-assign]
    elif point == "revision_created":
        PolicyRegistry.create_revision = after(PolicyRegistry.create_revision)  # type: ignore[method-assign]
    elif point == "mid_upsert":
        PolicyVectorStore.upsert = half_then_die(PolicyVectorStore.upsert)  # type: ignore[method-assign]
    else:
        raise SystemExit(f"unknown crash point {point!r}")


def main(argv: list[str]) -> int:
    point, source, version_label, effective_from, file = argv
    install(point)
    from flows.ingest import ingest_policy_revision

    ingest_policy_revision(source=source, version_label=version_label, effective_from=effective_from, file=file)
    return EXIT_NOT_CRASHED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
