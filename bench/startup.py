"""Start-up time of the command line, as whole processes (what a user waits for).

Run: .venv/bin/python bench/startup.py [--runs 15]

Times `oracle --help`, `oracle consensus` on the bundled agreement example and
`oracle proof verify` on its proof, each started `--runs` times as a new process; prints
the median, the fastest and the slowest wall time. The target is 0.35 s each on the
project's 2-core machine: the pure code, not web3, SQLAlchemy or the LLM clients, which
these commands never load (tests/test_layers.py holds that).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "oracle" / "examples" / "agreement.json"
TARGET_SECONDS = 0.35


def _oracle() -> list[str]:
    """The installed `oracle` executable beside this interpreter, as a user runs it."""
    script = Path(sys.executable).with_name("oracle")
    return [str(script)] if script.exists() else [sys.executable, "-m", "oracle"]


def _wall_times(command: list[str], runs: int) -> list[float]:
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
        times.append(time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    oracle = _oracle()
    with tempfile.TemporaryDirectory() as scratch:
        proof = Path(scratch) / "proof.json"
        subprocess.run(
            [*oracle, "consensus", str(EXAMPLE), "--proof", str(proof)],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
        commands = {
            "oracle --help": [*oracle, "--help"],
            "oracle consensus (agreement example)": [*oracle, "consensus", str(EXAMPLE)],
            "oracle proof verify": [*oracle, "proof", "verify", str(proof)],
        }
        print(f"{'command':<40} {'median':>8} {'fastest':>8} {'slowest':>8}   ({runs} runs)")
        for name, command in commands.items():
            times = _wall_times(command, runs)
            median = statistics.median(times)
            verdict = "ok" if median <= TARGET_SECONDS else f"over {TARGET_SECONDS} s"
            print(f"{name:<40} {median:>7.3f}s {min(times):>7.3f}s {max(times):>7.3f}s   {verdict}")


if __name__ == "__main__":
    main()
