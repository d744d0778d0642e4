"""The README's first command: the local demo of the daemon runs to the end."""

from __future__ import annotations

import json
import shlex
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .anvil import anvil_binary, free_port
from .commands import run_oracle

ROOT = Path(__file__).resolve().parent.parent


def test_demo_shows_answers_final_a_review_and_live_metrics(tmp_path: Path) -> None:
    if anvil_binary() is None:
        pytest.skip("anvil not found: run `cd contracts && npm ci` (or install Foundry)")
    run = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "demo.py"),
            "--exit",
            "--home",
            str(tmp_path),
            "--metrics-port",
            str(free_port()),
            "--console-port",
            str(console_port := free_port()),
        ],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "7. review console served (accounts demo-reviewer or demo-approver" in run.stdout
    assert "3 questions asked on-chain" in run.stdout
    assert "1 final, 2 needs_review" in run.stdout
    assert "on-chain FINAL     outcome=YES" in run.stdout
    assert list((tmp_path / "proofs").glob("*/*.json"))
    # Everything has stopped: no address is shown that would not answer.
    assert "http://" not in run.stdout, run.stdout
    assert f":{console_port}" not in run.stdout
    # The last line says what happened and what to do next.
    assert run.stdout.splitlines()[-1] == (
        "Done: 3 questions asked; 1 answered on-chain and final, 2 waiting for a person. "
        f"The chain, the daemon and the console have stopped; the data stays in {tmp_path}. "
        "Next: decide a review with the commands above, or run ./scripts/demo without --exit "
        "to keep everything running and use the review console."
    )
    # The "decide" hint works as printed, as the account the demo created.
    (hint,) = [line for line in run.stdout.splitlines() if line.startswith("   decide:")]
    words = shlex.split(hint.removeprefix("   decide:"))
    assert words[:3] == [".venv/bin/oracle", "review", "decide"]
    config = words[words.index("--config") + 1]
    listed = json.loads(run_oracle("review", "list", "--json", "--config", config).stdout)
    review_id = str(listed["reviews"][0]["id"])
    filled = [
        {"ID": review_id, "X": "INVALID", "WHY": "the demo's sources disagree"}.get(w, w)
        for w in words[1:]
    ]
    decided = run_oracle(*filled)
    assert decided.returncode == 0, decided.stderr
    assert "by demo-reviewer" in decided.stdout, decided.stdout


def test_demo_reports_a_daemon_that_died_with_its_last_error(tmp_path: Path) -> None:
    if anvil_binary() is None:
        pytest.skip("anvil not found: run `cd contracts && npm ci` (or install Foundry)")
    with socket.create_server(("127.0.0.1", 0)) as busy:  # the metrics port is taken
        port = busy.getsockname()[1]
        started = time.monotonic()
        run = subprocess.run(
            [
                sys.executable,
                str(ROOT / "scripts" / "demo.py"),
                "--exit",
                "--home",
                str(tmp_path),
                "--metrics-port",
                str(port),
            ],
            capture_output=True,
            text=True,
            timeout=80,  # the demo used to wait 90 s for decisions, then time out
            check=False,
        )
    assert run.returncode == 1, run.stdout + run.stderr
    assert time.monotonic() - started < 60
    assert run.stderr.splitlines()[-1] == (
        f"demo: the daemon exited with code 2: error: metrics.port: 127.0.0.1:{port} is "
        f"already in use (log: {tmp_path / 'daemon.log'})"
    )
