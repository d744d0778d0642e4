"""`oracle run` as an operator starts it: a real process, real endpoints, real signals."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import yaml

from oracle.devchain import free_port
from oracle.testing import consensus_document, result_dict

from ..commands import one_error_line, quiet_venue, run_oracle


def get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()


def write_config(tmp_path: Path, port: int) -> Path:
    replays = tmp_path / "replays"
    replays.mkdir()
    (replays / "m.json").write_text(
        json.dumps(consensus_document([result_dict("a", "YES", 0.9)], market_id="m"))
    )
    config = {
        "database": {"url": f"sqlite:///{tmp_path / 'oracle.db'}"},
        "daemon": {"proofs_dir": str(tmp_path / "proofs"), "drain_timeout": 5},
        "metrics": {"port": port, "llm_budget_usd_per_day": 25},
        "agents": [{"name": "a", "kind": "replay", "directory": str(replays)}],
        "market_sources": [quiet_venue()],
        "log": {"format": "json"},
    }
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def run_once(config: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "oracle", "run", "--config", str(config), "--once"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_serves_metrics_and_health_then_drains_on_sigterm(tmp_path: Path) -> None:
    port = free_port()
    config = write_config(tmp_path, port)
    process = subprocess.Popen(
        [sys.executable, "-m", "oracle", "run", "--config", str(config)],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 30
        status = 0
        while time.monotonic() < deadline:
            try:
                status, _ = get(f"http://127.0.0.1:{port}/healthz")
                break
            except (urllib.error.URLError, ConnectionError):
                time.sleep(0.2)
        assert status == 200
        assert get(f"http://127.0.0.1:{port}/readyz")[0] == 200
        status, body = get(f"http://127.0.0.1:{port}/metrics")
        assert status == 200
        assert 'oracle_markets{state="due"}' in body
        assert "oracle_agent_research_seconds" in body
        # The research agents' metrics are on the daemon's one registry, served once.
        assert body.count("# TYPE oracle_agent_runs_total counter") == 1
        assert body.count("# TYPE oracle_agent_tokens_total counter") == 1
        assert "oracle_llm_budget_usd_per_day 25.0" in body  # the spend alert's bound
        assert get(f"http://127.0.0.1:{port}/nope")[0] == 404
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    records = [json.loads(line) for line in stderr.splitlines() if line.startswith("{")]
    lifecycle = [r["event"] for r in records if str(r.get("event", "")).startswith("daemon.")]
    assert lifecycle[-3:] == ["daemon.started", "daemon.stopping", "daemon.stopped"], stderr[-2000:]


def test_once_makes_one_pass_and_exits(tmp_path: Path) -> None:
    config = write_config(tmp_path, free_port())
    run = run_once(config)
    assert run.returncode == 0, run.stderr
    assert (tmp_path / "oracle.db").exists()


def test_once_exits_1_naming_a_source_it_could_not_poll(tmp_path: Path) -> None:
    config = write_config(tmp_path, free_port())
    data = yaml.safe_load(config.read_text())
    closed = free_port()  # nothing listens: the venue is down, not misconfigured
    data["market_sources"] = [
        {
            "name": "venue",
            "kind": "http",
            "url": f"http://127.0.0.1:{closed}/markets",
            "result_url": f"http://127.0.0.1:{closed}/results",
            "timeout_seconds": 2,
        }
    ]
    config.write_text(yaml.safe_dump(data))
    run = run_once(config)
    assert run.returncode == 1, run.stderr
    assert run.stderr.splitlines()[-1].startswith("error: market_sources[venue]: poll failed: ")


def test_bad_config_exits_2_naming_the_key(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("agents:\n  - name: a\n    kind: telepathy\n")
    run = run_once(path)
    assert run.returncode == 2
    assert run.stderr.startswith("error: agents[0]")
    assert "telepathy" in run.stderr


def test_nothing_to_do_exits_2_with_one_line_naming_the_missing_section(tmp_path: Path) -> None:
    config = write_config(tmp_path, free_port())
    data = yaml.safe_load(config.read_text())
    expected = {
        "market_sources": "market_sources: none configured: the daemon would have nothing to "
        "do (no market source to find markets in; see config.yaml)",
        "agents": "agents: none configured: the daemon would have nothing to do (no agent to "
        "research markets with; see config.yaml)",
    }
    for missing, line in expected.items():
        config.write_text(yaml.safe_dump({**data, missing: []}))
        for once in ((), ("--once",)):
            refused = run_oracle("run", "--config", str(config), *once, timeout=60)
            assert one_error_line(refused) == line
    config.write_text(yaml.safe_dump({**data, "agents": [], "market_sources": []}))
    assert one_error_line(run_oracle("run", "--config", str(config))).startswith(
        "agents, market_sources: none configured"
    )
    assert not (tmp_path / "oracle.db").exists()  # refused before anything was made
