"""The real thing: a real `oracle run` scraped by a real Prometheus loading deploy/'s rules.

The daemon works three small venues served by this test (one healthy, one whose result
webhook fails, one whose market list fails) with three replay agents, so every part of
the pipeline moves: research, consensus (submit and review), delivery (confirmed and
failed), source errors. Markets arrive in two waves, the first once Prometheus has
scraped the idle daemon, so counters rise between scrapes and rates are non-zero. Then
every panel query of the Grafana dashboard and every recording rule runs through
Prometheus' HTTP API.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

import pytest
import yaml

import oracle
from oracle.core.lifecycle import MarketState
from oracle.devchain import free_port
from oracle.testing import consensus_document, result_dict
from tests.deploy.helpers import (
    DEPLOY,
    RULES,
    all_rules,
    data_panels,
    find_tool,
    http_json,
    load_dashboard,
    prometheus_query,
    substitute,
)

T = TypeVar("T")
AGENTS = ("alpha", "beta", "gamma")
AGREED = "Did the launch happen on schedule?"
CONTESTED = "Was the election result contested in court?"
UNDELIVERABLE = "Did the bridge open to traffic?"
# Panels that may rightly be empty in this run: nothing failed in those stages, and replay
# agents call no model and no tool (their queries still run against Prometheus here; the
# LLM agents' metrics are checked end to end in tests/agents/test_llm.py). The venues are
# HTTP ones, so no RPC node is called (the RPC metrics are checked on anvil in
# tests/daemon/test_operations_metrics.py).
MAY_BE_EMPTY = {
    "Errors by stage",
    "LLM spend per hour",
    "Model tokens per minute",
    "Research runs by result",
    "Tool calls by result",
    "RPC latency p50 / p95 by endpoint",
    "RPC error ratio by endpoint",
    "RPC node head age",
    "RPC nodes usable per chain",
    "Signer time to empty",  # no signer: no chain venue
    "Market sources and their chains",  # HTTP venues name no chain
    # No UMA or Reality.eth venue and no debate on the live stack: their queries run and
    # return nothing.
    "Bond balance and allowance",
    "Bonds at risk",
    "Bond refusals and disagreements",
    "Bonds claimable, claimed, lost, and answers superseded (Reality.eth)",
    "Debates by how they stopped",
    "Debate rounds",
    "Flips",
}


def wait_for(what: str, check: Callable[[], T | None], timeout: float, logs: list[Path]) -> T:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            result = check()
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            result = None
        if result:
            return result
        time.sleep(0.25)
    tails = "\n".join(f"--- {p.name}:\n{p.read_text(errors='replace')[-3000:]}" for p in logs)
    pytest.fail(f"timed out after {timeout:.0f} s waiting for {what}\n{tails}")


# -- the venues ----------------------------------------------------------------------------


class Venues:
    """Three market sources on one HTTP server, listing markets in waves as `release`d.

    Two waves of the same three questions: a labelled counter appears at its first
    increment, already at 1, so only the second wave's increments show in `rate()`.
    """

    def __init__(self) -> None:
        self.waves = 0
        self.delivered: list[dict[str, Any]] = []
        self.lists: dict[str, list[dict[str, Any]]] = {
            "/venue/markets": [],
            "/stubborn/markets": [],
        }
        venues = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path not in venues.lists:  # /broken/markets among others
                    self.send_error(500)
                    return
                self.reply(200, venues.lists[self.path])

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                body = json.loads(self.rfile.read(length))
                if self.path == "/venue/results":
                    venues.delivered.append(body)
                    self.reply(200, {"accepted": True})
                else:
                    self.reply(503, {"error": "try later"})

            def reply(self, status: int, document: Any) -> None:
                data = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *_: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def release(self) -> None:
        """List one more wave of markets, all due a minute ago."""
        self.waves += 1
        wave, due = self.waves, time.time() - 60
        # New lists, not extended ones: the server's threads may be reading the old.
        self.lists["/venue/markets"] = [
            *self.lists["/venue/markets"],
            {
                "id": f"agreed-{wave}",
                "question": AGREED,
                "criteria": "Official.",
                "resolve_after": due,
            },
            {"id": f"contested-{wave}", "question": CONTESTED, "resolve_after": due},
            {"id": f"malformed-{wave}", "criteria": "no question: skipped as malformed"},
        ]
        self.lists["/stubborn/markets"] = [
            *self.lists["/stubborn/markets"],
            {"id": f"bridge-{wave}", "question": UNDELIVERABLE, "resolve_after": due},
        ]

    def __enter__(self) -> Venues:
        self.thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def write_recordings(directory: Path) -> None:
    directory.mkdir()
    agreed = [result_dict(a, "YES", 0.9) for a in AGENTS]
    contested = [result_dict("alpha", "YES", 0.9), result_dict("beta", "NO", 0.85)]
    documents = {
        "agreed": consensus_document(agreed, market_id="agreed", question=AGREED),
        "contested": consensus_document(
            contested,
            market_id="contested",
            question=CONTESTED,
            failures=[{"agent_id": "gamma", "error": "search quota exhausted"}],
        ),
        "undeliverable": consensus_document(agreed, market_id="bridge", question=UNDELIVERABLE),
    }
    for name, document in documents.items():
        (directory / f"{name}.json").write_text(json.dumps(document))


def daemon_config(tmp: Path, port: int, venues_url: str) -> Path:
    recordings = tmp / "recordings"
    write_recordings(recordings)
    sources = [
        {
            "name": name,
            "kind": "http",
            "url": f"{venues_url}/{name}/markets",
            "result_url": f"{venues_url}/{name}/results",
            "timeout_seconds": 2,
        }
        for name in ("venue", "stubborn", "broken")
    ]
    config = {
        "database": {"url": f"sqlite:///{tmp / 'oracle.db'}"},
        "daemon": {
            "proofs_dir": str(tmp / "proofs"),
            "poll_interval": 1,
            "dispatch_interval": 1,
            "watch_interval": 1,
            "housekeeping_interval": 1,
            "retry_backoff": 600,
            "drain_timeout": 5,
        },
        # The accuracy ledger's rolling figures from the first final answer, every housekeeping.
        "metrics": {
            "host": "127.0.0.1",
            "port": port,
            "accuracy_min_answers": 1,
            "accuracy_refresh_interval": 0,
        },
        "agents": [
            {
                "name": name,
                "kind": "replay",
                "directory": str(recordings),
                "latency_seconds": 0.02,
                "latency_jitter_seconds": 0.2,
            }
            for name in AGENTS
        ],
        "market_sources": sources,
        "log": {"format": "json", "level": "INFO"},
    }
    path = tmp / "oracle.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def prometheus_config(tmp: Path, daemon_port: int) -> Path:
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(RULES)],
        "scrape_configs": [
            {"job_name": "oracle", "static_configs": [{"targets": [f"127.0.0.1:{daemon_port}"]}]}
        ],
    }
    path = tmp / "prometheus.yml"
    path.write_text(yaml.safe_dump(config))
    return path


# -- the stack -----------------------------------------------------------------------------


@dataclass
class Stack:
    prometheus: str
    daemon: str
    daemon_port: int
    venues: Venues
    logs: list[Path]

    def query(self, expr: str) -> dict[str, Any]:
        return prometheus_query(self.prometheus, expr)

    def values(self, expr: str) -> list[float]:
        answer = self.query(expr)
        assert answer["status"] == "success", answer
        return [float(sample["value"][1]) for sample in answer["data"]["result"]]


def start_daemon(tmp: Path, port: int, venues_url: str, out: BinaryIO) -> subprocess.Popen[bytes]:
    """`oracle run` on `daemon_config`, with no ORACLE_* variable of the test's own."""
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "oracle",
            "run",
            "--config",
            str(daemon_config(tmp, port, venues_url)),
        ],
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=tmp,
        env={k: v for k, v in os.environ.items() if not k.startswith("ORACLE")},
    )


