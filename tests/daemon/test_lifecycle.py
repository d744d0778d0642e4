from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core.lifecycle import (
    TERMINAL_STATES,
    TRANSITIONS,
    MarketEvent,
    MarketState,
    allowed_events,
    transition,
)
from oracle.errors import IllegalTransition

S, E = MarketState, MarketEvent


def test_happy_path_to_final() -> None:
    state = S.DISCOVERED
    for event in (
        E.DUE,
        E.RESEARCH_STARTED,
        E.RESEARCH_FINISHED,
        E.CONSENSUS_SUBMIT,
        E.PROPOSAL_CONFIRMED,
        E.WINDOW_PASSED,
    ):
        state = transition(state, event)
    assert state is S.FINAL


def test_review_path() -> None:
    state = transition(S.CONSENSUS, E.CONSENSUS_REVIEW)
    state = transition(state, E.REVIEW_DECIDED)
    assert transition(state, E.SUBMISSION_STARTED) is S.SUBMITTING


def test_dispute_reset_goes_back_to_due() -> None:
    assert transition(transition(S.SUBMITTED, E.DISPUTED), E.PROPOSAL_RESET) is S.DUE


def test_a_reset_seen_before_the_dispute_goes_back_to_due() -> None:
    # Disputed and reopened within the challenge window: the watch only sees the reset.
    assert transition(S.SUBMITTED, E.PROPOSAL_RESET) is S.DUE


def test_retry_and_exhaustion() -> None:
    assert transition(S.RESEARCHING, E.FAILED) is S.FAILED_RETRY
    assert transition(S.FAILED_RETRY, E.RETRY) is S.DUE
    assert transition(S.FAILED_RETRY, E.RETRIES_EXHAUSTED) is S.NEEDS_REVIEW


def test_not_decidable_yet_is_deferred_not_failed() -> None:
    state = transition(S.CONSENSUS, E.CONSENSUS_RESEARCH_AGAIN)
    assert state is S.DEFERRED
    assert E.RETRIES_EXHAUSTED not in allowed_events(state)
    assert transition(state, E.RESEARCH_AGAIN) is S.DUE
    assert allowed_events(state) == {E.RESEARCH_AGAIN}  # a person: the verdict's review


def test_a_challenge_starts_only_from_a_market_a_person_confirmed() -> None:
    # Another's answer stands beside our verdict (submitted), or superseded ours and the
    # bond policy sent it to a person (disputed); the person's confirmation is the one
    # way to a dispute, counter-answer or defence.
    assert transition(S.SUBMITTED, E.CHALLENGE_CONFIRMED) is S.CHALLENGING
    assert transition(S.DISPUTED, E.CHALLENGE_CONFIRMED) is S.CHALLENGING
    assert {s for (s, e) in TRANSITIONS if e is E.CHALLENGE_CONFIRMED} == {
        S.SUBMITTED,
        S.DISPUTED,
    }
    assert {s for (s, e), to in TRANSITIONS.items() if to is S.CHALLENGING} == {
        S.SUBMITTED,
        S.DISPUTED,
        S.FAILED_RETRY,
    }
    # Our dispute stands: the arbiter decides; our counter-answer stands: followed as ours.
    assert transition(S.CHALLENGING, E.CHALLENGE_DISPUTED) is S.DISPUTED
    assert transition(S.CHALLENGING, E.CHALLENGE_ANSWERED) is S.SUBMITTED
    # Nothing sent (already disputed, settled, expired): the watch follows the venue.
    assert transition(S.CHALLENGING, E.CHALLENGE_MOOT) is S.SUBMITTED
    # A failed send is retried as a challenge, never as research or a first answer.
    assert transition(S.CHALLENGING, E.FAILED) is S.FAILED_RETRY
    assert transition(S.FAILED_RETRY, E.RETRY_CHALLENGE) is S.CHALLENGING
    for event in (E.CONSENSUS_SUBMIT, E.SUBMISSION_STARTED, E.REVIEW_DECIDED, E.PROPOSAL_CONFIRMED):
        with pytest.raises(IllegalTransition):
            transition(S.CHALLENGING, event)


