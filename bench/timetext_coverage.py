"""How well `oracle.core.timetext.read_window` reads real Polymarket questions.

Run: .venv/bin/python bench/timetext_coverage.py [--data PATH] [--misses N]

Reads the shared sample of 2,001 Polymarket requests on UMA (`../shared/data/
polymarket-requests-2025-03-04.json.gz` beside the repository; never copied into it) and
prints, for the window the reader finds in each question:

- the share of rows with a window, by the form of the words read (deadline, period,
  scheduled event, moment, day);
- for rows with a Polymarket `game_start_time` whose scheduled window starts at a time
  of day (not a whole day), how often it opens within five minutes of it;
- how the window's close compares with the first real proposal (`proposal_time`, when a
  person already knew the answer): median and p90 of proposal_time - closes_at in hours,
  and the share closing more than an hour (and a day) after the proposal, split by
  whether the proposed outcome was one the window calls early.

`--misses N` also prints N questions of each kind of miss, to study.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import statistics
from collections import Counter
from datetime import datetime, time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from oracle.core.ancillary import parse_ancillary
from oracle.core.timetext import read_window_form
from oracle.errors import AncillaryDataError

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = Path("shared", "data", "polymarket-requests-2025-03-04.json.gz")
# Beside the clone (CI, a developer's checkout), or beside the folder of git worktrees.
DATA = next(
    (p for p in (ROOT / ".." / SAMPLE, ROOT / ".." / ".." / SAMPLE) if p.exists()),
    ROOT / ".." / SAMPLE,
)
HOUR = 3600.0
NEW_YORK = ZoneInfo("America/New_York")
_LABEL = re.compile(r"\b(?P<key>p\d) (?:corresponds )?to (?P<label>.+?)(?=, (?:and )?p\d|\.\s*$)")


def rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data: list[dict[str, Any]] = json.load(f)
    return data


def question(row: dict[str, Any]) -> tuple[str, tuple[str, ...], str | None]:
    """The question's text, its outcome labels (p1, p2) and the label first proposed."""
    data = bytes.fromhex(row["ancillary_data_hex"].removeprefix("0x"))
    text = data.decode("utf-8", errors="replace")
    try:
        labels = {o.key: o.label for o in parse_ancillary(data, limit=len(data)).options}
    except AncillaryDataError:  # a row the parser refuses (none in the 2025 sample): names alone
        labels = {m["key"]: m["label"] for m in _LABEL.finditer(row["resolution_conditions"])}
    outcomes = tuple(labels[k] for k in ("p1", "p2") if k in labels)
    return text, outcomes, labels.get(row.get("proposed_price_outcome") or "")


def _timed(moment: float | None) -> bool:
    """Whether a scheduled window starts at a time of day (not a whole day's midnight)."""
    return moment is not None and datetime.fromtimestamp(moment, NEW_YORK).time() != time()


def _share(count: int, values: list[float]) -> str:
    return f"{count} ({count / max(len(values), 1):.1%})"


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def report(data: list[dict[str, Any]], misses: int) -> None:
    forms: Counter[str] = Counter()
    gaps: dict[bool, list[float]] = {True: [], False: []}
    late: dict[bool, list[str]] = {True: [], False: []}
    starts = near_start = 0
    unread: list[str] = []
    off_start: list[str] = []
    for row in data:
        text, outcomes, proposed = question(row)
        read = read_window_form(text, asked_at=row["request_timestamp"], outcomes=outcomes)
        if read is None:
            forms["none"] += 1
            unread.append(text[:300])
            continue
        window, form = read
        forms[form.value] += 1
        if row.get("game_start_time") and form.value == "scheduled" and _timed(window.opens_at):
            starts += 1
            start = datetime.fromisoformat(row["game_start_time"].replace("Z", "+00:00"))
            if abs((window.opens_at or 0) - start.timestamp()) <= 300:
                near_start += 1
            else:
                off_start.append(f"{row['game_start_time']} vs {window.evidence!r}")
        early = proposed in window.early_outcomes
        gap = (row["proposal_time"] - window.closes_at) / HOUR
        gaps[early].append(gap)
        if gap < -24:
            late[early].append(f"{gap:+.1f} h {proposed} | {window.evidence} | {text[:160]!r}")
    total = len(data)
    print(f"rows: {total}")
    for form, count in forms.most_common():
        print(f"  {form:10} {count:5}  {count / total:6.1%}")
    print(f"with a window: {1 - forms['none'] / total:.1%}")
    print(
        f"scheduled windows at a time of day, with a game_start_time: {starts}, "
        f"opening within 5 min of it: {near_start / max(starts, 1):.1%}"
    )
    for early in (False, True):
        values = gaps[early]
        name = "early outcome proposed" if early else "other outcome proposed"
        print(
            f"{name}: {len(values)} rows; proposal_time - closes_at median "
            f"{statistics.median(values) if values else float('nan'):.1f} h, "
            f"p10 {_quantile(values, 0.1):.1f} h, p90 {_quantile(values, 0.9):.1f} h; "
            f"closes more than 1 h after the proposal: "
            f"{_share(sum(v < -1 for v in values), values)}, "
            f"more than a day: {_share(len(late[early]), values)}"
        )
    if misses:
        for title, items in (
            ("no window", unread),
            ("closes more than a day after the proposal, other outcome", late[False]),
            ("closes more than a day after the proposal, early outcome", late[True]),
            ("off the game start", off_start),
        ):
            print(f"\n== {title} ({len(items)})")
            for item in items[:misses]:
                print(" ", item.replace("\n", " "))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--misses", type=int, default=0)
    args = parser.parse_args()
    report(rows(args.data), args.misses)


if __name__ == "__main__":
    main()
