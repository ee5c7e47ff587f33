"""``prefect.yaml`` and ``deployments/serve.py`` agree with the flows: names the service submits to,
parameters the flows accept, descriptions for the UI form, and the nightly audit schedule."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from prefect.cli.deploy._models import PrefectYamlModel
from prefect.utilities.callables import parameter_schema

from deployments.serve import PREFECT_YAML, build_deployments, load_flow
from flows.submit import INGEST_DEPLOYMENT, REINDEX_DEPLOYMENT

EXPECTED = {
    "ingest_policy_revision/ingest-policy-revision",
    "reindex_policy_revision/reindex-policy-revision",
    "delete_policy_revision/delete-policy-revision",
    "seed_policies/seed-policies",
    "consistency_audit/consistency-audit",
    "ingest_application_documents/ingest-application-documents",
    "remove_application_document/remove-application-document",
    "cleanup_kb_uploads/cleanup-kb-uploads",
    "ingest_governance_corpus/ingest-governance-corpus",
    "ingest_kb_document/ingest-kb-document",
}


@pytest.fixture(scope="module")
def config() -> dict[str, Any]:
    return yaml.safe_load(PREFECT_YAML.read_text())


def test_prefect_yaml_is_valid_and_deploys_every_flow_to_the_process_pool(config: dict[str, Any]) -> None:
    PrefectYamlModel.model_validate(config)
    names = {f"{load_flow(d['entrypoint']).name}/{d['name']}" for d in config["deployments"]}
    assert names == EXPECTED and {INGEST_DEPLOYMENT, REINDEX_DEPLOYMENT} <= names
    assert {d["work_pool"]["name"] for d in config["deployments"]} == {"policy-kb"}
    script = (PREFECT_YAML.parent / "deployments" / "create_work_pool.sh").read_text()
    assert "--type process" in script and "policy-kb" in script


def test_only_kb_ingestion_goes_to_the_limited_kb_notes_queue(config: dict[str, Any]) -> None:
    """A burst of notes must not starve policy ingestion: kb runs queue apart (the queue's limit is set by
    create_work_pool.sh, checked on a real server in tests/stack/test_prefect_deployments.py)."""
    queues = {d["name"]: d["work_pool"]["work_queue_name"] for d in config["deployments"]}
    assert {name for name, queue in queues.items() if queue == "kb-notes"} == {"ingest-kb-document"}
    assert {queue for name, queue in queues.items() if name != "ingest-kb-document"} == {"default"}


def test_every_deployment_parameter_is_a_flow_parameter_and_every_flow_parameter_is_described(
    config: dict[str, Any],
) -> None:
    for entry in config["deployments"]:
        flow = load_flow(entry["entrypoint"])
        properties = parameter_schema(flow.fn).model_dump()["properties"]
        given = set(entry.get("parameters") or {})
        for schedule in entry.get("schedules") or []:
            given |= set(schedule.get("parameters") or {})
        assert given <= set(properties), entry["name"]
        undescribed = [name for name, spec in properties.items() if not spec.get("description")]
        assert not undescribed, f"{entry['name']}: the UI form would show {undescribed} without a description"
        assert entry.get("description"), entry["name"]


def test_the_audit_runs_nightly_in_london_time_and_fails_when_findings_remain(config: dict[str, Any]) -> None:
    (audit,) = [d for d in config["deployments"] if d["name"] == "consistency-audit"]
    (schedule,) = audit["schedules"]
    minute, hour, day, month, weekday = schedule["cron"].split()
    assert (day, month, weekday) == ("*", "*", "*") and 0 <= int(hour) <= 6 and 0 <= int(minute) < 60
    assert schedule["timezone"] == "Europe/London"
    assert schedule["parameters"] == {"repair": False, "fail_on_findings": True}
    assert "schedules" in config["definitions"] and "work_pools" in config["definitions"]


def test_the_serve_entry_builds_the_same_deployments_from_prefect_yaml() -> None:
    deployments = {f"{d.flow_name}/{d.name}": d for d in build_deployments()}
    assert set(deployments) == EXPECTED
    (schedule,) = deployments["consistency_audit/consistency-audit"].schedules
    assert schedule.schedule.cron == "30 2 * * *" and schedule.schedule.timezone == "Europe/London"
    assert schedule.parameters == {"repair": False, "fail_on_findings": True}
    assert deployments["seed_policies/seed-policies"].parameters == {"config": "deployments/seed/seed.yaml"}


def test_entrypoints_are_files_of_this_project() -> None:
    for entry in yaml.safe_load(PREFECT_YAML.read_text())["deployments"]:
        assert (PREFECT_YAML.parent / Path(entry["entrypoint"].split(":")[0])).is_file()
