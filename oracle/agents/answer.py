"""The final answer of an `llm` agent: its JSON schema (fixed by the code, built from the
market's outcomes only) and its validation."""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from oracle._pydantic_errors import describe
from oracle.core.values import ValueFormat, canonical_value
from oracle.core.values import describe as describe_value
from oracle.errors import AnswerInvalid, JsonError
from oracle.safe_json import loads


class AnswerSource(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    url: str = Field(min_length=1)
    title: str
    quote: str
    published_date: datetime | None
    relevance: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)

    @field_validator("published_date", mode="before")
    @classmethod
    def _date(cls, value: object) -> object:
        if isinstance(value, str):
            text = value.strip()
            if not text:
                return None
            if re.fullmatch(r"\d{4}-\d{2}-\d{2}", text):
                return datetime.combine(date.fromisoformat(text), datetime.min.time(), UTC)
            try:
                parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
            except ValueError:
                raise ValueError("must be an ISO 8601 date (YYYY-MM-DD) or null") from None
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        return value


class FinalAnswer(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    outcome: str
    confidence: float = Field(ge=0.0, le=1.0, allow_inf_nan=False)
    reasoning: str = Field(min_length=1)
    sources: tuple[AnswerSource, ...]


def answer_schema(answerable: Sequence[str], values: ValueFormat | None = None) -> dict[str, Any]:
    """The structured-output schema: strict, every property required, nothing else allowed.
    A value market's outcome is free text (its value), checked by `parse_answer`."""
    source = {
        "type": "object",
        "additionalProperties": False,
        "required": ["url", "title", "quote", "published_date", "relevance"],
        "properties": {
            "url": {"type": "string", "description": "The page's URL as the tools gave it."},
            "title": {"type": "string"},
            "quote": {
                "type": "string",
                "description": "The exact words on the page that support the answer.",
            },
            "published_date": {
                "type": ["string", "null"],
                "description": "YYYY-MM-DD when the page states it, else null.",
            },
            "relevance": {
                "type": "number",
                "description": "0 to 1: how directly this source settles the question.",
            },
        },
    }
    return {
        "type": "object",
        "additionalProperties": False,
        "required": ["outcome", "confidence", "reasoning", "sources"],
        "properties": {
            "outcome": (
                {"type": "string", "enum": list(answerable)}
                if values is None
                else {
                    "type": "string",
                    "description": f"{describe_value(values)}; or one of {', '.join(answerable)}",
                }
            ),
            "confidence": {
                "type": "number",
                "description": "0 to 1: the probability that the outcome is right.",
            },
            "reasoning": {"type": "string"},
            "sources": {"type": "array", "items": source},
        },
    }


def _unfenced(text: str) -> str:
    """The text inside a Markdown code fence around the whole answer, if there is one.
    (Not a regular expression: `^\\s*```(.*?)\\s*```\\s*$` backtracked for minutes on
    a fence followed by a few thousand spaces.)"""
    stripped = text.strip()
    if len(stripped) < 6 or not (stripped.startswith("```") and stripped.endswith("```")):
        return text
    return stripped[3:-3].removeprefix("json").strip()


def parse_answer(
    text: str,
    answerable: Sequence[str],
    values: ValueFormat | None = None,
    options: Sequence[str] = (),
) -> FinalAnswer:
    """Validate the model's text as a FinalAnswer whose outcome is one of `answerable`,
    or (a value market: `values`, a set's `options`) a value, made canonical."""
    if not text.strip():
        raise AnswerInvalid("(answer): empty; expected a JSON object")
    try:
        document = loads(_unfenced(text))
    except JsonError as error:
        raise AnswerInvalid(f"(answer): {error}") from None
    try:
        answer = FinalAnswer.model_validate(document)
    except ValidationError as error:
        raise AnswerInvalid("; ".join(describe(error))) from None
    by_upper = {outcome.upper(): outcome for outcome in answerable}
    canonical = by_upper.get(answer.outcome.strip().upper())
    if canonical is None and values is not None:
        try:
            canonical = canonical_value(values, answer.outcome, options)
        except ValueError as problem:
            raise AnswerInvalid(
                f"outcome: {answer.outcome[:80]!r} is not {describe_value(values)} ({problem}), "
                f"nor one of {', '.join(answerable)}"
            ) from None
    if canonical is None:
        raise AnswerInvalid(f"outcome: {answer.outcome!r} is not one of {', '.join(answerable)}")
    return answer.model_copy(update={"outcome": canonical})
