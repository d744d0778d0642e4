"""deploy/grafana: the dashboard's structure, its coverage of the metrics, its provisioning."""

from __future__ import annotations

from typing import Any

import yaml

from tests.deploy.helpers import (
    DEPLOY,
    GRAFANA_VALUES,
    data_panels,
    exposed_metric_names,
    load_dashboard,
    metric_families,
    metric_names_in,
    substitute,
    variables_in,
)

GRID_WIDTH = 24
GRAFANA_BUILTINS = {"__rate_interval", "__interval", "__range"}
DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}

# Panel title -> what it must show (the panels issue 5 asks for).
REQUIRED_PANELS = {
    "Markets by state": "oracle_markets",
    "Throughput": "oracle_consensus_total",
    "Agent research latency p50 / p95": "oracle_agent_research_seconds_bucket",
    "Agent failure ratio": "oracle_agent_answers_total",
    "Verdicts by action": "oracle_consensus_total",
    "Review reasons": "oracle_review_reasons_total",
    "Open reviews": "oracle_reviews_open",
    "Submissions by result": "oracle_submissions_total",
    "Gas used": "oracle_gas_used_total",
    "Errors by stage": "oracle_errors_total",
    "Due to submitted latency": "oracle_due_to_submitted_seconds_bucket",
    "Replicas up": "up",
    # The metrics operators of on-chain services look for first (issue 14).
    "Signer balance": "oracle_signer_balance_wei",
    "Pending transactions": "oracle_tx_pending",
    "Oldest pending transaction age": "oracle_tx_oldest_pending_age_seconds",
    "Transaction replacements": "oracle_tx_replacements_total",
    "Oldest open review age": "oracle_review_oldest_open_age_seconds",
    "RPC latency p50 / p95 by endpoint": "oracle_rpc_call_seconds_bucket",
    "RPC error ratio by endpoint": "oracle_rpc_call_errors_total",
    "Process CPU": "process_cpu_seconds_total",
    "Process memory": "process_resident_memory_bytes",
    "Open files": "process_open_fds",
    "Build": "oracle_build_info",
    # The accuracy ledger's rolling figures.
    "Auto-submitted accuracy (7d / 30d)": "oracle_auto_submitted_accuracy",
    "Agent Brier score (7d / 30d)": "oracle_agent_brier",
}


def all_exprs(dashboard: dict[str, Any]) -> list[str]:
    return [target["expr"] for panel in data_panels(dashboard) for target in panel["targets"]]


def test_every_panel_has_a_datasource_targets_with_expr_and_a_grid_position() -> None:
    dashboard = load_dashboard()
    panels = list(data_panels(dashboard))
    assert len(panels) >= len(REQUIRED_PANELS)
    for panel in panels:
        title = panel.get("title")
        assert title, f"panel {panel.get('id')} has no title"
        assert panel.get("datasource") == DATASOURCE, title
        assert panel.get("targets"), f"{title}: no targets"
        ref_ids = [target.get("refId") for target in panel["targets"]]
        assert len(set(ref_ids)) == len(ref_ids), f"{title}: repeated refId"
        for target in panel["targets"]:
            assert target.get("expr", "").strip(), f"{title}: a target without expr"
            assert target.get("datasource", DATASOURCE) == DATASOURCE, title


def test_panel_ids_are_unique_and_panels_do_not_overlap() -> None:
    dashboard = load_dashboard()
    nested = [p for row in dashboard["panels"] for p in row.get("panels", [])]
    everything = [*dashboard["panels"], *nested]
    ids = [panel["id"] for panel in everything]
    assert all(isinstance(i, int) for i in ids)
    assert len(ids) == len(set(ids)), "repeated panel id"
    cells: dict[tuple[int, int], str] = {}
    for panel in everything:
        grid = panel.get("gridPos")
        assert grid is not None, f"{panel.get('title')}: no gridPos"
        x, y, w, h = (grid[k] for k in ("x", "y", "w", "h"))
        assert all(isinstance(v, int) for v in (x, y, w, h)), panel["title"]
        assert min(w, h) >= 1, panel["title"]
        assert 0 <= x <= x + w <= GRID_WIDTH, panel["title"]
        for cell in ((cx, cy) for cx in range(x, x + w) for cy in range(y, y + h)):
            assert cell not in cells, f"{panel['title']} overlaps {cells[cell]}"
            cells[cell] = panel["title"]


def test_the_required_panels_are_there() -> None:
    by_title = {panel["title"]: panel for panel in data_panels(load_dashboard())}
    for title, metric in REQUIRED_PANELS.items():
        assert title in by_title, f"no panel {title!r}"
        exprs = " ".join(t["expr"] for t in by_title[title]["targets"])
        assert metric in exprs, f"{title!r} does not query {metric}"


def test_every_metric_of_the_daemon_is_on_the_dashboard() -> None:
    used = set()
    for expr in all_exprs(load_dashboard()):
        used |= metric_names_in(expr)
    missing = set(metric_families()) - used
    assert not missing, f"metrics no panel shows: {sorted(missing)}"


def test_the_dashboard_uses_only_metrics_the_daemon_exposes() -> None:
    exposed = exposed_metric_names()
    for expr in all_exprs(load_dashboard()):
        assert metric_names_in(expr) <= exposed, expr


def test_every_variable_used_is_defined_and_substitutable() -> None:
    dashboard = load_dashboard()
    defined = {variable["name"] for variable in dashboard["templating"]["list"]}
    assert "datasource" in defined
    for expr in all_exprs(dashboard):
        for name in variables_in(expr):
            assert name in defined or name in GRAFANA_BUILTINS, f"${name} in {expr}"
            assert name in GRAFANA_VALUES, f"the live test has no value for ${name}"
        assert "$" not in substitute(expr)
    for variable in dashboard["templating"]["list"]:
        if variable["type"] == "query":
            assert variable["datasource"] == DATASOURCE, variable["name"]


def test_provisioning_points_grafana_at_prometheus_and_at_the_dashboards() -> None:
    datasources = yaml.safe_load(
        (DEPLOY / "grafana/provisioning/datasources/prometheus.yaml").read_text()
    )["datasources"]
    assert [d["type"] for d in datasources] == ["prometheus"]
    dashboard = load_dashboard()
    default = next(v for v in dashboard["templating"]["list"] if v["name"] == "datasource")
    assert default["query"] == "prometheus"
    assert default["current"]["value"] == datasources[0]["uid"]
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    prometheus_port = compose["services"]["prometheus"]["ports"][0].rsplit(":", 1)[1]
    assert datasources[0]["url"] == f"http://prometheus:{prometheus_port}"

    providers = yaml.safe_load(
        (DEPLOY / "grafana/provisioning/dashboards/oracle.yaml").read_text()
    )["providers"]
    grafana_mounts = dict(
        reversed(volume.split(":")[:2]) for volume in compose["services"]["grafana"]["volumes"]
    )
    for provider in providers:
        source = grafana_mounts[provider["options"]["path"]]
        assert (DEPLOY / source / "oracle.json").is_file()
    home = compose["services"]["grafana"]["environment"][
        "GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"
    ]
    home_dir, _, home_file = home.rpartition("/")
    assert (DEPLOY / grafana_mounts[home_dir] / home_file).is_file()
    assert grafana_mounts["/etc/grafana/provisioning/datasources"] == (
        "./grafana/provisioning/datasources"
    )
    assert grafana_mounts["/etc/grafana/provisioning/dashboards"] == (
        "./grafana/provisioning/dashboards"
    )
