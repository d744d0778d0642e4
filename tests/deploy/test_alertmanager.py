"""deploy/alertmanager: the configuration, its templates and its delivery, with Debian's
real `prometheus-alertmanager` (amtool, alertmanager).

- `amtool check-config` accepts the configuration and `amtool config routes test` sends
  each kind of alert to the receivers the file promises, the console's per-person notices
  (`OracleConsoleNotice`) to the receiver of the person they name;
- `amtool template render` renders the templates on an alert about a market: the message
  carries the market, the question, the answers at stake and the links;
- a real Alertmanager inhibits what the configuration says it inhibits;
- the console's notice, posted to a real Alertmanager, reaches that person's receiver;
- end to end: a real `oracle run` (the venues of test_live_stack) scraped by a real
  Prometheus evaluating the shipped rules (a copy whose `for:` is 1 s), which sends the
  firing alerts to a real Alertmanager (a copy of the shipped configuration whose receivers
  point at a local HTTP sink, the Slack URL and the PagerDuty key read from files, as in
  production). The sink receives the webhook, Slack and PagerDuty payloads, with the
  market's question, the answers and links to its proof and its review item.
"""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

from oracle.console import notify
from oracle.devchain import free_port
from tests.deploy.helpers import (
    ALERTMANAGER_CONFIG,
    ALERTMANAGER_TEMPLATES,
    RULES,
    find_tool,
    http_json,
    prometheus_query,
)
from tests.deploy.test_live_stack import (
    CONTESTED,
    Venues,
    start_daemon,
    start_prometheus,
    stop,
    wait_for,
)

PROOF_BASE = "https://proofs.example.org/oracle"
REVIEW_BASE = "https://review.example.org/items"
ROUTING_KEY = "test-routing-key-0123456789abcdef"
MARKET_ALERT = {
    "labels": {
        "alertname": "OracleReviewPending",
        "severity": "warning",
        "market": "venue:contested-1",
        "venue": "venue",
        "reason": "review",
        "question": "Was the election result contested in court?",
        "answer": "YES",
        "answers": "YES: alpha; NO: beta",
        "review": "7",
        "proof": "venue_contested-1/c0ffee",
    },
    "annotations": {
        "summary": "review 7 awaits a person: Was the election result contested in court?",
        "description": "Market venue:contested-1 (venue venue) has waited 10m 0s.",
        "proof_url": f"{PROOF_BASE}/venue_contested-1/c0ffee.md",
        "review_url": f"{REVIEW_BASE}/7",
    },
}


