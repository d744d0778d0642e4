"""Start-up time of the command line, as whole processes (what a user waits for).

Run: .venv/bin/python bench/startup.py [--runs 15]

Times `oracle --help`, `oracle consensus` on the bundled agreement example and
`oracle proof verify` on its proof, each started `--runs` times as a new process; prints
the median, the fastest and the slowest wall time, and the median CPU time (user +
system) the process used. The target is 0.35 s each on the project's 2-core machine: the
pure code, not web3, SQLAlchemy or the LLM clients, which these commands never load
(tests/test_layers.py holds that).

The package is byte-compiled first, as `pip install` leaves it: with
PYTHONDONTWRITEBYTECODE set (some shells and CI images set it) an editable install
would otherwise compile every module of `oracle` again on each start, and the figures
would measure the compiler. On a busy machine the wall time includes waiting for a core;
the CPU time does not, so compare that one across runs.
"""

from __future__ import annotations

import argparse
import compileall
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import oracle

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "oracle" / "examples" / "agreement.json"
TARGET_SECONDS = 0.35


def _oracle() -> list[str]:
    """The installed `oracle` executable beside this interpreter, as a user runs it."""
    script = Path(sys.executable).with_name("oracle")
    return [str(script)] if script.exists() else [sys.executable, "-m", "oracle"]


def _children_cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _timed_runs(command: list[str], runs: int) -> tuple[list[float], list[float]]:
    """Wall and CPU seconds of each run."""
    walls, cpus = [], []
    for _ in range(runs):
        cpu_before = _children_cpu_seconds()
        started = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True, cwd=ROOT)
        walls.append(time.perf_counter() - started)
        cpus.append(_children_cpu_seconds() - cpu_before)
    return walls, cpus


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    runs = parser.parse_args().runs
    compileall.compile_dir(Path(oracle.__file__).parent, quiet=1)
    command_line = _oracle()
    with tempfile.TemporaryDirectory() as scratch:
        proof = Path(scratch) / "proof.json"
        subprocess.run(
            [*command_line, "consensus", str(EXAMPLE), "--proof", str(proof)],
            check=True,
            capture_output=True,
            cwd=ROOT,
        )
        commands = {
            "oracle --help": [*command_line, "--help"],
            "oracle consensus (agreement example)": [*command_line, "consensus", str(EXAMPLE)],
            "oracle proof verify": [*command_line, "proof", "verify", str(proof)],
        }
        print(
            f"{'command':<40} {'median':>8} {'fastest':>8} {'slowest':>8} {'cpu':>8}"
            f"   ({runs} runs; wall, then median CPU)"
        )
        for name, command in commands.items():
            walls, cpus = _timed_runs(command, runs)
            median = statistics.median(walls)
            verdict = "ok" if median <= TARGET_SECONDS else f"over {TARGET_SECONDS} s"
            print(
                f"{name:<40} {median:>7.3f}s {min(walls):>7.3f}s {max(walls):>7.3f}s "
                f"{statistics.median(cpus):>7.3f}s   {verdict}"
            )


if __name__ == "__main__":
    main()
