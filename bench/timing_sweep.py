"""A sweep of `daemon.schedule` on the timing backtest: which schedules meet the targets.

Run: .venv/bin/python bench/timing_sweep.py [FILE] [--all]

FILE defaults to the shared request file, `polymarket-requests-2025-03-04.json.gz` in
$ORACLE_SHARED_DATA, else in `../shared/data/` next to the clone. Every combination of
the values below replays every request in both agent models (`oracle.timing_backtest`);
the question reader runs once per request (its windows do not depend on the schedule). A
schedule meets the targets when, in the `known` model, a market is researched at most 1.5
times on average and at most 2% of markets go to a person because their time had not
come, and no proposal is premature in either model. Printed: the schedules that meet
them, quickest (lowest p90 lag, `known`) first, or with `--all` every schedule.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import os
import sys
from pathlib import Path

from oracle.core.timetext import read_window
from oracle.core.timing import DAY, HOUR, AnswerWindow, ScheduleParams
from oracle.timing_backtest import ModeFigures, load_requests, run_timing_backtest

SHARED = Path(
    os.environ.get("ORACLE_SHARED_DATA") or Path(__file__).resolve().parents[2] / "shared" / "data"
)
DEFAULT_FILE = SHARED / "polymarket-requests-2025-03-04.json.gz"

MAX_MEAN_RUNS = 1.5
MAX_TIME_NOT_COME = 0.02

GRID: dict[str, tuple[float, ...]] = {
    "settle_margin": (1 * HOUR, 2 * HOUR, 3 * HOUR, 4 * HOUR, 6 * HOUR),
    "early_checks": (0, 1),
    "backoff_first": (2 * HOUR, 4 * HOUR, 8 * HOUR),
    "backoff_factor": (2.0, 3.0),
    "backoff_max": (1 * DAY, 2 * DAY),
    "grace": (7 * DAY, 14 * DAY),
}


@functools.cache
def cached_window(text: str, *, asked_at: float, outcomes: tuple[str, ...]) -> AnswerWindow | None:
    return read_window(text, asked_at=asked_at, outcomes=outcomes)


def meets(known: ModeFigures, guess: ModeFigures) -> bool:
    return (
        (known.runs.mean or 0.0) <= MAX_MEAN_RUNS
        and known.time_not_come_share <= MAX_TIME_NOT_COME
        and known.premature == 0
        and guess.premature == 0
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("file", nargs="?", type=Path, default=DEFAULT_FILE)
    parser.add_argument("--all", action="store_true", help="every schedule, not only those")
    args = parser.parse_args()
    rows = load_requests(args.file)
    names = list(GRID)
    results = []
    for values in itertools.product(*GRID.values()):
        params = ScheduleParams.model_validate(dict(zip(names, values, strict=True)))
        report = run_timing_backtest(rows, params, reader=cached_window)
        known, guess = report.modes
        results.append((meets(known, guess), known.lag_hours.p90 or 0.0, params, known, guess))
    shown = [r for r in results if args.all or r[0]]
    shown.sort(key=lambda r: (not r[0], r[1], r[3].runs.mean))
    print(
        "meets  settle  early  backoff        grace  runs (known)  to person  "
        "premature known/guess  lag p50/p90 known  lag p50/p90 guess"
    )
    for ok, _, p, known, guess in shown:
        print(
            f"{'yes' if ok else 'no':>5}  {p.settle_margin / HOUR:>5g}h  {p.early_checks:>5}  "
            f"{p.backoff_first / HOUR:>3g}h x{p.backoff_factor:g} <={p.backoff_max / HOUR:>2g}h  "
            f"{p.grace / DAY:>4g}d  {known.runs.mean or 0:>12.3f}  "
            f"{100 * known.time_not_come_share:>8.2f}%  "
            f"{known.premature:>15} / {guess.premature:<5}  "
            f"{known.lag_hours.p50 or 0:>7.1f} / {known.lag_hours.p90 or 0:<7.1f}  "
            f"{guess.lag_hours.p50 or 0:>7.1f} / {guess.lag_hours.p90 or 0:<7.1f}"
        )
    print(f"{sum(r[0] for r in results)} of {len(results)} schedules meet the targets")
    return 0


if __name__ == "__main__":
    sys.exit(main())
