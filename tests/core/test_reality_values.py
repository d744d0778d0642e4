"""Reality.eth's uint, multiple-select and datetime answers as the daemon names them
(`encode_value`, `decode_value`): whatever bytes32 Reality.eth's tools write for such a
question (a uint times 10**decimals, a bitmask of the options chosen, Unix seconds) reads
back as a value whose encoding is that bytes32; the reserved answers stay reserved."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core.values import MAX_SECONDS
from oracle.errors import RealityQuestionError
from oracle.venues.reality.rules import (
    INVALID,
    INVALID_ANSWER,
    TOO_EARLY,
    TOO_SOON_ANSWER,
    UINT256_MAX,
    QuestionKind,
    RealityQuestion,
    decode_value,
    encode_question_text,
    encode_value,
    parse_question,
    template_id_of,
    value_format_of,
)

ALL = frozenset(range(5))


def question(kind: QuestionKind, outcomes: tuple[str, ...] = ()) -> RealityQuestion:
    text = encode_question_text(kind, 'What "exactly"?', outcomes=outcomes, category="c")
    return parse_question(template_id_of(kind), text, templates=ALL)


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


UINT = question(QuestionKind.UINT)
DATE = question(QuestionKind.DATETIME)
WORDS = ("Bigly", "Deplorable", "Hillary", "Twitter")
MULTI = question(QuestionKind.MULTIPLE_SELECT, WORDS)


def test_the_templates_give_each_kind_its_format() -> None:
    assert UINT.decimals == 18  # template 1 says so
    assert value_format_of(UINT) is not None
    assert value_format_of(UINT).kind == "number"  # type: ignore[union-attr]
    assert value_format_of(UINT).decimals == 18  # type: ignore[union-attr]
    assert value_format_of(DATE).kind == "datetime"  # type: ignore[union-attr]
    assert value_format_of(DATE).precision == "d"  # type: ignore[union-attr]
    assert value_format_of(MULTI).kind == "set"  # type: ignore[union-attr]
    assert value_format_of(question(QuestionKind.BOOL)) is None


@given(st.integers(0, UINT256_MAX - 2))
def test_every_uint_the_tools_write_reads_back(value: int) -> None:
    text = decode_value(UINT, word(value))
    assert encode_value(UINT, text) == word(value)


@given(st.integers(0, MAX_SECONDS // 86_400))
def test_every_day_the_tools_write_reads_back(days: int) -> None:
    seconds = days * 86_400  # template 4 names no precision: the tools take a day
    text = decode_value(DATE, word(seconds))
    assert len(text) == len("2024-05-01")
    assert encode_value(DATE, text) == word(seconds)


@given(st.integers(0, MAX_SECONDS).filter(lambda s: s % 86_400))
def test_a_time_finer_than_a_day_names_no_answer_to_template_4(seconds: int) -> None:
    with pytest.raises(RealityQuestionError, match="more precise than the question asks"):
        decode_value(DATE, word(seconds))


@given(st.integers(0, 2 ** len(WORDS) - 1))
def test_every_bitmask_the_tools_write_reads_back(mask: int) -> None:
    text = decode_value(MULTI, word(mask))
    assert encode_value(MULTI, text) == word(mask)
    assert len(json.loads(text)) == bin(mask).count("1")


def test_the_documented_examples() -> None:
    # Reality.eth's docs: "a response of 9 would indicate the answers Bigly (1) and
    # Twitter (8)"; a uint with 18 decimals; a datetime in Unix seconds.
    assert decode_value(MULTI, word(9)) == '["Bigly", "Twitter"]'
    assert encode_value(MULTI, '["Twitter", "bigly"]') == word(9)
    assert encode_value(UINT, "1.5") == word(15 * 10**17)
    assert decode_value(UINT, word(2 * 10**18)) == "2"
    assert encode_value(DATE, "2024-05-01") == word(1_714_521_600)
    assert encode_value(DATE, "2024-05-01T00:00:00Z") == word(1_714_521_600)
    with pytest.raises(RealityQuestionError, match="a day"):
        encode_value(DATE, "2024-05-01T12:30:00Z")


@pytest.mark.parametrize("kind", [QuestionKind.UINT, QuestionKind.DATETIME])
def test_the_reserved_answers_stay_reserved(kind: QuestionKind) -> None:
    asked = UINT if kind == QuestionKind.UINT else DATE
    assert decode_value(asked, INVALID_ANSWER) == INVALID
    assert decode_value(asked, TOO_SOON_ANSWER) == TOO_EARLY
    assert encode_value(asked, "invalid") == INVALID_ANSWER
    assert encode_value(asked, TOO_EARLY, allow_too_soon=True) == TOO_SOON_ANSWER
    with pytest.raises(RealityQuestionError, match="answered-too-soon"):
        encode_value(asked, TOO_EARLY)


def test_a_value_that_is_a_reserved_answer_or_no_value_is_refused() -> None:
    whole = parse_question(1, encode_question_text(QuestionKind.UINT, "n"), templates=ALL)
    assert whole.decimals == 18
    with pytest.raises(RealityQuestionError, match="reserved"):
        encode_value(UINT, str(UINT256_MAX // 10**18) + "." + str(UINT256_MAX % 10**18))
    with pytest.raises(RealityQuestionError, match="not a number"):
        encode_value(UINT, "-3")
    with pytest.raises(RealityQuestionError, match="JSON list"):
        encode_value(MULTI, "Bigly")
    with pytest.raises(RealityQuestionError, match="past the 4"):
        decode_value(MULTI, word(16))
    with pytest.raises(RealityQuestionError, match="after the year 9999"):
        decode_value(DATE, word(MAX_SECONDS + 86_400))
