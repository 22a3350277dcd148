"""deploy/monitoring: the Grafana dashboard's queries and the PrometheusRule's expressions
parse as PromQL and read only metrics the controller exports; the rules are well formed; the
monitoring overlay adds the ServiceMonitor for the metrics Service."""

from __future__ import annotations

import json

import pytest
import yaml

from mpi_controller.runtime.metrics import REGISTRY
from tests.promql import metric_names
from tests.support import REPO
from tests.unit.test_metrics_docs import registered

MONITORING = REPO / "deploy" / "monitoring"
DASHBOARD = json.loads((MONITORING / "grafana-dashboard.json").read_text())
RULE = yaml.safe_load((MONITORING / "prometheus-rule.yaml").read_text())


def exported_series() -> set[str]:
    """Every series name ``/metrics`` can show (``_total`` counters, histogram parts)."""
    out: set[str] = set()
    for name, (kind, _labels) in registered().items():
        if kind == "histogram":
            out |= {f"{name}_bucket", f"{name}_sum", f"{name}_count"}
        else:
            out.add(name)
    return out


def _queries() -> list[tuple[str, str]]:
    return [(p["title"], t["expr"]) for p in DASHBOARD["panels"] for t in p["targets"]]


@pytest.mark.parametrize(("title", "expr"), _queries(), ids=[t for t, _ in _queries()])
def test_every_dashboard_query_parses_and_names_exported_metrics(title: str, expr: str) -> None:
    names = metric_names(expr)
    assert names
    assert names <= exported_series(), names - exported_series()


def test_the_dashboard_is_importable() -> None:
    assert DASHBOARD["uid"] == "mpi-controller"
    assert [v["name"] for v in DASHBOARD["templating"]["list"]] == ["datasource"]
    ids = [p["id"] for p in DASHBOARD["panels"]]
    assert len(ids) == len(set(ids))
    assert all(t["datasource"]["uid"] == "${datasource}" for p in DASHBOARD["panels"]
               for t in p["targets"])


def _rules() -> list[dict[str, object]]:
    return [r for g in RULE["spec"]["groups"] for r in g["rules"]]


def test_the_rules_cover_the_issue_and_are_well_formed() -> None:
    assert (RULE["apiVersion"], RULE["kind"]) == ("monitoring.coreos.com/v1", "PrometheusRule")
    alerts = [r["alert"] for r in _rules()]
    assert alerts == ["MPIControllerJobsFailing", "MPIControllerQueueBacklog",
                      "MPIControllerReconcileErrors", "MPIControllerNoLeader",
                      "MPIControllerLeaderChanges", "MPIControllerWebhookErrors"]
    for rule in _rules():
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}, rule
        assert rule["labels"]["severity"] in ("warning", "critical")  # type: ignore[index]
        assert {"summary", "description"} <= set(rule["annotations"])  # type: ignore[arg-type]
        if "for" in rule:
            assert metric_names(f"x[{rule['for']}]") == {"x"}  # a valid duration


@pytest.mark.parametrize("rule", _rules(), ids=[str(r["alert"]) for r in _rules()])
def test_every_rule_parses_and_names_exported_metrics(rule: dict[str, object]) -> None:
    names = metric_names(str(rule["expr"]))
    assert names
    assert names <= exported_series(), names - exported_series()


@pytest.mark.parametrize(("expr", "problem"), [
    ("sum(rate(x[5m])", "unexpected end"),
    ("rate(x[5])", "expected a duration"),
    ("x{a=b}", "expected a quoted label value"),
    ("nosuchfn(x)", "unknown function"),
    ("sum by (a b) (x)", r"expected '\)'"),
])
def test_the_checker_refuses_broken_queries(expr: str, problem: str) -> None:
    with pytest.raises(ValueError, match=problem):
        metric_names(expr)


def test_the_monitoring_overlay_scrapes_the_metrics_service() -> None:
    service = yaml.safe_load((REPO / "deploy/base/metrics-service.yaml").read_text())
    monitor = yaml.safe_load((MONITORING / "service-monitor.yaml").read_text())
    assert monitor["spec"]["selector"]["matchLabels"] == service["metadata"]["labels"]
    assert [e["port"] for e in monitor["spec"]["endpoints"]] == [
        p["name"] for p in service["spec"]["ports"]]
    deployment = yaml.safe_load((REPO / "deploy/base/deployment.yaml").read_text())
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert "--monitoring-port=9090" in container["args"]
    assert service["spec"]["selector"] == deployment["spec"]["selector"]["matchLabels"]
    assert REGISTRY is not None