def amtool(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [find_tool("amtool", "prometheus-alertmanager"), *args],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def alertmanager_program() -> str:
    """Alertmanager's server: `prometheus-alertmanager` in Debian's package."""
    if shutil.which("alertmanager"):
        return find_tool("alertmanager", "prometheus-alertmanager")
    return find_tool("prometheus-alertmanager", "prometheus-alertmanager")


def config() -> dict[str, Any]:
    document: dict[str, Any] = yaml.safe_load(ALERTMANAGER_CONFIG.read_text(encoding="utf-8"))
    return document


# -- the configuration ---------------------------------------------------------------------


def test_amtool_accepts_the_configuration_and_finds_the_templates() -> None:
    run = amtool("check-config", str(ALERTMANAGER_CONFIG))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "SUCCESS" in run.stdout
    assert re.search(r"- 1 templates", run.stdout), run.stdout
    receivers = {r["name"] for r in config()["receivers"]}
    assert f"{len(receivers)} receivers" in run.stdout, run.stdout


def test_secrets_are_read_from_files_never_written_in_the_configuration() -> None:
    for receiver in config()["receivers"]:
        for slack in receiver.get("slack_configs", []):
            assert "api_url" not in slack, receiver["name"]
            assert slack["api_url_file"].startswith("/run/secrets/")
        for pagerduty in receiver.get("pagerduty_configs", []):
            assert not {"routing_key", "service_key"} & set(pagerduty), receiver["name"]
            assert pagerduty["routing_key_file"].startswith("/run/secrets/")
    assert "api_url" not in config().get("global", {})


@pytest.mark.parametrize(
    ("labels", "receivers"),
    [
        (["alertname=OracleDaemonDown", "severity=critical"], "webhook,pagerduty,slack"),
        (["alertname=OracleSourcePollErrors", "severity=warning"], "webhook,slack"),
        (["alertname=OracleSourceMalformedMarkets", "severity=info"], "webhook"),
        (["alertname=OracleReviewPending", "severity=warning"], "webhook,slack-review"),
        (["alertname=OracleMarketDisputed", "severity=warning"], "webhook,slack-review"),
        (["alertname=OracleWatchdog", "severity=none"], "deadmans-switch"),
        (["alertname=OracleRpcNoHealthyNode", "severity=critical"], "webhook,pagerduty,slack"),
        (["alertname=OracleSignerRunwayShort", "severity=warning"], "webhook,slack"),
        # The console's notices: to the person named, and no one else (the example people
        # in the shipped routes); someone without a route of their own in #oracle-review.
        (["alertname=OracleConsoleNotice", "kind=assigned", "person=ann"], "person-ann"),
        (["alertname=OracleConsoleNotice", "kind=approved", "person=rita"], "person-rita"),
        (["alertname=OracleConsoleNotice", "kind=assigned", "person=otto"], "console-notices"),
    ],
)
def test_routes_send_each_alert_to_the_promised_receivers(
    labels: list[str], receivers: str
) -> None:
    run = amtool("config", "routes", "test", f"--config.file={ALERTMANAGER_CONFIG}", *labels)
    assert run.returncode == 0, run.stdout + run.stderr
    assert run.stdout.strip() == receivers


def receivers_of(route: dict[str, Any]) -> set[str]:
    """The receivers `route` and the routes under it send to."""
    return {route["receiver"]}.union(*(receivers_of(child) for child in route.get("routes", [])))


def test_every_receiver_is_routed_to_and_alerts_group_by_market_and_venue() -> None:
    route = config()["route"]
    assert receivers_of(route) == {r["name"] for r in config()["receivers"]}
    assert {"alertname", "market", "venue", "source"} <= set(route["group_by"])


# -- the templates -------------------------------------------------------------------------


def render(text: str, tmp_path: Path, alerts: list[dict[str, Any]]) -> str:
    """`amtool template render` of the template text `text` on a notification of `alerts`."""

    def common(key: str) -> dict[str, str]:
        first = alerts[0][key]
        return {k: v for k, v in first.items() if all(a[key].get(k) == v for a in alerts)}

    data = {
        "receiver": "slack-review",
        "status": "firing",
        "alerts": [
            {
                "status": "firing",
                "labels": a["labels"],
                "annotations": a["annotations"],
                "startsAt": "2026-11-23T00:00:00Z",
                "endsAt": "0001-01-01T00:00:00Z",
                "generatorURL": "http://prometheus:9090/graph?g0.expr=x",
                "fingerprint": "0123456789abcdef",
            }
            for a in alerts
        ],
        "groupLabels": {"alertname": alerts[0]["labels"]["alertname"]},
        "commonLabels": common("labels"),
        "commonAnnotations": common("annotations"),
        "externalURL": "http://alertmanager:9093",
    }
    path = tmp_path / "data.json"
    path.write_text(json.dumps(data))
    run = amtool(
        "template",
        "render",
        f"--template.glob={ALERTMANAGER_TEMPLATES}/*.tmpl",
        f"--template.text={text}",
        f"--template.data={path}",
    )
    assert run.returncode == 0, run.stdout + run.stderr
    return run.stdout


@pytest.mark.parametrize(
    ("text", "link"),
    [
        ('{{ template "oracle.slack.text" . }}', "<{}|"),  # Slack's link syntax
        ('{{ template "oracle.text" .Alerts }}', "{}"),  # webhook-like and PagerDuty details
    ],
)
def test_templates_carry_the_market_the_question_the_answers_and_the_links(
    text: str, link: str, tmp_path: Path
) -> None:
    rendered = render(text, tmp_path, [MARKET_ALERT])
    for expected in (
        "review 7 awaits a person",
        "venue:contested-1",
        "Was the election result contested in court?",
        "YES: alpha; NO: beta",
        link.format(MARKET_ALERT["annotations"]["proof_url"]),
        link.format(MARKET_ALERT["annotations"]["review_url"]),
    ):
        assert expected in rendered, f"{expected!r} not in\n{rendered}"
    title = render('{{ template "oracle.title" . }}', tmp_path, [MARKET_ALERT])
    assert title.strip() == "[FIRING:1] OracleReviewPending · venue · venue:contested-1"


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{{ template "oracle.slack.text" . }}', "*Runbook:* docs/runbooks/OracleDaemonDown.md"),
        ('{{ template "oracle.text" .Alerts }}', "Runbook: docs/runbooks/OracleDaemonDown.md"),
    ],
)
def test_templates_name_the_alerts_runbook(text: str, line: str, tmp_path: Path) -> None:
    alert = {
        "labels": {"alertname": "OracleDaemonDown", "severity": "critical"},
        "annotations": {
            "summary": "s",
            "description": "d",
            "runbook_url": "docs/runbooks/OracleDaemonDown.md",
        },
    }
    assert line in render(text, tmp_path, [alert]).splitlines()


