"""The Reality.eth demo: a question answered by the daemon with a bond, countered,
defended at double the bond, final after the timeout, claimed and withdrawn."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from .anvil import anvil_binary

ROOT = Path(__file__).resolve().parent.parent


def test_the_reality_demo_shows_a_question_answered_defended_and_claimed(
    tmp_path: Path,
) -> None:
    if anvil_binary() is None:
        pytest.skip("anvil not found: run `cd contracts && npm ci` (or install Foundry)")
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "demo_reality.py"), "--home", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "3. the daemon answered: YES by the daemon (0.2 ETH)\n" in run.stdout
    assert (
        "NO by 0x90F79bf6EB2c4f870365E785982E1f101E93b906 (0.4 ETH), "
        "YES by the daemon (0.8 ETH)\n" in run.stdout
    )
    assert (
        "market final, final answer YES; claimed and withdrawn (history hash cleared, "
        "0 wei left" in run.stdout
    )
    # The bounty (0.25) and their bond less 1/40 (0.39), less 1/40 of our first (0.005),
    # less gas: a little under 0.635 ETH.
    gained = re.search(r"gained (\d+\.\d+) ETH", run.stdout)
    assert gained is not None
    assert 0.63 < float(gained[1]) < 0.635
    assert list((tmp_path / "proofs").glob("*/*.json"))