def test_a_defence_a_person_accepts_not_to_send_leaves_the_market_following_the_venue() -> None:
    # Their answer accepted: nothing sent, the disputed market ends with the question.
    assert transition(S.DISPUTED, E.DISPUTE_UPHELD) is S.FINAL
    # A defence sent stands as our answer, followed again as submitted.
    state = transition(S.DISPUTED, E.CHALLENGE_CONFIRMED)
    assert transition(state, E.CHALLENGE_ANSWERED) is S.SUBMITTED


def test_an_answer_lost_goes_to_a_person_never_to_a_retry() -> None:
    # A commitment whose reveal window passed: from the delivery or the challenge that
    # found it, straight to review; no retry state leads back to sending it.
    assert transition(S.SUBMITTING, E.ANSWER_LOST) is S.NEEDS_REVIEW
    assert transition(S.CHALLENGING, E.ANSWER_LOST) is S.NEEDS_REVIEW
    assert {s for (s, e) in TRANSITIONS if e is E.ANSWER_LOST} == {S.SUBMITTING, S.CHALLENGING}
    for state in (S.DUE, S.SUBMITTED, S.FAILED_RETRY, S.NEEDS_REVIEW, S.FINAL):
        with pytest.raises(IllegalTransition):
            transition(state, E.ANSWER_LOST)
    # The person decides again (answer anew) or sends it back for research.
    assert transition(S.NEEDS_REVIEW, E.REVIEW_DECIDED) is S.REVIEWED
    assert transition(S.NEEDS_REVIEW, E.RESEARCH_REQUESTED) is S.DUE


def test_a_delivery_stopped_goes_to_a_person_from_a_delivery_or_a_challenge_only() -> None:
    # Refused for good, or daemon.max_attempts failed attempts: a person, never a retry.
    assert transition(S.SUBMITTING, E.DELIVERY_STOPPED) is S.NEEDS_REVIEW
    assert transition(S.CHALLENGING, E.DELIVERY_STOPPED) is S.NEEDS_REVIEW
    assert {s for (s, e) in TRANSITIONS if e is E.DELIVERY_STOPPED} == {
        S.SUBMITTING,
        S.CHALLENGING,
    }
    for state in (S.RESEARCHING, S.CONSENSUS, S.FAILED_RETRY, S.SUBMITTED, S.FINAL):
        with pytest.raises(IllegalTransition):
            transition(state, E.DELIVERY_STOPPED)


def test_illegal_transition_names_state_and_allowed_events() -> None:
    with pytest.raises(
        IllegalTransition,
        match=r"'consensus_submit' is not allowed in state 'due'; allowed: research_started",
    ):
        transition(S.DUE, E.CONSENSUS_SUBMIT)
    with pytest.raises(IllegalTransition, match="none \\(terminal\\)"):
        transition(S.FINAL, E.RETRY)


def test_every_state_is_reachable_and_only_final_is_terminal() -> None:
    reachable = {S.DISCOVERED}
    frontier = [S.DISCOVERED]
    while frontier:
        state = frontier.pop()
        for event in allowed_events(state):
            nxt = transition(state, event)
            if nxt not in reachable:
                reachable.add(nxt)
                frontier.append(nxt)
    assert reachable == set(S)
    assert {s for s in S if not allowed_events(s)} == set(TERMINAL_STATES)


@given(st.lists(st.sampled_from(list(E)), max_size=40))
def test_any_event_sequence_either_follows_the_table_or_is_refused(
    events: list[MarketEvent],
) -> None:
    state = S.DISCOVERED
    for event in events:
        if (state, event) in TRANSITIONS:
            state = transition(state, event)
        else:
            with pytest.raises(IllegalTransition):
                transition(state, event)
    assert state in set(S)