def start_prometheus(
    prometheus_bin: str, config_file: Path, tmp: Path, port: int, out: BinaryIO
) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            prometheus_bin,
            f"--config.file={config_file}",
            f"--storage.tsdb.path={tmp / 'tsdb'}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--log.level=warn",
        ],
        stdout=out,
        stderr=subprocess.STDOUT,
        cwd=tmp,
    )


def stop(process: subprocess.Popen[bytes]) -> int | None:
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)
    return process.returncode


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    prometheus_bin = find_tool("prometheus")
    tmp = tmp_path_factory.mktemp("stack")
    daemon_port, prometheus_port = free_port(), free_port()
    daemon_log, prometheus_log = tmp / "daemon.log", tmp / "prometheus.log"
    logs = [daemon_log, prometheus_log]
    with (
        Venues() as venues,
        daemon_log.open("wb") as daemon_out,
        prometheus_log.open("wb") as prometheus_out,
    ):
        daemon = start_daemon(tmp, daemon_port, venues.url, daemon_out)
        config_file = prometheus_config(tmp, daemon_port)
        prometheus = start_prometheus(
            prometheus_bin, config_file, tmp, prometheus_port, prometheus_out
        )
        try:
            s = Stack(
                prometheus=f"http://127.0.0.1:{prometheus_port}",
                daemon=f"http://127.0.0.1:{daemon_port}",
                daemon_port=daemon_port,
                venues=venues,
                logs=logs,
            )
            wait_for(
                "the daemon's /healthz",
                lambda: http_json(f"{s.daemon}/healthz")[0] == 200,
                30,
                logs,
            )
            scraped = 'count_over_time(up{job="oracle"}[1m]) >= 2 and up{job="oracle"} == 1'
            wait_for("two scrapes of the idle daemon", lambda: s.values(scraped), 30, logs)
            for wave in (1, 2):
                venues.release()
                # Each wave: one delivered, then final (the webhook venue has no window),
                # one contested (to review), one whose delivery fails (to retry later).
                settled = " and ".join(
                    f'max(oracle_markets{{job="oracle", state="{state}"}}) == {wave}'
                    for state in ("final", "needs_review", "failed_retry")
                )
                wait_for(f"wave {wave} to settle", lambda q=settled: s.values(q), 30, logs)
            # Rules and rates see the second wave once a few more scrapes and evaluations ran.
            recorded = 'oracle:consensus:rate5m{action="review"} > 0'
            wait_for("the rules to record the verdicts", lambda: s.values(recorded), 15, logs)
            time.sleep(1)
            yield s
        finally:
            prometheus_code = stop(prometheus)
            daemon_code = stop(daemon)
        assert daemon_code == 0, daemon_log.read_text(errors="replace")[-3000:]
        assert prometheus_code == 0, prometheus_log.read_text(errors="replace")[-3000:]


