"""Serve every deployment of ``prefect.yaml`` from this one process: no work pool, no worker.

    PREFECT_API_URL=http://127.0.0.1:4200/api python -m deployments.serve

The deployments (names, descriptions, tags, default parameters, the nightly audit schedule) are read
from ``prefect.yaml``, so the served ones and the ``prefect deploy`` ones never drift apart. Runs
execute in subprocesses of this process, with its environment (the stores of ``lib/config/``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import yaml
from prefect import Flow, serve
from prefect.deployments.runner import RunnerDeployment
from prefect.schedules import Schedule

PROJECT_ROOT = Path(__file__).resolve().parents[1]
PREFECT_YAML = PROJECT_ROOT / "prefect.yaml"


def _to_deployment(flow: Flow[..., Any], **options: Any) -> RunnerDeployment:
    """``flow.to_deployment`` from sync code, where Prefect's dispatcher returns the deployment itself."""
    return cast(Callable[..., RunnerDeployment], flow.to_deployment)(**options)


def load_flow(entrypoint: str) -> Flow[..., Any]:
    """``flows/ingest.py:ingest_policy_revision`` → the flow object, imported as a module of this project."""
    path, _, name = entrypoint.partition(":")
    module = importlib.import_module(path.removesuffix(".py").replace("/", "."))
    flow = getattr(module, name)
    if not isinstance(flow, Flow):
        raise TypeError(f"{entrypoint} is not a Prefect flow")
    return flow


def _schedule(config: dict[str, Any]) -> Schedule:
    return Schedule(
        cron=config["cron"],
        timezone=config.get("timezone"),
        slug=config.get("slug"),
        parameters=config.get("parameters") or {},
    )


def build_deployments(prefect_yaml: Path = PREFECT_YAML) -> list[RunnerDeployment]:
    """One runner deployment per entry of ``prefect.yaml``'s ``deployments:``."""
    config = yaml.safe_load(prefect_yaml.read_text())
    deployments = []
    for entry in config["deployments"]:
        flow = load_flow(entry["entrypoint"])
        limit = entry.get("concurrency_limit")
        deployments.append(
            _to_deployment(
                flow,
                name=entry["name"],
                description=entry.get("description"),
                tags=entry.get("tags"),
                parameters=entry.get("parameters"),
                schedules=[_schedule(s) for s in entry.get("schedules") or []],
                concurrency_limit=limit,
            )
        )
    return deployments


def main() -> None:
    serve(*build_deployments())


if __name__ == "__main__":
    main()
