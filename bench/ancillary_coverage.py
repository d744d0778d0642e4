"""How many real Polymarket requests `oracle.core.ancillary.parse_ancillary` reads exactly.

Run: .venv/bin/python bench/ancillary_coverage.py [--data PATH ...] [--misses N]

Reads the shared request files (`../shared/data/polymarket-requests-*.json.gz` beside the
repository, or `$ORACLE_SHARED_DATA`; never copied into it) and prints, per file and in
all:

- read: the requests whose ancillary data the reader reads (no `AncillaryDataError`);
- exact: read, with the labels the data set's `resolution_conditions` names (its
  "Where p1 corresponds to ..." sentence, which ends that field, so it is split on
  `, pN to ` alone; labels stripped and cleaned as the reader cleans them, the data set's
  UTF-8-read-as-Latin-1 labels decoded back) and the prices its price list gives, and
  with the real proposal's price (`proposed_price`, 1e18 scale) the price of its
  `proposed_price_outcome`;
- the reasons the rest were refused or differ, most frequent first.

`--misses N` prints N of them, escaped (`oracle.core.text.visible`).
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

from oracle.core.ancillary import PRICE_SCALE, AncillaryQuestion, parse_ancillary
from oracle.core.text import clean, visible
from oracle.errors import AncillaryDataError

ROOT = Path(__file__).resolve().parents[1]
# $ORACLE_SHARED_DATA, else beside the clone, or beside the folder of git worktrees.
SHARED = Path(
    os.environ.get("ORACLE_SHARED_DATA")
    or next(
        (
            p
            for p in (ROOT.parent / "shared" / "data", ROOT.parents[1] / "shared" / "data")
            if p.exists()
        ),
        ROOT.parent / "shared" / "data",
    )
)
PATTERN = "polymarket-requests-*.json.gz"

_SEPARATOR = re.compile(r"(?:^|, (?:and )?)(p\d{1,3}) (?:corresponds )?to ")
_PRICE = re.compile(r"(p\d{1,3}): ?(-?\d+(?:\.\d+)?)")


def rows(path: Path) -> list[dict[str, Any]]:
    with gzip.open(path, "rt", encoding="utf-8") as f:
        data: list[dict[str, Any]] = json.load(f)
    return data


def as_written(text: str) -> str:
    """The data set's text with UTF-8 read as Latin-1 decoded back (`San JosÃ© State`)."""
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def expected(conditions: str) -> tuple[dict[str, str], dict[str, int]]:
    """Labels and prices by key from a row's `resolution_conditions`
    (`res_data:p1: 0, p2: 1, p3: 0.5. Where p1 corresponds to X, p2 to Y, p3 to Z.`)."""
    head, where, sentence = as_written(conditions).partition(" Where ")
    if not where:
        return {}, {}
    prices = {m[1]: int(Decimal(m[2]) * PRICE_SCALE) for m in _PRICE.finditer(head)}
    sentence = sentence.strip().removesuffix(".")
    starts = list(_SEPARATOR.finditer(sentence))
    labels = {}
    for found, following in zip(starts, [*starts[1:], None], strict=True):
        end = following.start() if following is not None else len(sentence)
        labels[found[1]] = clean(sentence[found.end() : end]).text.strip()
    return labels, prices


def difference(row: dict[str, Any], question: AncillaryQuestion) -> str | None:
    """Why the reading differs from what the data set records, or None."""
    labels, prices = expected(row["resolution_conditions"])
    read = {o.key: o.label for o in question.options}
    if read != labels:
        return f"labels {read} != {labels}"
    if {o.key: o.price for o in question.options} != prices:
        return "prices differ from resolution_conditions"
    priced = {o.key: o.price for o in question.options}
    if priced.get(row["proposed_price_outcome"]) != int(row["proposed_price"]):
        return f"{row['proposed_price_outcome']} is not priced {row['proposed_price']}"
    return None


def check(row: dict[str, Any]) -> tuple[bool, str | None]:
    """(read, why not exact or None) for one row."""
    data = bytes.fromhex(row["ancillary_data_hex"].removeprefix("0x"))
    try:
        question = parse_ancillary(data, limit=len(data))
    except AncillaryDataError as error:
        return False, str(error)
    return True, difference(row, question)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, nargs="*", help=f"request files ({PATTERN})")
    parser.add_argument("--misses", type=int, default=0, help="print this many misses")
    args = parser.parse_args()
    paths = args.data or sorted(SHARED.glob(PATTERN))
    if not paths:
        raise SystemExit(f"no {PATTERN} in {SHARED} (set $ORACLE_SHARED_DATA)")
    total = read_total = exact_total = 0
    for path in paths:
        reasons: Counter[str] = Counter()
        misses: list[tuple[str, str]] = []
        found = rows(path)
        read = exact = 0
        for row in found:
            was_read, why = check(row)
            read += was_read
            exact += why is None
            if why is not None:
                reasons[re.sub(r"offset \d+", "offset N", why)[:100]] += 1
                misses.append((row["ancillary_data_hex"], why))
        print(
            f"{path.name}: {len(found)} requests, read {read} ({read / len(found):.2%}), "
            f"exact {exact} ({exact / len(found):.2%})"
        )
        for reason, count in reasons.most_common():
            print(f"  {count:5d}  {reason}")
        for data, why in misses[: args.misses]:
            text = bytes.fromhex(data.removeprefix("0x")).decode("utf-8", errors="replace")
            print(f"  - {why}\n    {visible(text)}")
        total, read_total, exact_total = total + len(found), read_total + read, exact_total + exact
    if len(paths) > 1:
        print(f"all: {total} requests, read {read_total}, exact {exact_total}")


if __name__ == "__main__":
    main()
