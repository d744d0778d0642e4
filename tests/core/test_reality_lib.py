"""Our Reality.eth answer encodings against Reality.eth's own JavaScript library,
`@reality.eth/reality-eth-lib` 3.4.25 (`formatters/question.js`, pinned in
contracts/package.json): what it writes for a uint reads back here as the same number
and what we write reads back there; a multiple-select's bitmask and labels, a datetime
day (the library's precision when a template names none, as template 4 does) and the
reserved answers agree. (Its `answerToBytes32` re-reads its own hexadecimal as decimal for
datetime and multiple-select answers, so those are compared through `arrayToBitmaskBigNumber`
and `getAnswerString`, the functions that are right for them.)"""

from __future__ import annotations

import json
import shutil
import subprocess
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle.core.values import MAX_SECONDS
from oracle.errors import RealityQuestionError
from oracle.venues.reality.rules import (
    INVALID_ANSWER,
    TOO_SOON_ANSWER,
    UINT256_MAX,
    QuestionKind,
    RealityQuestion,
    decode_value,
    encode_question_text,
    encode_value,
    parse_question,
)

LIB = (
    Path(__file__).resolve().parents[2]
    / "contracts/node_modules/@reality.eth/reality-eth-lib/formatters/question.js"
)
NODE = shutil.which("node")
pytestmark = pytest.mark.skipif(
    NODE is None or not LIB.is_file(),
    reason="needs node and `cd contracts && npm ci` (@reality.eth/reality-eth-lib)",
)
SCRIPT = """
const q = require(process.argv[1]);
const cases = JSON.parse(require("fs").readFileSync(0, "utf8"));
const out = cases.map(([fn, ...args]) => {
  if (fn === "mask") return q.padToBytes32(q.arrayToBitmaskBigNumber(args[0]).toString(16));
  return q[fn](...args);
});
process.stdout.write(JSON.stringify(out));
"""
OPTIONS = ("Bigly", "Deplorable", "Hillary", "Twitter", "Covfefe", "Wall")
UINT_JSON = {"type": "uint", "decimals": 18}
DATE_JSON = {"type": "datetime"}
MULTI_JSON = {"type": "multiple-select", "outcomes": list(OPTIONS)}
ALL = frozenset(range(5))


def lib(*cases: list[Any]) -> list[Any]:
    """Each case `[function, *arguments]` run by the library, in one node process."""
    assert NODE is not None
    done = subprocess.run(
        [NODE, "-e", SCRIPT, str(LIB)],
        input=json.dumps(cases),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return list(json.loads(done.stdout))


def question(kind: QuestionKind, outcomes: tuple[str, ...] = ()) -> RealityQuestion:
    text = encode_question_text(kind, "Which?", outcomes=outcomes)
    return parse_question(
        {QuestionKind.UINT: 1, QuestionKind.DATETIME: 4}.get(kind, 3), text, templates=ALL
    )


UINT = question(QuestionKind.UINT)
DATE = question(QuestionKind.DATETIME)
MULTI = question(QuestionKind.MULTIPLE_SELECT, OPTIONS)


def hexword(raw: bytes) -> str:
    return "0x" + raw.hex()


@settings(max_examples=4, deadline=None)
@given(st.lists(st.integers(0, UINT256_MAX - 2), min_size=25, max_size=25))
def test_uints_agree_both_ways(values: list[int]) -> None:
    words = [v.to_bytes(32, "big") for v in values]
    ours = [decode_value(UINT, w) for w in words]
    theirs = lib(
        *(["answerToBytes32", text, UINT_JSON] for text in ours),
        *(["bytes32ToString", hexword(w), UINT_JSON] for w in words),
    )
    assert theirs[: len(words)] == [hexword(w) for w in words]  # they encode what we read
    assert [Decimal(t) for t in theirs[len(words) :]] == [Decimal(t) for t in ours]
    assert [encode_value(UINT, t) for t in ours] == words


@settings(max_examples=3, deadline=None)
@given(st.lists(st.integers(0, 2 ** len(OPTIONS) - 1), min_size=20, max_size=20))
def test_multiple_select_bitmasks_and_labels_agree(masks: list[int]) -> None:
    chosen = [[o for i, o in enumerate(OPTIONS) if m >> i & 1] for m in masks]
    words = [encode_value(MULTI, json.dumps(c)) for c in chosen]
    selections = [[bool(m >> i & 1) for i in range(len(OPTIONS))] for m in masks]
    theirs = lib(
        *(["mask", s] for s in selections),
        *(["getAnswerString", MULTI_JSON, hexword(w)] for w in words),
    )
    assert theirs[: len(masks)] == [hexword(w) for w in words]
    shown = theirs[len(masks) :]
    for text, labels, word in zip(shown, chosen, words, strict=True):
        assert set(filter(None, text.split(" / "))) == set(labels)
        assert json.loads(decode_value(MULTI, word)) == labels


@settings(max_examples=3, deadline=None)
@given(st.lists(st.integers(0, MAX_SECONDS // 86_400), min_size=20, max_size=20))
def test_datetime_days_read_the_same(days: list[int]) -> None:
    words = [(d * 86_400).to_bytes(32, "big") for d in days]
    theirs = lib(*(["getAnswerString", DATE_JSON, hexword(w)] for w in words))
    assert theirs == [decode_value(DATE, w) for w in words]


def test_a_time_finer_than_a_day_is_invalid_to_both() -> None:
    word = (1_714_566_600).to_bytes(32, "big")  # 2024-05-01T12:30:00Z
    (shown,) = lib(["getAnswerString", DATE_JSON, hexword(word)])
    assert shown.startswith("[Invalid datetime]")
    with pytest.raises(RealityQuestionError, match="more precise than the question asks"):
        decode_value(DATE, word)


def test_the_reserved_answers_agree() -> None:
    invalid, too_soon = lib(["getInvalidValue", UINT_JSON], ["getAnsweredTooSoonValue", UINT_JSON])
    assert (invalid, too_soon) == (hexword(INVALID_ANSWER), hexword(TOO_SOON_ANSWER))
