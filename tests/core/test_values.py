"""Value answers (oracle.core.values): every value has one canonical spelling that reads
back as itself, other spellings of it reach the same, and text that names no value is a
ValueError; value markets in the consensus core (`Market.admits`, equal values agree)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core.consensus import evaluate
from oracle.core.markets import decision_problem
from oracle.core.models import (
    UNDETERMINED,
    AgentResult,
    ConsensusInput,
    ConsensusResult,
    Market,
    ResearchSource,
)
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.core.values import (
    MAX_SECONDS,
    MAX_VALUE,
    ValueFormat,
    canonical_value,
    int_to_value,
    value_to_int,
)
from oracle.testing import result_dict

NUMBER = ValueFormat(kind="number", decimals=18)
WHOLE = ValueFormat(kind="number")
TIME = ValueFormat(kind="datetime")
SET = ValueFormat(kind="set")
COLOURS = ("Red", "Green", "Blue", 'Ünïcode "quoted", comma')


@given(st.integers(0, 77), st.data())
def test_a_number_reads_back_from_its_canonical_spelling(
    decimals: int, data: st.DataObject
) -> None:
    value_format = ValueFormat(kind="number", decimals=decimals)
    value = data.draw(st.integers(0, MAX_VALUE))
    text = int_to_value(value_format, value)
    assert value_to_int(value_format, text) == value
    assert canonical_value(value_format, text) == text
    assert not text.startswith("0") or text == "0" or text.startswith("0.")
    assert not ("." in text and text.endswith("0"))


@given(st.integers(0, 10**30), st.integers(0, 5), st.integers(0, 3))
def test_other_spellings_of_a_number_reach_its_canonical_one(
    value: int, trailing: int, leading: int
) -> None:
    text = int_to_value(NUMBER, value)
    padded = (
        "0" * leading + text + ("" if "." in text else ("." if trailing else "")) + ("0" * trailing)
    )
    assert canonical_value(NUMBER, padded) == text
    assert canonical_value(NUMBER, f"  {text}\n") == text


@pytest.mark.parametrize(
    ("text", "scaled"),
    [("1", 10**18), ("0.5", 5 * 10**17), ("1.000000000000000001", 10**18 + 1), ("0", 0)],
)
def test_a_number_is_scaled_by_its_decimals(text: str, scaled: int) -> None:
    assert value_to_int(NUMBER, text) == scaled


@pytest.mark.parametrize(
    ("value_format", "text", "why"),
    [
        (NUMBER, "-1", "not a number written plainly"),
        (NUMBER, "1e3", "not a number written plainly"),
        (NUMBER, "1,000", "not a number written plainly"),
        (NUMBER, "12 ETH", "not a number written plainly"),
        (NUMBER, "\u0661\u0662", "not a number written plainly"),  # Arabic-Indic digits
        (NUMBER, "0.0000000000000000001", "more than 18 digits after the point"),
        (WHOLE, "1.5", "more than 0 digits after the point"),
        (WHOLE, str(2**256), "too large"),
        (NUMBER, "", "not a number"),
        (TIME, "yesterday", "not a time"),
        (TIME, "2024-02-30", "not a time"),
        (TIME, "1969-12-31T23:59:59Z", "before 1970"),
        (TIME, "10000-01-01", "not a time"),
        (TIME, "999999999999", "after the year 9999"),
        (SET, "Red", "JSON list"),
        (SET, '{"Red": true}', "JSON list"),
        (SET, '["Purple"]', "is not one of the options"),
        (SET, '["Red", "red"]', "named twice"),
        (SET, "[1]", "JSON list"),
        (NUMBER, "1" * 5000, "longer than"),
    ],
)
def test_text_that_names_no_value_is_refused(
    value_format: ValueFormat, text: str, why: str
) -> None:
    with pytest.raises(ValueError, match=why):
        value_to_int(value_format, text, COLOURS)


@given(st.integers(0, MAX_SECONDS))
def test_a_time_reads_back_from_its_canonical_spelling(seconds: int) -> None:
    text = int_to_value(TIME, seconds)
    assert value_to_int(TIME, text) == seconds
    assert canonical_value(TIME, str(seconds)) == text  # Unix seconds are a spelling too


@pytest.mark.parametrize(
    "text",
    [
        "2024-05-01T12:30:00Z",
        "2024-05-01T12:30Z",
        "2024-05-01 12:30:00",
        "2024-05-01t12:30:00z",
        "2024-05-01T14:30:00+02:00",
        "1714566600",
    ],
)
def test_spellings_of_one_moment_agree(text: str) -> None:
    assert canonical_value(TIME, text) == "2024-05-01T12:30:00Z"


def test_a_date_is_midnight_utc() -> None:
    midnight = int(datetime(2024, 5, 1, tzinfo=UTC).timestamp())
    assert value_to_int(TIME, "2024-05-01") == midnight


@given(st.integers(0, 2 ** len(COLOURS) - 1))
def test_a_set_reads_back_from_its_canonical_spelling(mask: int) -> None:
    text = int_to_value(SET, mask, COLOURS)
    assert value_to_int(SET, text, COLOURS) == mask
    chosen = json.loads(text)
    assert chosen == [o for i, o in enumerate(COLOURS) if mask >> i & 1]  # options' order


def test_a_set_in_any_order_or_case_is_one_value() -> None:
    assert canonical_value(SET, '["blue", "Red"]', COLOURS) == '["Red", "Blue"]'
    assert canonical_value(SET, "[]", COLOURS) == "[]"
    with pytest.raises(ValueError, match="past the 4"):
        int_to_value(SET, 1 << 4, COLOURS)


def test_labels_equal_ignoring_case_must_be_named_as_written() -> None:
    options = ("Yes", "YES", "No")
    assert value_to_int(SET, '["YES"]', options) == 2
    with pytest.raises(ValueError, match="matches two options ignoring case"):
        value_to_int(SET, '["yes"]', options)


def _result(agent: str, outcome: str) -> AgentResult:
    source = ResearchSource(
        url=f"https://www.example.gov/{agent}",
        category="official",
        credibility_score=0.9,
        relevance_score=0.9,
    )
    return AgentResult(
        agent_id=agent, outcome=outcome, confidence=0.9, reasoning="read it", sources=(source,)
    )


def test_a_value_market_admits_canonical_values_only() -> None:
    market = Market(id="m", question="How many?", outcomes=(), values=NUMBER)
    assert market.answerable == (UNDETERMINED,)
    assert market.admits("1.5")
    assert market.admits(UNDETERMINED)
    assert not market.admits("1.50")
    assert not market.admits("YES")
    assert market.canonical("1.50") == "1.5"
    sets = Market(id="s", question="Which?", outcomes=COLOURS, values=SET)
    assert sets.answerable == (UNDETERMINED,)  # an option alone is not an answer
    assert not sets.admits("Red")
    assert sets.admits('["Red"]')
    with pytest.raises(ValueError, match="at least two outcomes"):
        Market(id="x", question="Which?", outcomes=("Red",), values=SET)
    with pytest.raises(ValueError, match="at least two outcomes"):
        Market(id="y", question="Yes or no?", outcomes=())
    with pytest.raises(ValueError, match="canonical spelling"):
        ConsensusInput(market=market, results=(_result("a", "01.5"),))


def _verdict(market: Market, votes: list[tuple[str, str]]) -> ConsensusResult:
    document = {
        "market": market.model_dump(mode="json"),
        "results": [result_dict(agent, outcome, 0.9) for agent, outcome in votes],
    }
    return evaluate(ConsensusInput.model_validate(document), ConsensusParams(), SourceThresholds())


def test_equal_values_reach_a_verdict_and_a_stray_value_does_not_join_them() -> None:
    market = Market(id="m", question="How many?", outcomes=(), values=NUMBER)
    agreed = _verdict(market, [("a", "12.5"), ("b", "12.5"), ("c", "12.5"), ("d", "12")])
    assert agreed.reached
    assert agreed.outcome == "12.5"
    assert [v.outcome for v in agreed.votes].count("12.5") == 3
    split = _verdict(market, [("a", "12.5"), ("b", "12"), ("c", "13")])
    assert not split.reached
    sets = Market(id="s", question="Which?", outcomes=COLOURS, values=SET)
    chosen = _verdict(sets, [("a", '["Red", "Blue"]'), ("b", '["Red", "Blue"]'), ("c", "[]")])
    assert chosen.reached
    assert chosen.outcome == '["Red", "Blue"]'


def test_a_persons_decision_on_a_value_market_is_a_canonical_value() -> None:
    assert decision_problem(("YES", "NO"), None, "YES") is None
    assert "not one of this market's outcomes" in str(decision_problem(("YES", "NO"), None, "1"))
    assert decision_problem((), NUMBER, "2.5") is None
    assert decision_problem((), NUMBER, "INVALID") is None
    assert "canonical spelling" in str(decision_problem((), NUMBER, "2.50"))
    assert "not a number" in str(decision_problem((), NUMBER, "two"))
    assert decision_problem(COLOURS, SET, '["Red", "Blue"]') is None
    assert "JSON list" in str(decision_problem(COLOURS, SET, "Red"))


@pytest.mark.parametrize(
    ("precision", "fine", "coarse", "canonical"),
    [
        ("Y", "2024-02-01", "2024-01-01", "2024-01-01"),
        ("m", "2024-05-02", "2024-05-01", "2024-05-01"),
        ("d", "2024-05-01T12:00:00Z", "2024-05-01T00:00:00Z", "2024-05-01"),
        ("H", "2024-05-01T12:30:00Z", "2024-05-01T12:00:00Z", "2024-05-01T12:00:00Z"),
        ("i", "2024-05-01T12:30:01Z", "2024-05-01T12:30:00Z", "2024-05-01T12:30:00Z"),
    ],
)
def test_a_time_finer_than_its_precision_is_refused(
    precision: str, fine: str, coarse: str, canonical: str
) -> None:
    value_format = ValueFormat(kind="datetime", precision=precision)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="more precise than the question asks"):
        value_to_int(value_format, fine)
    assert canonical_value(value_format, coarse) == canonical


@given(st.integers(0, MAX_SECONDS // 86_400))
def test_a_day_reads_back_as_a_date(days: int) -> None:
    day = ValueFormat(kind="datetime", precision="d")
    text = int_to_value(day, days * 86_400)
    assert value_to_int(day, text) == days * 86_400
    assert "T" not in text
