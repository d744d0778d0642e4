"""The UMA demo: a request asked as Polymarket's adapter asks it, proposed on by the
daemon, settled after the liveness."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .anvil import anvil_binary

ROOT = Path(__file__).resolve().parent.parent


def test_the_uma_demo_shows_a_request_proposed_on_and_settled(tmp_path: Path) -> None:
    if anvil_binary() is None:
        pytest.skip("anvil not found: run `cd contracts && npm ci` (or install Foundry)")
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo_uma.py"), "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    # Token units with their symbol, as the Reality.eth demo shows ETH; never raw wei.
    (proposed,) = [line for line in run.stdout.splitlines() if line.startswith("3. ")]
    assert re.fullmatch(
        r"3\. the daemon proposed: state PROPOSED, price 1 \(YES\), "
        r"bond \d+(\.\d+)? BOND posted by 0x[0-9a-fA-F]{40}",
        proposed,
    ), proposed
    assert "market final, request SETTLED at price 1 (YES)" in run.stdout
    assert not re.search(r"\b\d{10,}\b", run.stdout.replace(str(tmp_path), "")), run.stdout
    assert list((tmp_path / "proofs").glob("*/*.json"))
