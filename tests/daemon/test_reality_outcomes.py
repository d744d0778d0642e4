"""A Reality.eth question read as a market's outcomes, and an answer read back as one
(oracle.venues.reality.venue), without a chain."""

from __future__ import annotations

from typing import Any

import pytest

from oracle.daemon.ports import MarketRef
from oracle.errors import RealityQuestionError
from oracle.venues.reality.rules import (
    INVALID_ANSWER,
    TOO_SOON_ANSWER,
    QuestionKind,
    RealityQuestion,
    encode_question_text,
    parse_question,
)
from oracle.venues.reality.settings import RealitySourceConfig
from oracle.venues.reality.venue import RealityVenue, market_outcomes, outcome_of_answer


def _select(*labels: str) -> RealityQuestion:
    text = encode_question_text(QuestionKind.SINGLE_SELECT, "Who wins?", outcomes=list(labels))
    return parse_question(2, text)


def test_outcomes_of_bool_and_single_select_questions() -> None:
    yes_no = parse_question(0, encode_question_text(QuestionKind.BOOL, "Did it happen?"))
    assert market_outcomes(yes_no, allow_unresolved=False) == ("YES", "NO")
    assert market_outcomes(yes_no, allow_unresolved=True) == ("YES", "NO", "TOO_EARLY")
    teams = _select("Team A", "Team B", "Draw")
    assert market_outcomes(teams, allow_unresolved=False) == ("Team A", "Team B", "Draw")


@pytest.mark.parametrize("label", ["Invalid", "too_early"])
def test_a_label_that_reads_as_a_reserved_answer_is_refused(label: str) -> None:
    with pytest.raises(RealityQuestionError, match="label 1 reads as the reserved answer"):
        market_outcomes(_select("Yes", label), allow_unresolved=False)


def test_value_questions_list_their_options_or_nothing() -> None:
    text = encode_question_text(QuestionKind.MULTIPLE_SELECT, "Which?", outcomes=["a", "b"])
    multi = parse_question(3, text, templates={3})
    # The labels are the options of the set the agents answer; TOO_EARLY is no option.
    assert market_outcomes(multi, allow_unresolved=True) == ("a", "b")
    number = parse_question(1, encode_question_text(QuestionKind.UINT, "How many?"), templates={1})
    assert market_outcomes(number, allow_unresolved=False) == ()
    assert market_outcomes(number, allow_unresolved=True) == ("TOO_EARLY",)
    assert outcome_of_answer(number, (25 * 10**17).to_bytes(32, "big")) == "2.5"
    assert outcome_of_answer(multi, (3).to_bytes(32, "big")) == '["a", "b"]'
    assert outcome_of_answer(multi, (4).to_bytes(32, "big")) == "answer:0x" + "00" * 31 + "04"


def test_answers_read_back_as_outcomes() -> None:
    teams = _select("Team A", "Team B")
    assert outcome_of_answer(teams, (1).to_bytes(32, "big")) == "Team B"
    assert outcome_of_answer(teams, INVALID_ANSWER) == "INVALID"
    assert outcome_of_answer(teams, TOO_SOON_ANSWER) == "TOO_EARLY"
    # An index past the outcomes names no outcome: shown as the raw answer.
    assert outcome_of_answer(teams, (5).to_bytes(32, "big")) == "answer:0x" + "00" * 31 + "05"


async def _no_chain() -> Any:
    raise AssertionError("reading a market's INVALID policy needs no chain")


def test_every_question_takes_invalid_and_the_source_says_what_an_agreed_one_does() -> None:
    source = {
        "kind": "reality",
        "name": "reality",
        "contract_address": "0x" + "11" * 20,
        "bond": {"initial_wei": 10},
    }
    market = MarketRef("reality:0x1", "reality", "0x1", ("YES", "NO"), {})
    default = RealityVenue(RealitySourceConfig.model_validate(source), _no_chain)
    assert default.invalid_policy(market) == "propose"  # as Reality.eth's answerers do
    review = RealityVenue(
        RealitySourceConfig.model_validate({**source, "invalid": "review"}), _no_chain
    )
    assert review.invalid_policy(market) == "review"
