"""The README's first command: the local demo of the daemon runs to the end."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from .anvil import anvil_binary, free_port

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
    assert f"console:  http://127.0.0.1:{console_port}/  (sign in as demo-reviewer" in run.stdout
    assert "3 questions asked on-chain" in run.stdout
    assert "1 final, 2 needs_review" in run.stdout
    assert "on-chain FINAL     outcome=YES" in run.stdout
    assert list((tmp_path / "proofs").glob("*/*.json"))


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