# -- the tests -----------------------------------------------------------------------------


def panel_results(stack: Stack) -> dict[str, list[dict[str, Any]]]:
    """Every panel's every target run through Prometheus: title -> results of all targets."""
    results: dict[str, list[dict[str, Any]]] = {}
    errors = []
    for panel in data_panels(load_dashboard()):
        for target in panel["targets"]:
            expr = substitute(target["expr"])
            answer = stack.query(expr)
            if answer.get("status") != "success" or "error" in answer:
                errors.append(f"{panel['title']}: {expr}: {answer}")
                continue
            results.setdefault(panel["title"], []).extend(answer["data"]["result"])
    assert not errors, "\n".join(errors)
    return results


def positive(series: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [r for r in series if float(r["value"][1]) > 0]


def by_label(results: list[dict[str, Any]], label: str) -> dict[str, float]:
    return {r["metric"].get(label, ""): float(r["value"][1]) for r in results}


def test_every_dashboard_query_succeeds_and_shows_the_run(stack: Stack) -> None:
    results = panel_results(stack)
    # The core panels.
    states = by_label(results["Markets by state"], "state")
    assert set(states) == {state.value for state in MarketState}
    assert (states["final"], states["needs_review"], states["failed_retry"]) == (2, 2, 2)
    assert by_label(results["Open reviews"], "") == {"": 2}
    assert [float(r["value"][1]) for r in results["Replicas up"]] == [1]
    # Everything the run did shows up.
    empty = sorted(title for title, found in results.items() if not found)
    assert set(empty) <= MAY_BE_EMPTY, f"panels without data: {empty}"
    throughput = [float(r["value"][1]) for r in results["Throughput"]]
    assert len(throughput) == 3  # found, decided, delivered
    assert min(throughput) > 0, throughput
    latency = results["Agent research latency p50 / p95"]
    assert {r["metric"]["agent"] for r in latency} == set(AGENTS)
    assert all(0 < float(r["value"][1]) < 1 for r in latency), latency  # replay: 0.02-0.22 s
    failure = by_label(results["Agent failure ratio"], "agent")
    assert (failure["alpha"], failure["beta"]) == (0, 0)
    assert failure["gamma"] > 0
    # Series the daemon creates at zero (so that rate() sees a first event) are left out.
    verdicts = {r["metric"]["action"] for r in positive(results["Verdicts by action"])}
    assert verdicts == {"submit", "review"}
    assert set(by_label(positive(results["Submissions by result"]), "result")) == {
        "confirmed",
        "failed",
    }
    source_errors = {
        (r["metric"]["source"], r["metric"]["kind"])
        for r in positive(results["Market source errors"])
    }
    assert source_errors == {("broken", "poll"), ("venue", "malformed")}
    assert results["Review reasons"], "no review reason"
    assert by_label(results["Answers delivered"], "")[""] >= 1
    # What operators look at first: the review queue's oldest item, the process, the build.
    assert by_label(results["Oldest open review age"], "")[""] > 0
    assert by_label(results["Pending transactions"], "") == {"": 0}  # no chain venue
    assert min(float(r["value"][1]) for r in results["Process memory"]) > 0
    assert min(float(r["value"][1]) for r in results["Open files"]) > 0
    (build,) = [
        r["metric"] for r in results["Build"] if r["metric"]["__name__"].startswith("oracle")
    ]
    assert (build["version"], build["commit"]) == (oracle.__version__, "unknown")
    assert re.fullmatch(r"[0-9a-f]{12}", build["config_checksum"])
    assert [d["outcome"] for d in stack.venues.delivered] == ["YES", "YES"]
    # The accuracy ledger: both delivered answers became final at once (the webhook venue
    # has no challenge window) and stood; the bound is the default setting.
    accuracy = {
        r["metric"].get("window", "bound"): float(r["value"][1])
        for r in results["Auto-submitted accuracy (7d / 30d)"]
    }
    assert accuracy == {"7d": 1.0, "30d": 1.0, "bound": 0.9}
    brier = {
        (r["metric"]["agent"], r["metric"]["window"]): float(r["value"][1])
        for r in results["Agent Brier score (7d / 30d)"]
        if "agent" in r["metric"]
    }
    assert brier[("alpha", "7d")] == pytest.approx(0.01)  # YES at 0.9, twice, right


def test_grafana_variable_queries_find_the_daemon(stack: Stack) -> None:
    """`label_values(metric{...}, label)` as Grafana asks Prometheus for it."""
    for variable in load_dashboard()["templating"]["list"]:
        if variable["type"] != "query":
            continue
        query = variable["query"]["query"]
        inner = query.removeprefix("label_values(").removesuffix(")")
        selector, label = (part.strip() for part in inner.rsplit(",", 1))
        selector = substitute(selector)
        url = f"{stack.prometheus}/api/v1/label/{label}/values?" + urllib.parse.urlencode(
            {"match[]": selector}
        )
        status, body = http_json(url)
        assert status == 200, body
        assert body["status"] == "success", body
        expected = {"job": "oracle", "instance": f"127.0.0.1:{stack.daemon_port}"}[label]
        assert body["data"] == [expected]


def test_every_recording_rule_is_evaluated_without_error(stack: Stack) -> None:
    status, body = http_json(f"{stack.prometheus}/api/v1/rules")
    assert status == 200, body
    loaded = [rule for group in body["data"]["groups"] for rule in group["rules"]]
    assert len(loaded) == len(all_rules())
    for rule in loaded:
        assert rule["health"] == "ok", rule
        assert not rule.get("lastError"), rule
    for rule in all_rules():
        if "record" in rule:
            answer = stack.query(rule["record"])
            assert answer["status"] == "success", answer
            assert "error" not in answer, answer
    for record in (
        "oracle:up:sum",
        "oracle:markets:max",
        "oracle:reviews_open:max",
        "oracle:agent_failure_ratio:rate15m",
        "oracle:agent_research_seconds:p95_rate5m",
        "oracle:consensus:increase15m",
        "oracle:submission_failure_ratio:rate15m",
        "oracle:source_errors:increase15m",
    ):
        assert stack.query(record)["data"]["result"], f"{record} recorded nothing"


def test_alerts_track_the_daemon(stack: Stack) -> None:
    """The broken venue's failing polls make its alert pending; nothing is wrongly active."""

    def alerts() -> dict[tuple[str, str], str]:
        _, body = http_json(f"{stack.prometheus}/api/v1/alerts")
        return {
            (a["labels"]["alertname"], a["labels"].get("source", "")): a["state"]
            for a in body["data"]["alerts"]
        }

    active = wait_for(
        "OracleSourcePollErrors for the broken venue",
        lambda: (a := alerts()).get(("OracleSourcePollErrors", "broken")) and a,
        15,
        stack.logs,
    )
    assert ("OracleDaemonDown", "") not in active
    assert ("OracleDaemonAbsent", "") not in active
    assert ("OracleMarketsStalled", "") not in active
    # The new operations alerts stay quiet: reviews are seconds old, no chain venue.
    for quiet in (
        "OracleReviewSlaMissed",
        "OracleTransactionStuck",
        "OracleSignerBalanceLow",
        "OracleAutoSubmitAccuracyLow",
        "OracleAgentBrierHigh",
        "OracleRpcNoHealthyNode",
        "OracleRpcHeadStalled",
        "OracleSignerRunwayShort",
    ):
        assert (quiet, "") not in active
    # The watchdog fires from the first evaluation: the pipeline works.
    assert active[("OracleWatchdog", "")] == "firing"


def test_probes_of_every_deployment_answer_on_the_real_daemon(stack: Stack) -> None:
    deployment = yaml.safe_load((DEPLOY / "kubernetes/statefulset.yaml").read_text())
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        path = container[probe]["httpGet"]["path"]
        assert http_json(f"{stack.daemon}{path}")[0] == 200, probe
    annotations = deployment["spec"]["template"]["metadata"]["annotations"]
    with urllib.request.urlopen(f"{stack.daemon}{annotations['prometheus.io/path']}") as r:
        assert b"oracle_markets" in r.read()


def test_the_image_healthcheck_passes_on_the_daemon_and_fails_without_it(stack: Stack) -> None:
    """The Dockerfile's HEALTHCHECK command, run as Docker would (python: this one)."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8").replace("\\\n", " ")
    line = next(line for line in text.splitlines() if line.startswith("HEALTHCHECK"))
    command = json.loads(line.split(" CMD ", 1)[1])
    assert command[0] == "python"
    command[0] = sys.executable

    def run(port: int) -> int:
        env = {**os.environ, "ORACLE__METRICS__PORT": str(port)}
        run = subprocess.run(command, env=env, capture_output=True, timeout=30, check=False)
        return run.returncode

    assert run(stack.daemon_port) == 0
    assert run(free_port()) != 0
