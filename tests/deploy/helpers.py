"""Shared by the deploy tests: paths, Prometheus' tools, the dashboard's queries."""

from __future__ import annotations

import json
import re
import shutil
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.daemon.metrics import DaemonMetrics

REPO = Path(__file__).resolve().parents[2]
DEPLOY = REPO / "deploy"
RULES = DEPLOY / "prometheus" / "rules.yml"
RULES_TEST = DEPLOY / "prometheus" / "rules.test.yml"
PROMETHEUS_CONFIG = DEPLOY / "prometheus" / "prometheus.yml"
ALERTMANAGER_CONFIG = DEPLOY / "alertmanager" / "alertmanager.yml"
ALERTMANAGER_TEMPLATES = DEPLOY / "alertmanager" / "templates"
DASHBOARD = DEPLOY / "grafana" / "dashboards" / "oracle.json"
DEPLOY_CONFIG = DEPLOY / "config.yaml"

# Where Debian's `prometheus` and `prometheus-alertmanager` packages put their programs,
# should PATH lack them.
_TOOL_DIRS = ("/usr/bin", "/usr/local/bin", "/bin")

# What Grafana would put in place of its variables when the tests run the queries.
GRAFANA_VALUES = {
    "__rate_interval": "1m",
    "__interval": "15s",
    "__range": "5m",
    "window": "1m",  # the dashboard's "Percentile window" variable
    "job": "oracle",
    "instance": ".*",  # "All"
}
_VARIABLE = re.compile(r"\$\{(\w+)(?::\w+)?\}|\[\[(\w+)\]\]|\$(\w+)")
# The daemon's own metrics, and the process' (`process_*`, `python_info`) on its registry.
_METRIC = re.compile(r"\b((?:oracle|process|python)_[a-z0-9_]+)\b")


def find_tool(name: str, package: str = "prometheus") -> str:
    """The path of a Prometheus (or, with `package`, Alertmanager) program, or skip the
    test saying how to get it."""
    found = shutil.which(name)
    if found is None:
        for directory in _TOOL_DIRS:
            candidate = Path(directory) / name
            if candidate.is_file():
                return str(candidate)
        pytest.skip(
            f"`{name}` not found on PATH: install Debian's {package} package "
            "(scripts/test does, through scripts/setup_test_tools.sh, when apt-get is available)"
        )
    return found


def http_json(url: str, timeout: float = 5) -> tuple[int, Any]:
    """GET `url`; its status and its JSON body, for errors too."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        body = error.read()
        try:
            return error.code, json.loads(body)
        except ValueError:
            return error.code, body.decode(errors="replace")


def prometheus_query(base_url: str, expr: str) -> dict[str, Any]:
    """The `/api/v1/query` answer for `expr` (instant, now), errors included."""
    status, body = http_json(f"{base_url}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    if not isinstance(body, dict):
        return {"status": "error", "error": f"HTTP {status}: {body}"}
    return body


def load_dashboard() -> dict[str, Any]:
    document: dict[str, Any] = json.loads(DASHBOARD.read_text(encoding="utf-8"))
    return document


def data_panels(dashboard: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every panel that queries (rows only group them), nested ones included."""
    for panel in dashboard["panels"]:
        if panel.get("type") == "row":
            yield from panel.get("panels", [])
        else:
            yield panel


def variables_in(expr: str) -> set[str]:
    return {next(g for g in match.groups() if g) for match in _VARIABLE.finditer(expr)}


def substitute(expr: str, values: dict[str, str] | None = None) -> str:
    """`expr` with Grafana's variables replaced, as Grafana sends it to Prometheus."""
    values = GRAFANA_VALUES if values is None else values

    def replace(match: re.Match[str]) -> str:
        name = next(g for g in match.groups() if g)
        if name not in values:
            raise KeyError(f"no value for the variable ${name} in {expr!r}")
        return values[name]

    return _VARIABLE.sub(replace, expr)


def metric_names_in(text: str) -> set[str]:
    return set(_METRIC.findall(text))


def exposed_metric_names() -> set[str]:
    """Every series name the daemon's registry can expose (`_total`, `_bucket`, ...)."""
    names = set()
    for family in DaemonMetrics().registry.collect():
        if family.type == "counter":
            names |= {f"{family.name}_total", f"{family.name}_created"}
        elif family.type == "histogram":
            names |= {f"{family.name}_{suffix}" for suffix in ("bucket", "sum", "count")}
            names.add(f"{family.name}_created")
        else:
            names.add(family.name)
    return names


def metric_families() -> dict[str, str]:
    """Each metric of the daemon, by the name a query uses for it, with its type."""
    families = {}
    for family in DaemonMetrics().registry.collect():
        name = {"counter": f"{family.name}_total", "histogram": f"{family.name}_bucket"}.get(
            family.type, family.name
        )
        families[name] = family.type
    return families


def load_rules() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    return document


def all_rules() -> list[dict[str, Any]]:
    return [rule for group in load_rules()["groups"] for rule in group["rules"]]
