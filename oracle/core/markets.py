"""A market as a venue reports it, before the daemon tracks it (its lifecycle is in
:mod:`oracle.core.lifecycle`)."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from oracle.core.text import clean, clean_labels
from oracle.core.timetext import read_window
from oracle.core.timing import AnswerWindow, ScheduleParams, default_window


@dataclass(frozen=True)
class MarketSpec:
    """A market as a source reports it, before the daemon tracks it."""

    source: str
    external_id: str
    question: str
    resolve_after: float
    criteria: str = ""
    outcomes: tuple[str, ...] = ("YES", "NO")
    details: dict[str, Any] = field(default_factory=dict)
    awaits_settlement: bool = False  # someone waits for the final answer to be pushed
    # When the venue itself says when the question can be answered (Reality.eth's
    # opening_ts, the own contract's resolve_after); None: read from the question.
    window: AnswerWindow | None = None
    # Why the venue cannot read this market exactly (UMA ancillary data it cannot read):
    # then it goes straight to a person, as a review item with this reason, and is never
    # researched; no decision sends anything for it. None: an ordinary market.
    unreadable: str | None = None

    @property
    def market_id(self) -> str:
        return f"{self.source}:{self.external_id}"


# Where a market's details keep how many invisible characters its text held.
HIDDEN_CHARACTERS = "hidden_characters"
_EMPTY_QUESTION = "(the question is empty once its invisible characters are removed)"


def clean_spec(spec: MarketSpec) -> MarketSpec:
    """`spec` with its question, criteria and outcome labels cleaned
    (`oracle.core.text.clean`), the market text's one way into the daemon; the characters
    removed, with any its venue's parser removed already, are counted in its details'
    `hidden_characters` (kept out of them when none were)."""
    question, criteria = clean(spec.question), clean(spec.criteria)
    outcomes, from_labels = clean_labels(spec.outcomes)
    removed = question.removed + criteria.removed + from_labels
    details = spec.details
    if removed:
        details = {**details, HIDDEN_CHARACTERS: int(details.get(HIDDEN_CHARACTERS, 0)) + removed}
    return replace(
        spec,
        question=question.text if question.text.strip() else _EMPTY_QUESTION,
        criteria=criteria.text,
        outcomes=outcomes,
        details=details,
    )


def answer_window(spec: MarketSpec, now: float, params: ScheduleParams) -> AnswerWindow:
    """When `spec`'s outcomes become final: as its venue says, else as its question says,
    else the schedule's default. `now` (the venue's clock at discovery) bounds when it was
    asked, which dates without a year are read from."""
    if spec.window is not None:
        return window_that_holds(spec.window, spec.outcomes)
    found = text_window(spec, now)
    if found is None:
        return default_window(asked_at(spec, now), params)
    return window_that_holds(found, spec.outcomes)


def window_that_holds(window: AnswerWindow, outcomes: tuple[str, ...]) -> AnswerWindow:
    """`window`, holding something: one that calls every outcome early would let any
    guess through at any time ("immediately resolves to No if ..." beside a "by D"), so
    none of them is early then."""
    if set(outcomes) <= set(window.early_outcomes):
        return window.model_copy(update={"early_outcomes": ()})
    return window


def asked_at(spec: MarketSpec, now: float) -> float:
    """When `spec` was asked, as far as the daemon can tell: its venue's resolution time,
    or `now` (the venue's clock at discovery) if that is earlier."""
    return min(spec.resolve_after, now)


def text_window(spec: MarketSpec, now: float) -> AnswerWindow | None:
    """The window `spec`'s question and criteria name (`oracle.core.timetext`), if any."""
    text = f"{spec.question}\n{spec.criteria}" if spec.criteria else spec.question
    return read_window(text, asked_at=asked_at(spec, now), outcomes=spec.outcomes)
