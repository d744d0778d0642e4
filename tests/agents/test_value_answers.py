"""An `llm` agent on a value market (oracle.agents.answer, oracle.agents.prompts): the
schema leaves the outcome free text, the answer is made canonical or refused with words
the model can correct, and the prompt says how a value is written."""

from __future__ import annotations

import json

import pytest

from oracle.agents.answer import answer_schema, parse_answer
from oracle.agents.prompts import question_prompt
from oracle.agents.question import parse_question
from oracle.core.models import UNDETERMINED, Market
from oracle.core.values import ValueFormat
from oracle.errors import AnswerInvalid

NUMBER = ValueFormat(kind="number", decimals=18)
SET = ValueFormat(kind="set")


def _answer(outcome: str) -> str:
    return json.dumps({"outcome": outcome, "confidence": 0.8, "reasoning": "r", "sources": []})


def test_the_schema_leaves_a_value_free_and_keeps_labels_closed() -> None:
    labels = answer_schema(("YES", "NO", UNDETERMINED))["properties"]["outcome"]
    assert labels["enum"] == ["YES", "NO", UNDETERMINED]
    value = answer_schema((UNDETERMINED,), NUMBER)["properties"]["outcome"]
    assert "enum" not in value
    assert "18 digits after the point" in value["description"]


def test_a_value_answer_is_made_canonical() -> None:
    assert parse_answer(_answer(" 1.50 "), (UNDETERMINED,), NUMBER).outcome == "1.5"
    assert parse_answer(_answer("undetermined"), (UNDETERMINED,), NUMBER).outcome == UNDETERMINED
    chosen = parse_answer(_answer('["blue", "Red"]'), (UNDETERMINED,), SET, ("Red", "Blue"))
    assert chosen.outcome == '["Red", "Blue"]'


@pytest.mark.parametrize(
    ("outcome", "why"),
    [("about 3", "not a number written plainly"), ("YES", "not a number written plainly")],
)
def test_a_value_answer_that_names_no_value_is_refused(outcome: str, why: str) -> None:
    with pytest.raises(AnswerInvalid, match=why):
        parse_answer(_answer(outcome), (UNDETERMINED,), NUMBER)


def test_the_prompt_says_how_a_value_is_written() -> None:
    number = Market(id="m", question="How many ships docked?", outcomes=(), values=NUMBER)
    prompt = question_prompt(number, parse_question(number.question), 1.7e9, "n0nce")
    assert "must be a value: a non-negative number" in prompt
    assert "Possible answers" not in prompt
    sets = Market(id="s", question="Which apply?", outcomes=("Red", "Blue"), values=SET)
    prompt = question_prompt(sets, parse_question(sets.question), 1.7e9, "n0nce")
    assert "as a JSON list of their labels" in prompt
    assert "Options:\n1. Red\n2. Blue" in prompt
