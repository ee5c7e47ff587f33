"""``deployments/observability/``, checked by reading it (no Prometheus or Grafana runs here): the alert rules
are the four the operator needs, and every metric the rules and the dashboard name is one the servers expose
(read from the exposition of the metrics ``lib.observability`` defines and the registry's collector)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

import lib.observability.metrics  # noqa: F401  (defines the metrics this checks against)
from lib.policies.registry import PolicyRegistry
from lib.policies.revision_metrics import RevisionCollector

ROOT = Path(__file__).resolve().parents[1]
OBSERVABILITY = ROOT / "deployments" / "observability"
KEYWORDS = {"and", "or", "unless", "on", "ignoring", "group_left", "group_right", "bool", "offset"}
SUFFIXES = {"counter": ("_total",), "histogram": ("_bucket", "_sum", "_count"), "gauge": ("",)}


def exposed_names(registry: PolicyRegistry) -> set[str]:
    own = CollectorRegistry()
    own.register(RevisionCollector(registry, 3600))
    text = (generate_latest(REGISTRY) + generate_latest(own)).decode()
    names = {"up"}
    for family in text_string_to_metric_families(text):
        names.update(family.name + suffix for suffix in SUFFIXES.get(family.type, ("",)))
    return names


def metric_names(expr: str) -> set[str]:
    """The metrics a PromQL expression selects: its identifiers once strings, label matchers, ranges and
    groupings are cut out, other than functions (followed by a parenthesis) and keywords."""
    for cut in (r'"[^"]*"', r"\{[^}]*\}", r"\[[^\]]*\]", r"\b(?:by|without)\s*\([^)]*\)"):
        expr = re.sub(cut, " ", expr)
    return set(re.findall(r"\b([a-zA-Z_:][a-zA-Z0-9_:]*)\b(?!\s*\()", expr)) - KEYWORDS


def expressions() -> list[tuple[str, str]]:
    alerts = yaml.safe_load((OBSERVABILITY / "alerts.yml").read_text())
    found = [(rule["alert"], str(rule["expr"])) for group in alerts["groups"] for rule in group["rules"]]
    dashboard = json.loads((OBSERVABILITY / "grafana/dashboards/policy-kb.json").read_text())
    found += [(panel["title"], target["expr"]) for panel in dashboard["panels"] for target in panel["targets"]]
    return found


@pytest.mark.parametrize(("where", "expr"), expressions())
def test_every_metric_the_rules_and_the_dashboard_name_is_exposed(
    where: str, expr: str, registry: PolicyRegistry
) -> None:
    used, exposed = metric_names(expr), exposed_names(registry)
    assert used, f"{where}: no metric found in {expr}"
    assert used <= exposed, f"{where}: {sorted(used - exposed)} are not exposed"


def test_the_alert_rules_cover_error_rate_p99_audit_findings_and_stuck_revisions() -> None:
    rules = {
        rule["alert"]: rule
        for g in yaml.safe_load((OBSERVABILITY / "alerts.yml").read_text())["groups"]
        for rule in g["rules"]
    }
    assert {"ToolErrorRateHigh", "ToolLatencyP99High", "AuditFindings", "StuckRevisions"} <= set(rules)
    assert "histogram_quantile(0.99" in rules["ToolLatencyP99High"]["expr"]
    assert all(rule["annotations"]["summary"] and rule["labels"]["severity"] for rule in rules.values())


def test_grafana_is_provisioned_with_the_dashboard_over_prometheus() -> None:
    source = yaml.safe_load((OBSERVABILITY / "grafana/provisioning/datasources/prometheus.yml").read_text())
    [datasource] = source["datasources"]
    dashboard = json.loads((OBSERVABILITY / "grafana/dashboards/policy-kb.json").read_text())
    assert {p["datasource"]["uid"] for p in dashboard["panels"]} == {datasource["uid"]}
    assert datasource["url"] == "http://prometheus:9090"
    assert len({p["id"] for p in dashboard["panels"]}) == len(dashboard["panels"])