def test_templates_leave_out_what_an_alert_does_not_have(tmp_path: Path) -> None:
    """An alert about a replica has no market: no empty "Market:" or "Proof:" lines."""
    alert = {
        "labels": {
            "alertname": "OracleDaemonDown",
            "severity": "critical",
            "instance": "oracle-0:9464",
            "job": "oracle",
        },
        "annotations": {"summary": "oracle replica oracle-0:9464 is down", "description": "d"},
    }
    text = render('{{ template "oracle.slack.text" . }}', tmp_path, [alert])
    assert "oracle replica oracle-0:9464 is down" in text
    for absent in ("Market", "Question", "Answers", "Proof", "Review"):
        assert absent not in text, text
    title = render('{{ template "oracle.title" . }}', tmp_path, [alert])
    assert title.strip() == "[FIRING:1] OracleDaemonDown"
    severity = render('{{ template "oracle.pagerduty.severity" . }}', tmp_path, [alert])
    assert severity.strip() == "critical"


# -- a real Alertmanager -------------------------------------------------------------------


class Sink:
    """An HTTP server on 127.0.0.1 that keeps every JSON body POSTed to it, by path."""

    def __init__(self) -> None:
        self.received: dict[str, list[Any]] = {}
        self.lock = threading.Lock()
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                with sink.lock:
                    sink.received.setdefault(self.path, []).append(body)
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def bodies(self, path: str) -> list[Any]:
        with self.lock:
            return list(self.received.get(path, []))

    def __enter__(self) -> Sink:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def configuration_for(tmp: Path, sink: Sink) -> Path:
    """The shipped configuration with every receiver pointed at `sink`: each webhook's URL
    (`/webhook` for the receiver `webhook`, `/<receiver>` for the others),
    the Slack URL and PagerDuty's endpoint; the Slack URL and the routing key are written
    to files, read as in production. Groups are sent after 1 s instead of 30 s."""
    document = config()
    document["templates"] = [f"{ALERTMANAGER_TEMPLATES}/*.tmpl"]
    slack_url, routing_key = tmp / "slack_webhook_url", tmp / "pagerduty_routing_key"
    slack_url.write_text(f"{sink.url}/slack")
    routing_key.write_text(ROUTING_KEY)
    for receiver in document["receivers"]:
        for webhook in receiver.get("webhook_configs", []):
            webhook["url"] = f"{sink.url}/{receiver['name']}"
        for slack in receiver.get("slack_configs", []):
            slack["api_url_file"] = str(slack_url)
        for pagerduty in receiver.get("pagerduty_configs", []):
            pagerduty["routing_key_file"] = str(routing_key)
            pagerduty["url"] = f"{sink.url}/pagerduty"
    for route in [document["route"], *document["route"]["routes"]]:
        for key in ("group_wait", "group_interval"):
            if key in route or route is document["route"]:
                route[key] = "1s"
    path = tmp / "alertmanager.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@dataclass
