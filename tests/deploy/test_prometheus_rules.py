"""deploy/prometheus: promtool accepts the rules and the config, and the rules' unit tests pass."""

from __future__ import annotations

import re
import subprocess
from typing import Any

import yaml

from tests.deploy.helpers import (
    PROMETHEUS_CONFIG,
    RULES,
    RULES_TEST,
    all_rules,
    exposed_metric_names,
    find_tool,
    metric_names_in,
)

REQUIRED_ALERTS = {
    "OracleDaemonDown",  # daemon down
    "OracleMarketsStalled",  # no markets progressing while some are due
    "OracleReviewQueueGrowing",
    "OracleAgentFailureRatioHigh",  # per agent
    "OracleSubmissionsFailing",
    "OracleSourcePollErrors",
    "OracleAgentResearchSlow",  # research latency p95 high
    "OracleReviewPending",  # a market awaits a person (per market, with links)
    "OracleMarketDisputed",  # an answer is disputed (per market, with links)
    "OracleSignerBalanceLow",  # below chain.signer.min_balance_wei
    "OracleTransactionStuck",
    "OracleReviewSlaMissed",
    "OracleRpcErrorRatioHigh",  # per endpoint
    "OracleAutoSubmitAccuracyLow",  # the accuracy ledger, under its configured bound
    "OracleAgentBrierHigh",  # per agent, over its configured bound
    "OracleWatchdog",  # always firing: the dead man's switch hears the pipeline works
    "OracleRpcNoHealthyNode",  # per chain and replica: every RPC node out
    "OracleRpcHeadStalled",  # per chain and replica: the freshest head is old
    "OracleSignerRunwayShort",  # the signer's time to empty at its burn rate
}
# Alerts about one market: they carry what a person needs to act (deploy/alertmanager).
MARKET_LABELS = {"market", "venue", "question", "answer", "answers", "proof"}
# "none": the watchdog, for the dead man's switch alone (deploy/alertmanager).
SEVERITIES = {"critical", "warning", "info", "none"}
RUNBOOKS = RULES.parents[2] / "docs" / "runbooks"
# Every runbook answers these, in this order, each with some text under it.
RUNBOOK_SECTIONS = ("## What it means", "## What to look at", "## What to do")


def promtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [find_tool("promtool"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_promtool_accepts_the_rules() -> None:
    run = promtool("check", "rules", str(RULES))
    assert run.returncode == 0, run.stdout + run.stderr
    assert f"SUCCESS: {len(all_rules())} rules found" in run.stdout


def test_promtool_accepts_the_config_and_the_rules_it_loads() -> None:
    run = promtool("check", "config", str(PROMETHEUS_CONFIG))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 rule files found" in run.stdout


def test_rule_unit_tests_pass() -> None:
    """rules.test.yml: alerts fire on series that should trigger them, and only on those."""
    run = promtool("test", "rules", str(RULES_TEST))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SUCCESS" in run.stdout


def test_unit_tests_show_alerts_both_firing_and_silent() -> None:
    tests = yaml.safe_load(RULES_TEST.read_text(encoding="utf-8"))["tests"]
    fired: set[str] = set()
    silent: set[str] = set()
    for test in tests:
        for case in test.get("alert_rule_test", []):
            (fired if case["exp_alerts"] else silent).add(case["alertname"])
    both = fired & silent
    assert len(both) >= 2, f"alerts shown both firing and silent: {sorted(both)}"
    assert fired <= {rule.get("alert") for rule in all_rules()}


def test_required_alerts_exist_with_for_severity_summary_and_description() -> None:
    alerts = {rule["alert"]: rule for rule in all_rules() if "alert" in rule}
    assert set(alerts) >= REQUIRED_ALERTS, sorted(REQUIRED_ALERTS - set(alerts))
    for name, rule in alerts.items():
        assert re.fullmatch(r"\d+[smh]", rule.get("for", "")), f"{name}: no `for`"
        assert rule.get("labels", {}).get("severity") in SEVERITIES, f"{name}: severity"
        annotations = rule.get("annotations", {})
        assert annotations.get("summary", "").strip(), f"{name}: no summary"
        assert annotations.get("description", "").strip(), f"{name}: no description"


def test_recording_rules_follow_the_naming_convention() -> None:
    records = [rule["record"] for rule in all_rules() if "record" in rule]
    assert records, "no recording rules"
    assert len(records) == len(set(records)), "a record name is repeated"
    for record in records:  # level:metric:operations
        assert re.fullmatch(r"oracle:[a-z0-9_]+:[a-z0-9_]+", record), record


def test_rules_use_only_metrics_the_daemon_exposes() -> None:
    """A renamed metric in oracle/daemon/metrics.py must not leave a rule silently empty."""
    exposed = exposed_metric_names()
    for rule in all_rules():
        unknown = metric_names_in(rule["expr"]) - exposed
        assert not unknown, f"{rule.get('record') or rule.get('alert')}: {sorted(unknown)}"


def rule_tests() -> list[dict[str, Any]]:
    tests: list[dict[str, Any]] = yaml.safe_load(RULES_TEST.read_text(encoding="utf-8"))["tests"]
    return tests


def test_every_rule_is_unit_tested() -> None:
    """Each alert of rules.yml is shown firing in rules.test.yml, and each recording rule
    is evaluated there with an expected result."""
    fired = {
        case["alertname"]
        for test in rule_tests()
        for case in test.get("alert_rule_test", [])
        if case["exp_alerts"]
    }
    evaluated = {
        record
        for test in rule_tests()
        for case in test.get("promql_expr_test", [])
        if case["exp_samples"]
        for record in re.findall(r"oracle:[a-z0-9_]+:[a-z0-9_]+", case["expr"])
    }
    alerts = {rule["alert"] for rule in all_rules() if "alert" in rule}
    records = {rule["record"] for rule in all_rules() if "record" in rule}
    assert not alerts - fired, f"alerts never shown firing: {sorted(alerts - fired)}"
    assert not records - evaluated, f"records never evaluated: {sorted(records - evaluated)}"


def test_alerts_about_a_market_carry_its_question_answers_and_links() -> None:
    for rule in all_rules():
        if "oracle_market_attention_timestamp_seconds" not in rule.get("expr", ""):
            continue
        grouping = re.search(r"max by \(([^)]*)\)", rule["expr"])
        assert grouping, rule["alert"]
        assert {label.strip() for label in grouping.group(1).split(",")} >= MARKET_LABELS
        annotations = rule["annotations"]
        assert "$externalLabels.oracle_proof_url" in annotations["proof_url"], rule["alert"]
        if rule["alert"] == "OracleReviewPending":
            assert "$externalLabels.oracle_review_url" in annotations["review_url"]


def test_the_external_labels_the_alerts_link_with_are_documented() -> None:
    """Each `$externalLabels.X` a rule reads is shown in prometheus.yml and deploy/README.md."""
    used = set()
    for rule in all_rules():
        for value in rule.get("annotations", {}).values():
            used |= set(re.findall(r"\$externalLabels\.(\w+)", value))
    assert used == {"oracle_proof_url", "oracle_review_url"}
    config = PROMETHEUS_CONFIG.read_text(encoding="utf-8")
    readme = (RULES.parents[1] / "README.md").read_text(encoding="utf-8")
    for label in used:
        assert f"#   {label}: https://" in config, label
        assert f"{label}: https://" in readme, label


def test_every_alert_links_its_runbook_and_every_runbook_has_its_alert() -> None:
    alerts = {rule["alert"]: rule for rule in all_rules() if "alert" in rule}
    for name, rule in alerts.items():
        url = rule.get("annotations", {}).get("runbook_url")
        assert url == f"docs/runbooks/{name}.md", f"{name}: runbook_url is {url!r}"
        assert (RULES.parents[2] / url).is_file(), f"{name}: {url} does not exist"
    pages = {path.stem for path in RUNBOOKS.glob("*.md")} - {"README"}
    assert pages == set(alerts), f"runbooks without an alert: {sorted(pages - set(alerts))}"
    index = (RUNBOOKS / "README.md").read_text(encoding="utf-8")
    for name in alerts:
        assert f"[{name}]({name}.md)" in index, f"{name}: not listed in docs/runbooks/README.md"


def test_every_runbook_says_what_the_alert_means_what_to_look_at_and_what_to_do() -> None:
    pages = sorted(RUNBOOKS.glob("Oracle*.md"))
    assert pages, f"no runbooks in {RUNBOOKS}"
    for path in pages:
        text = path.read_text(encoding="utf-8")
        assert text.startswith(f"# {path.stem}\n"), f"{path.name}: title is not the alert"
        headings = [line for line in text.splitlines() if line.startswith("## ")]
        assert tuple(headings) == RUNBOOK_SECTIONS, f"{path.name}: sections {headings}"
        for section, body in zip(RUNBOOK_SECTIONS, text.split("\n## ")[1:], strict=True):
            assert body.partition("\n")[2].strip(), f"{path.name}: {section} is empty"
