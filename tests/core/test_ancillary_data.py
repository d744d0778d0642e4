"""Every real Polymarket request in the shared data read exactly by `parse_ancillary`.

The shared files (`polymarket-requests-*.json.gz`, `$ORACLE_SHARED_DATA` or
`../shared/data`; see shared/README.md) record, for each request, its ancillary data as
UMA carries it (`ancillary_data_hex`), the `res_data` sentence as the data set wrote it
(`resolution_conditions`) and the real proposal (`proposed_price`, 1e18 scale, and
`proposed_price_outcome`, p1/p2/p3). Each row must be read, and:

- its labels equal those `resolution_conditions` names, normalized so: the data set's
  labels read as UTF-8 bytes taken for Latin-1 decoded back (`San JosÃ© State` is
  `San José State`), then cleaned as the reader cleans labels (`oracle.core.text.clean`)
  and stripped of the spaces around them (`Where p1 corresponds to  Onama , ...`). That
  field ends with the sentence, so there a label is split on `, pN to ` alone and may hold
  any full stop (`St. Louis Cardinals`, `Mt. St. Mary's`);
- its prices equal the field's price list (`p1: 0, p2: 1, p3: 0.5`, scaled by 1e18);
- the price of `proposed_price_outcome` is `proposed_price`; where the data set has the
  final outcome, the price of `resolved_price_outcome` is `resolved_price` (p4, absent
  from these requests' lists, is UMA's too-early price, which the oracle always knows).
"""

from __future__ import annotations

import gzip
import json
import os
import re
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from oracle.core.ancillary import PRICE_SCALE, TOO_EARLY_PRICE, parse_ancillary
from oracle.core.text import clean

ROOT = Path(__file__).resolve().parents[2]
SHARED = Path(os.environ.get("ORACLE_SHARED_DATA") or ROOT.parent / "shared" / "data")
FILES = sorted(SHARED.glob("polymarket-requests-*.json.gz")) if SHARED.is_dir() else []

_SEPARATOR = re.compile(r"(?:^|, (?:and )?)(p\d{1,3}) (?:corresponds )?to ")
_PRICE = re.compile(r"(p\d{1,3}): ?(-?\d+(?:\.\d+)?)")


def _as_written(text: str) -> str:
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


def recorded(conditions: str) -> tuple[dict[str, str], dict[str, int]]:
    """Labels and prices by key, as `resolution_conditions` records them (normalized as
    the module docstring says)."""
    head, where, sentence = _as_written(conditions).partition(" Where ")
    assert where, f"no `Where` sentence in {conditions!r}"
    prices = {m[1]: int(Decimal(m[2]) * PRICE_SCALE) for m in _PRICE.finditer(head)}
    sentence = sentence.strip().removesuffix(".")
    starts = list(_SEPARATOR.finditer(sentence))
    labels = {}
    for found, following in zip(starts, [*starts[1:], None], strict=True):
        end = following.start() if following is not None else len(sentence)
        labels[found[1]] = clean(sentence[found.end() : end]).text.strip()
    return labels, prices


@pytest.fixture(scope="module", params=FILES or [None], ids=lambda p: p.name if p else "none")
def requests(request: pytest.FixtureRequest) -> list[dict[str, Any]]:
    path = request.param
    if path is None:
        pytest.skip(
            f"no polymarket-requests-*.json.gz in {SHARED} (shared data: ../shared/data, "
            "or $ORACLE_SHARED_DATA)"
        )
    with gzip.open(path, "rt", encoding="utf-8") as f:
        rows: list[dict[str, Any]] = json.load(f)
    return rows


def test_every_real_request_is_read_exactly(requests: list[dict[str, Any]]) -> None:
    assert len(requests) > 1000
    wrong = []
    for row in requests:
        data = bytes.fromhex(row["ancillary_data_hex"].removeprefix("0x"))
        question = parse_ancillary(data, limit=len(data))  # raises naming the part
        labels, prices = recorded(row["resolution_conditions"])
        read = {o.key: o.label for o in question.options}
        priced = {o.key: o.price for o in question.options}
        if read != labels or priced != prices:
            wrong.append((row["query_id"], read, labels, priced, prices))
            continue
        if priced[row["proposed_price_outcome"]] != int(row["proposed_price"]):
            wrong.append((row["query_id"], "proposed", row["proposed_price_outcome"]))
        outcome = row.get("resolved_price_outcome")
        if outcome is not None:
            final = priced.get(outcome, TOO_EARLY_PRICE if outcome == "p4" else None)
            if final != int(row["resolved_price"]):
                wrong.append((row["query_id"], "resolved", outcome))
    assert wrong == []


def test_the_labels_that_hold_abbreviations_are_among_them(
    requests: list[dict[str, Any]],
) -> None:
    """The rows the reader refused or cut before (`St. Louis Cardinals`, `Mt. St.
    Mary's`) are in the file: the test above reads them, not only the plain ones."""
    held = [
        row
        for row in requests
        if re.search(r"(?:corresponds|p\d) to (?:St|Mt)\. ", row["resolution_conditions"])
    ]
    assert len(held) >= 30
    assert any(" p2 to Mt. St. Mary's" in row["resolution_conditions"] for row in held)
