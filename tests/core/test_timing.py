"""The answer window, the hold rule and the research schedule (`oracle.core.timing`)."""

from __future__ import annotations

from typing import Literal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core.timing import (
    SCHEDULE,
    AnswerWindow,
    Phase,
    Progress,
    ScheduleEvent,
    ScheduleParams,
    Step,
    hold_reason,
    plan,
    timed_action,
)

HOUR, DAY = 3600.0, 86400.0
PARAMS = ScheduleParams()
BY_D = AnswerWindow(
    closes_at=10 * DAY, opens_at=0.0, early_outcomes=("YES",), origin="question", evidence="by D"
)
GAME = AnswerWindow(closes_at=5 * DAY, opens_at=5 * DAY - 3 * HOUR, origin="question")

times = st.floats(min_value=0, max_value=1e9, allow_nan=False)
outcomes = st.sampled_from(["YES", "NO", "Team A", "UNDETERMINED", "INVALID"])
actions = st.sampled_from(["submit", "review", "research_again"])


@st.composite
def windows(draw: st.DrawFn) -> AnswerWindow:
    closes = draw(times)
    opens = draw(st.none() | st.floats(min_value=0, max_value=closes))
    return AnswerWindow(
        closes_at=closes,
        opens_at=opens,
        early_outcomes=tuple(draw(st.lists(st.sampled_from(["YES", "NO", "Team A"]), max_size=2))),
        origin=draw(st.sampled_from(["venue", "question", "model", "default"])),
        evidence="words",
    )


progresses = st.builds(Progress, st.integers(0, 5), st.integers(0, 30))


@given(windows(), outcomes, actions, times, progresses)
def test_nothing_that_can_still_change_is_ever_submitted(
    window: AnswerWindow,
    outcome: str,
    action: Literal["submit", "review", "research_again"],
    now: float,
    progress: Progress,
) -> None:
    timed = timed_action(
        window, outcome=outcome, action=action, now=now, progress=progress, params=PARAMS
    )
    if timed.kind == "submit":
        assert action == "submit"
        # INVALID goes only as an agreed answer the policy lets through (action submit).
        assert outcome != "UNDETERMINED"
        assert now >= window.closes_at or outcome in window.early_outcomes
        assert window.origin != "default"
    if timed.kind == "person":
        assert now >= window.closes_at + PARAMS.grace  # the window over, the grace passed
    if now < window.closes_at:
        assert timed.kind != "person"  # their time has not come: nobody is asked
        if outcome not in window.early_outcomes:
            assert timed.kind == "wait"
    if timed.kind == "wait":
        assert timed.plan is not None
        assert timed.plan.at >= now
        held_past_window = now < window.closes_at and timed.plan.step is not Step.EARLY_CHECK
        if held_past_window:  # the next look is after the window, when the outcome is final
            assert timed.plan.at >= window.closes_at


@given(windows(), times, progresses)
def test_every_phase_and_event_has_a_step_and_plans_never_go_back_in_time(
    window: AnswerWindow, now: float, progress: Progress
) -> None:
    assert set(SCHEDULE) == {(p, e) for p in Phase for e in ScheduleEvent}
    for event in ScheduleEvent:
        step = plan(window, event, now, progress, PARAMS)
        assert step.at >= now
        assert step.progress.early_checks <= max(progress.early_checks, PARAMS.early_checks)


def test_a_no_before_the_deadline_is_held_and_a_yes_is_not() -> None:
    assert hold_reason(BY_D, "YES", 3 * DAY) is None
    reason = hold_reason(BY_D, "NO", 3 * DAY)
    assert reason is not None
    assert reason.startswith("NO can still change until the question's window closes at")
    assert hold_reason(BY_D, "NO", 10 * DAY) is None
    assert hold_reason(GAME, "Team A", 5 * DAY - HOUR) is not None


def test_a_deadline_question_is_checked_early_once_then_after_its_window() -> None:
    first = plan(BY_D, ScheduleEvent.DISCOVERED, 0.0, Progress(), PARAMS)
    assert (first.step, first.at, first.progress) == (Step.EARLY_CHECK, 3 * DAY, Progress(1, 0))
    held = timed_action(
        BY_D, outcome="NO", action="submit", now=3 * DAY, progress=first.progress, params=PARAMS
    )
    assert (held.kind, held.code) == ("wait", "held")
    assert held.plan is not None
    assert held.plan.at == 10 * DAY + PARAMS.settle_margin  # the budget of early checks spent
    early_yes = timed_action(
        BY_D, outcome="YES", action="submit", now=3 * DAY, progress=first.progress, params=PARAMS
    )
    assert early_yes.kind == "submit"


def test_a_scheduled_event_waits_for_its_end_with_no_early_check() -> None:
    first = plan(GAME, ScheduleEvent.DISCOVERED, 0.0, Progress(), PARAMS)
    assert (first.step, first.at) == (Step.FIRST_RESEARCH, 5 * DAY + PARAMS.settle_margin)


def test_after_the_window_not_yet_backs_off_growing_then_a_person_looks() -> None:
    waits, progress, now = [], Progress(), 10 * DAY + PARAMS.settle_margin
    while True:
        timed = timed_action(
            BY_D,
            outcome="UNDETERMINED",
            action="research_again",
            now=now,
            progress=progress,
            params=PARAMS,
        )
        assert timed.plan is not None
        if timed.kind == "person":
            break
        assert timed.code == "not_yet"
        waits.append(timed.plan.at - now)
        now, progress = timed.plan.at, timed.plan.progress
    assert waits[:3] == [8 * HOUR, 24 * HOUR, 2 * DAY]
    assert max(waits) <= PARAMS.backoff_max
    assert now >= 10 * DAY + PARAMS.grace
    assert timed.code == "still_undecidable"
    assert len(waits) < 6  # a week of grace is a few looks, not hourly research


def test_a_venue_time_is_researched_at_once_a_read_time_after_its_settle_margin() -> None:
    venue = AnswerWindow(closes_at=DAY, origin="venue", evidence="Reality.eth opening_ts")
    read = venue.model_copy(update={"origin": "question"})
    assert plan(venue, ScheduleEvent.DISCOVERED, 0.0, Progress(), PARAMS).at == DAY
    assert plan(read, ScheduleEvent.DISCOVERED, 0.0, Progress(), PARAMS).at == DAY + 2 * HOUR


def test_a_definite_verdict_on_a_window_nothing_named_goes_to_a_person() -> None:
    unknown = AnswerWindow(closes_at=DAY, origin="default", evidence="no time found")
    timed = timed_action(
        unknown, outcome="NO", action="submit", now=2 * DAY, progress=Progress(), params=PARAMS
    )
    assert (timed.kind, timed.code) == ("review", "window_unknown")


def test_another_answer_or_a_person_brings_the_research_to_now() -> None:
    for event in (ScheduleEvent.OTHER_ANSWERED, ScheduleEvent.SENT_BACK):
        assert plan(BY_D, event, DAY, Progress(), PARAMS).at == DAY


def test_window_evidence_is_plain_text_and_its_times_ordered() -> None:
    window = AnswerWindow(
        closes_at=DAY, origin="question", evidence="by\u202e May\u200b 23\U000e0041\n\n ET"
    )
    assert window.evidence == "by May 23 ET"
    with pytest.raises(ValueError, match="opens_at is after closes_at"):
        AnswerWindow(closes_at=DAY, opens_at=2 * DAY, origin="question")