class Alertmanager:
    url: str
    process: subprocess.Popen[bytes]
    log: Path
    sink: Sink
    logs: list[Path] = field(default_factory=list)


def start_alertmanager(tmp: Path, sink: Sink) -> Alertmanager:
    port = free_port()
    log = tmp / "alertmanager.log"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                alertmanager_program(),
                f"--config.file={configuration_for(tmp, sink)}",
                f"--storage.path={tmp / 'alertmanager-data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--cluster.listen-address=",
                "--log.level=warn",
            ],
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=tmp,
        )
    manager = Alertmanager(f"http://127.0.0.1:{port}", process, log, sink, [log])

    def ready() -> bool:
        with urllib.request.urlopen(f"{manager.url}/-/ready", timeout=2) as response:
            return bool(response.status == 200)

    wait_for("Alertmanager to be ready", ready, 30, [log])
    return manager


def post_alerts(manager: Alertmanager, *alerts: dict[str, str]) -> None:
    now = datetime.now(UTC)
    body = [
        {
            "labels": labels,
            "annotations": {"summary": labels["alertname"]},
            "startsAt": now.isoformat(),
            "endsAt": (now + timedelta(hours=1)).isoformat(),
        }
        for labels in alerts
    ]
    request = urllib.request.Request(
        f"{manager.url}/api/v2/alerts",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    with urllib.request.urlopen(request, timeout=5) as response:
        assert response.status == 200


def inhibited(manager: Alertmanager) -> dict[tuple[str, str], bool]:
    """(alertname, instance or source) -> whether Alertmanager inhibits it now."""
    status, body = http_json(f"{manager.url}/api/v2/alerts")
    assert status == 200, body
    return {
        (a["labels"]["alertname"], a["labels"].get("instance") or a["labels"].get("source", "")): (
            bool(a["status"]["inhibitedBy"])
        )
        for a in body
    }


def settles_to(manager: Alertmanager, expected: dict[tuple[str, str], bool]) -> None:
    """Wait until Alertmanager holds exactly `expected`, inhibited or not (the inhibitor
    learns of new alerts asynchronously); fail showing what it holds."""
    deadline = time.monotonic() + 10
    while (state := inhibited(manager)) != expected and time.monotonic() < deadline:
        time.sleep(0.2)
    assert state == expected


def test_alertmanager_inhibits_what_the_configuration_says(tmp_path: Path) -> None:
    with Sink() as sink:
        manager = start_alertmanager(tmp_path, sink)
        try:
            post_alerts(
                manager,
                {"alertname": "OracleDaemonDown", "severity": "critical", "instance": "o-0"},
                {"alertname": "OracleJobFailing", "severity": "warning", "instance": "o-0"},
                {"alertname": "OracleJobFailing", "severity": "warning", "instance": "o-1"},
                {"alertname": "OracleSourceDown", "severity": "warning", "source": "chain"},
                {"alertname": "OracleSourcePollErrors", "severity": "warning", "source": "chain"},
                {"alertname": "OracleSourcePollErrors", "severity": "warning", "source": "venue"},
            )
            expected = {
                ("OracleDaemonDown", "o-0"): False,
                ("OracleJobFailing", "o-0"): True,  # the replica is down
                ("OracleJobFailing", "o-1"): False,
                ("OracleSourceDown", "chain"): False,
                ("OracleSourcePollErrors", "chain"): True,  # its venue is unreachable
                ("OracleSourcePollErrors", "venue"): False,
            }
            settles_to(manager, expected)
            # No replica at all: everything else is its consequence, but the watchdog, which
            # is about the alerting pipeline.
            post_alerts(
                manager,
                {"alertname": "OracleDaemonAbsent", "severity": "critical"},
                {"alertname": "OracleWatchdog", "severity": "none"},
            )
            settles_to(
                manager,
                dict.fromkeys(expected, True)
                | {("OracleDaemonAbsent", ""): False, ("OracleWatchdog", ""): False},
            )
        finally:
            assert stop(manager.process) == 0, manager.log.read_text(errors="replace")


def test_the_watchdog_reaches_the_deadmans_switch_and_nobody_else(tmp_path: Path) -> None:
    with Sink() as sink:
        manager = start_alertmanager(tmp_path, sink)
        try:
            post_alerts(
                manager,
                {"alertname": "OracleWatchdog", "severity": "none"},
                {"alertname": "OracleSourceDown", "severity": "warning", "source": "chain"},
            )
            wait_for(
                "the watchdog at the dead man's switch",
                lambda: sink.bodies("/deadmans-switch") and sink.bodies("/webhook"),
                30,
                [manager.log],
            )
            time.sleep(2)  # every group of both alerts has been sent
        finally:
            assert stop(manager.process) == 0, manager.log.read_text(errors="replace")

    def names(path: str) -> set[str]:
        return {a["labels"]["alertname"] for body in sink.bodies(path) for a in body["alerts"]}

    assert names("/deadmans-switch") == {"OracleWatchdog"}
    assert names("/webhook") == {"OracleSourceDown"}
    slack = [a["title"] for m in sink.bodies("/slack") for a in m["attachments"]]
    assert slack, "OracleSourceDown never reached Slack"
    assert not any("OracleWatchdog" in title for title in slack), slack
    assert not sink.bodies("/pagerduty")


def test_the_consoles_notice_reaches_the_person_it_names_through_a_real_alertmanager(
    tmp_path: Path,
) -> None:
    """The console posts to Alertmanager's API as in production (`oracle.console.notify`):
    one alert per person, each delivered to that person's receiver only."""
    notice = notify.body("approval_needed", ["ann", "otto"], "rita", 12, "uma:0x1", "Rain?")
    with Sink() as sink:
        manager = start_alertmanager(tmp_path, sink)
        try:
            attempt = asyncio.run(notify.send(f"{manager.url}/api/v2/alerts", notice, 5.0))
            assert attempt.outcome is notify.Outcome.SENT
            wait_for(
                "the notice at ann's receiver and the channel",
                lambda: sink.bodies("/person-ann") and sink.bodies("/slack"),
                30,
                [manager.log],
            )
            time.sleep(2)  # any other group would have been sent by now
        finally:
            assert stop(manager.process) == 0, manager.log.read_text(errors="replace")

    [body] = sink.bodies("/person-ann")
    [alert] = body["alerts"]
    assert alert["labels"] == {
        "alertname": "OracleConsoleNotice",
        "kind": "approval_needed",
        "person": "ann",
        "review": "12",
    }
    assert alert["annotations"]["path"] == "/reviews/12"
    # otto has no route of his own: told in #oracle-review, with the notice's template.
    [message] = sink.bodies("/slack")
    assert message["channel"] == "#oracle-review"
    [attachment] = message["attachments"]
    assert attachment["title"] == "For otto: approval needed: review 12 (by rita)"
    assert "*Question:* Rain?" in attachment["text"]
    assert "*In the console:* /reviews/12" in attachment["text"]
    assert not sink.bodies("/person-rita")
    assert not sink.bodies("/webhook")  # a notice is no incident
    assert not sink.bodies("/pagerduty")


# -- end to end ----------------------------------------------------------------------------


def rules_firing_at_once(tmp: Path) -> Path:
    """The shipped rules, each alert's `for:` 1 s (a copy: the shipped rules are unchanged)."""
    document = yaml.safe_load(RULES.read_text(encoding="utf-8"))
    for group in document["groups"]:
        for rule in group["rules"]:
            if "alert" in rule:
                rule["for"] = "1s"
    path = tmp / "rules.yml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    return path


@dataclass
class Delivery:
    sink: Sink
    proofs: Path


@pytest.fixture(scope="module")
def delivery(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Delivery]:
    prometheus_bin = find_tool("prometheus")
    alertmanager_program()
    tmp = tmp_path_factory.mktemp("alerts")
    daemon_port, prometheus_port = free_port(), free_port()
    daemon_log, prometheus_log = tmp / "daemon.log", tmp / "prometheus.log"
    with Sink() as sink, Venues() as venues:
        manager = start_alertmanager(tmp, sink)
        logs = [daemon_log, prometheus_log, manager.log]
        prometheus_config = {
            "global": {
                "scrape_interval": "1s",
                "scrape_timeout": "1s",
                "evaluation_interval": "1s",
                "external_labels": {
                    "oracle_proof_url": PROOF_BASE,
                    "oracle_review_url": REVIEW_BASE,
                },
            },
            "rule_files": [str(rules_firing_at_once(tmp))],
            "alerting": {
                "alertmanagers": [{"static_configs": [{"targets": [manager.url.split("//")[1]]}]}]
            },
            "scrape_configs": [
                {
                    "job_name": "oracle",
                    "static_configs": [{"targets": [f"127.0.0.1:{daemon_port}"]}],
                }
            ],
        }
        (tmp / "prometheus.yml").write_text(yaml.safe_dump(prometheus_config))
        with daemon_log.open("wb") as daemon_out, prometheus_log.open("wb") as prometheus_out:
            daemon = start_daemon(tmp, daemon_port, venues.url, daemon_out)
            prometheus = start_prometheus(
                prometheus_bin, tmp / "prometheus.yml", tmp, prometheus_port, prometheus_out
            )
        try:
            prometheus_url = f"http://127.0.0.1:{prometheus_port}"
            wait_for(
                "the daemon's /healthz",
                lambda: http_json(f"http://127.0.0.1:{daemon_port}/healthz")[0] == 200,
                30,
                logs,
            )
            scraped = 'count_over_time(up{job="oracle"}[1m]) >= 2 and up{job="oracle"} == 1'
            wait_for(
                "two scrapes of the idle daemon",
                lambda: prometheus_query(prometheus_url, scraped).get("data", {}).get("result"),
                30,
                logs,
            )
            venues.release()

            def arrived() -> bool:
                names = {
                    a["labels"]["alertname"]
                    for body in sink.bodies("/webhook")
                    for a in body["alerts"]
                }
                channels = {message["channel"] for message in sink.bodies("/slack")}
                return (
                    {"OracleReviewPending", "OracleSourcePollErrors", "OracleSubmissionsFailing"}
                    <= names
                    and {"#oracle-review", "#oracle-alerts"} <= channels
                    and bool(sink.bodies("/pagerduty"))
                )

            wait_for("the alerts to reach the sink", arrived, 90, logs)
            time.sleep(2)  # the other receivers' groups of the same alerts
            yield Delivery(sink, tmp / "proofs")
        finally:
            prometheus_code = stop(prometheus)
            daemon_code = stop(daemon)
            manager_code = stop(manager.process)
        assert daemon_code == 0, daemon_log.read_text(errors="replace")[-3000:]
        assert prometheus_code == 0, prometheus_log.read_text(errors="replace")[-3000:]
        assert manager_code == 0, manager.log.read_text(errors="replace")[-3000:]


def webhook_alerts(delivery: Delivery, alertname: str) -> list[dict[str, Any]]:
    return [
        alert
        for body in delivery.sink.bodies("/webhook")
        for alert in body["alerts"]
        if alert["labels"]["alertname"] == alertname and alert["status"] == "firing"
    ]


def test_a_market_awaiting_review_reaches_the_webhook_with_its_question_and_links(
    delivery: Delivery,
) -> None:
    alerts = {a["labels"]["market"]: a for a in webhook_alerts(delivery, "OracleReviewPending")}
    alert = alerts["venue:contested-1"]
    labels, annotations = alert["labels"], alert["annotations"]
    assert labels["question"] == CONTESTED
    assert labels["venue"] == "venue"
    assert labels["severity"] == "warning"
    # Two valid agents (gamma failed) are fewer than consensus.min_agents: INVALID.
    assert labels["answer"] == "INVALID"
    assert "YES: alpha" in labels["answers"]
    assert "NO: beta" in labels["answers"]
    assert labels["review"].isdigit()
    assert annotations["review_url"] == f"{REVIEW_BASE}/{labels['review']}"
    # The proof link names the proof the daemon wrote for this verdict.
    assert annotations["proof_url"] == f"{PROOF_BASE}/{labels['proof']}.md"
    assert (delivery.proofs / f"{labels['proof']}.md").is_file()
    assert labels["proof"].startswith("venue_contested-1/")
    assert CONTESTED in annotations["summary"]
    assert f"oracle review show {labels['review']}" in annotations["description"]


def test_a_failing_source_reaches_the_webhook_grouped_by_source(delivery: Delivery) -> None:
    bodies = [
        body
        for body in delivery.sink.bodies("/webhook")
        if body["groupLabels"].get("alertname") == "OracleSourcePollErrors"
    ]
    assert bodies
    assert {body["groupLabels"].get("source") for body in bodies} == {"broken"}
    (alert,) = {a["fingerprint"]: a for b in bodies for a in b["alerts"]}.values()
    assert alert["labels"]["kind"] == "poll"
    assert alert["annotations"]["summary"] == "market source broken fails to be polled"
    assert not webhook_alerts(delivery, "OracleDaemonDown")
    assert not webhook_alerts(delivery, "OracleDaemonAbsent")


def test_slack_gets_the_review_in_its_channel_with_links(delivery: Delivery) -> None:
    messages = delivery.sink.bodies("/slack")
    review = [m for m in messages if m["channel"] == "#oracle-review"]
    assert review, messages
    texts = "\n".join(a["text"] for m in review for a in m["attachments"])
    assert CONTESTED in texts
    assert f"<{REVIEW_BASE}/" in texts
    assert f"<{PROOF_BASE}/venue_contested-1/" in texts
    assert "*Answers at stake:*" in texts
    titles = [a["title"] for m in review for a in m["attachments"]]
    assert any(
        t.startswith("[FIRING:1] OracleReviewPending · venue · venue:contested-1") for t in titles
    )
    alerts = [m for m in messages if m["channel"] == "#oracle-alerts"]
    assert any("OracleSourcePollErrors" in a["title"] for m in alerts for a in m["attachments"])


def test_pagerduty_gets_the_critical_alert_with_the_key_from_its_file(delivery: Delivery) -> None:
    events = delivery.sink.bodies("/pagerduty")
    assert events
    for event in events:
        assert event["routing_key"] == ROUTING_KEY
        assert event["event_action"] == "trigger"
        assert event["payload"]["severity"] == "critical"
    summaries = [event["payload"]["summary"] for event in events]
    assert any("OracleSubmissionsFailing" in s for s in summaries), summaries
    details = next(
        e["payload"]["custom_details"]
        for e in events
        if "OracleSubmissionsFailing" in e["payload"]["summary"]
    )
    assert "answer deliveries fail" in details["firing"]
