"""The transaction intent's transition table and `decide`: pure, no chain."""

from __future__ import annotations

import ast
import itertools
from dataclasses import replace
from pathlib import Path

import pytest

from oracle.core.intents import (
    FINAL_STATES,
    NOT_READ,
    RELEASING_STATES,
    TERMINAL_STATES,
    TRANSITIONS,
    Action,
    Do,
    IntentEvent,
    IntentState,
    Look,
    Observation,
    Receipt,
    SendAnswer,
    after_resend,
    allowed_events,
    decide,
    nonce_taken_settled,
    transition,
)
from oracle.errors import ChainError, IllegalIntentTransition, IllegalTransition, OracleError

S, E = IntentState, IntentEvent
EVERY_STATE: list[IntentState | None] = [None, *IntentState]


@pytest.mark.parametrize(
    ("state", "event"), list(itertools.product(EVERY_STATE, IntentEvent)), ids=str
)
def test_every_pair_is_either_in_the_table_or_refused(
    state: IntentState | None, event: IntentEvent
) -> None:
    if (state, event) in TRANSITIONS:
        assert transition(state, event) is TRANSITIONS[(state, event)]
        assert event in allowed_events(state)
        return
    with pytest.raises(IllegalIntentTransition) as raised:
        transition(state, event)
    name = state.value if state is not None else "none"
    assert raised.value.state == name
    assert raised.value.event == event.value
    assert f"{event.value!r}" in str(raised.value)
    assert f"{name!r}" in str(raised.value)
    assert event not in allowed_events(state)


def test_illegal_intent_transition_is_no_chain_error_and_no_market_one() -> None:
    error = IllegalIntentTransition("confirmed", "sent", [])
    assert isinstance(error, OracleError)
    assert not isinstance(error, ChainError | IllegalTransition)
    assert "none (terminal)" in str(error)


def test_terminal_states_allow_nothing_and_final_ones_only_a_new_record() -> None:
    for state in TERMINAL_STATES:
        assert allowed_events(state) == frozenset()
    for state in FINAL_STATES - TERMINAL_STATES:
        assert allowed_events(state) == {E.RECORDED, E.FOUND_DONE}
    assert {s for s in IntentState if s.final} == FINAL_STATES
    assert {s for s in IntentState if not s.holds_subjects} == RELEASING_STATES
    assert S.CONFIRMED.holds_subjects, "a confirmed action stays done"


def test_every_state_is_reachable_and_every_event_used() -> None:
    reached: set[IntentState | None] = {None}
    frontier: list[IntentState | None] = [None]
    while frontier:
        state = frontier.pop()
        for event in allowed_events(state):
            after = transition(state, event)
            if after not in reached:
                reached.add(after)
                frontier.append(after)
    assert reached == set(EVERY_STATE)
    assert {e for (_, e) in TRANSITIONS} == set(IntentEvent)
    assert all(after is not None for after in TRANSITIONS.values())


def test_the_happy_path_and_a_reorg() -> None:
    state = transition(None, E.RECORDED)
    for event in (E.SENT, E.REPLACED, E.INCLUDED, E.REORGED, E.SENT, E.INCLUDED, E.CONFIRMED):
        state = transition(state, event)
    assert state is S.CONFIRMED


# -- decide -------------------------------------------------------------------------------------

HEAD = 100
BASE = Observation(
    state=S.BROADCAST, head=HEAD, confirmations=2, resend_after_blocks=5, nonce=7, sent_at_block=99
)
FRESH = Receipt(block_number=HEAD, status=1, recorded=False)  # depth 1 of 2
DEEP_OK = Receipt(block_number=HEAD - 1, status=1, recorded=False)
DEEP_REVERTED = Receipt(block_number=HEAD - 1, status=0, recorded=True)
# A broadcast intent whose nonce another transaction used, long enough ago to act on it.
TAKEN = replace(
    BASE, receipt=None, mined_nonce=8, receipt_after_nonce=None, nonce_taken_settled=True
)


def look(fact: Look) -> Action:
    return Action(Do.LOOK, look=fact)


CASES: dict[str, tuple[Observation, Action]] = {
    "first the receipt": (BASE, look(Look.RECEIPT)),
    "a fresh receipt is marked mined": (
        replace(BASE, receipt=FRESH),
        Action(Do.MARK_MINED, event=E.INCLUDED),
    ),
    "the same fresh receipt again: wait": (
        replace(BASE, state=S.MINED, receipt=replace(FRESH, recorded=True)),
        Action(Do.WAIT),
    ),
    "mined again in another block": (
        replace(BASE, state=S.MINED, receipt=FRESH),
        Action(Do.MARK_MINED, event=E.INCLUDED),
    ),
    "deep enough, status 1": (
        replace(BASE, state=S.MINED, receipt=DEEP_OK),
        Action(Do.FINISH, event=E.CONFIRMED),
    ),
    "deep enough, status 0": (
        replace(BASE, receipt=DEEP_REVERTED),
        Action(Do.FINISH, event=E.REVERTED),
    ),
    "a recorded intent already mined": (
        replace(BASE, state=S.SIGNED, receipt=DEEP_OK),
        Action(Do.FINISH, event=E.CONFIRMED),
    ),
    "mined, receipt gone: reorg": (
        replace(BASE, state=S.MINED, receipt=None),
        Action(Do.REBROADCAST, event=E.REORGED, reason="reorg"),
    ),
    "recorded, not mined: does the node know it": (
        replace(BASE, state=S.SIGNED, receipt=None),
        look(Look.KNOWN),
    ),
    "recorded and known: send it (again)": (
        replace(BASE, state=S.SIGNED, receipt=None, known=True),
        Action(Do.REBROADCAST, reason="recorded, not yet broadcast"),
    ),
    "recorded and unknown: check it is still wanted": (
        replace(BASE, state=S.SIGNED, receipt=None, known=False),
        look(Look.ALREADY_DONE),
    ),
    "recorded, unknown and done meanwhile": (
        replace(BASE, state=S.SIGNED, receipt=None, known=False, already_done=True),
        Action(
            Do.SKIP,
            event=E.FOUND_DONE,
            reason="recorded but never sent, and the pre-send check found it done",
        ),
    ),
    "recorded, unknown, not done: send it": (
        replace(BASE, state=S.SIGNED, receipt=None, known=False, already_done=False),
        Action(Do.REBROADCAST, reason="recorded, not yet broadcast"),
    ),
    "recorded, unknown, no check known: send it": (
        replace(BASE, state=S.SIGNED, receipt=None, known=False, already_done=None),
        Action(Do.REBROADCAST, reason="recorded, not yet broadcast"),
    ),
    "broadcast, no receipt: the account's nonce": (
        replace(BASE, receipt=None),
        look(Look.MINED_NONCE),
    ),
    "nonce passed ours: the receipt once more": (
        replace(BASE, receipt=None, mined_nonce=8),
        look(Look.RECEIPT_AFTER_NONCE),
    ),
    "mined between the two reads": (
        replace(BASE, receipt=None, mined_nonce=8, receipt_after_nonce=FRESH),
        Action(Do.MARK_MINED, event=E.INCLUDED),
    ),
    "nonce used, receipt missing: has it held": (
        replace(BASE, receipt=None, mined_nonce=8, receipt_after_nonce=None),
        look(Look.NONCE_TAKEN_SETTLED),
    ),
    "nonce used, receipt missing, not for long: wait": (
        replace(TAKEN, nonce_taken_settled=False),
        Action(Do.WAIT),
    ),
    "nonce taken for sure: is the action done": (TAKEN, look(Look.ALREADY_DONE)),
    "nonce taken, action done": (
        replace(TAKEN, already_done=True),
        Action(
            Do.SKIP,
            event=E.FOUND_DONE,
            reason="nonce used by another transaction; the action is already done",
            nonce_taken=True,
        ),
    ),
    "nonce taken, no check known": (
        replace(TAKEN, already_done=None),
        Action(
            Do.ABANDON,
            event=E.NONCE_TAKEN_UNCHECKED,
            reason="nonce used by another transaction and no pre-send check is known",
            nonce_taken=True,
        ),
    ),
    "nonce taken, action not done: a fresh nonce": (
        replace(TAKEN, already_done=False),
        Action(Do.RESIGN, event=E.NONCE_TAKEN, nonce_taken=True),
    ),
    "a filler's nonce taken: done, no check run": (
        replace(TAKEN, is_filler=True),
        Action(
            Do.SKIP,
            event=E.FOUND_DONE,
            reason="nonce used by another transaction; the action is already done",
            nonce_taken=True,
        ),
    ),
    "nonce not passed: is it still in the mempool": (
        replace(BASE, receipt=None, mined_nonce=7),
        look(Look.KNOWN),
    ),
    "dropped: send it again": (
        replace(BASE, receipt=None, mined_nonce=7, known=False),
        Action(Do.REBROADCAST, reason="dropped"),
    ),
    "known, sent recently: wait": (
        replace(BASE, receipt=None, mined_nonce=7, known=True, sent_at_block=HEAD - 4),
        Action(Do.WAIT),
    ),
    "known, not mined for resend_after_blocks: replace": (
        replace(BASE, receipt=None, mined_nonce=7, known=True, sent_at_block=HEAD - 5),
        Action(Do.REPLACE, event=E.REPLACED, reason="not mined"),
    ),
    "never marked sent: counts from now": (
        replace(BASE, receipt=None, mined_nonce=7, known=True, sent_at_block=None),
        Action(Do.WAIT),
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_decide(case: str) -> None:
    seen, expected = CASES[case]
    action = decide(seen)
    assert action == expected
    if action.look is not None:  # a fact not read yet, so the manager's reading loop ends
        assert getattr(seen, action.look.value) is NOT_READ


@pytest.mark.parametrize("case", list(CASES))
def test_every_decided_event_is_allowed_in_its_state(case: str) -> None:
    seen, _ = CASES[case]
    action = decide(seen)
    if action.event is not None:
        transition(seen.state, action.event)  # raises if the table has no such step


@pytest.mark.parametrize("state", sorted(FINAL_STATES))
def test_decide_refuses_a_final_intent(state: IntentState) -> None:
    with pytest.raises(ValueError, match="not driven"):
        decide(replace(BASE, state=state))


@pytest.mark.parametrize(
    ("first_seen", "head", "now", "settled"),
    [
        ((100, 10.0), 100, 10.0, False),  # just seen
        ((100, 10.0), 101, 10.0, True),  # survived a new block
        ((100, 10.0), 100, 11.9, False),  # no block, not long enough
        ((100, 10.0), 100, 13.0, True),  # no block, 3 polls of 1 s
    ],
)
def test_nonce_taken_settles_after_a_block_or_a_few_polls(
    first_seen: tuple[int, float], head: int, now: float, settled: bool
) -> None:
    assert nonce_taken_settled(first_seen, head, now, poll_interval=1.0) is settled


@pytest.mark.parametrize(
    ("state", "answer", "event"),
    [
        (S.SIGNED, SendAnswer.SENT, E.SENT),
        (S.SIGNED, SendAnswer.NONCE_LOW, E.NONCE_TOO_LOW),
        (S.SIGNED, SendAnswer.UNDERPRICED, E.UNDERPRICED),
        (S.SIGNED, SendAnswer.REFUSED, None),
        (S.BROADCAST, SendAnswer.SENT, E.SENT),
        (S.BROADCAST, SendAnswer.NONCE_LOW, None),
        (S.BROADCAST, SendAnswer.UNDERPRICED, None),
        (S.BROADCAST, SendAnswer.REFUSED, None),
    ],
)
def test_after_resend(state: IntentState, answer: SendAnswer, event: IntentEvent | None) -> None:
    assert after_resend(state, answer) == event
    if event is not None:
        transition(state, event)


# -- nobody else sets a state -------------------------------------------------------------------

ORACLE = Path(__file__).resolve().parents[2] / "oracle"
TABLE_MODULE = ORACLE / "core" / "intents.py"


def _state_writes(tree: ast.AST) -> list[int]:
    """Lines naming an `IntentState` member anywhere but in a comparison (a read), or
    calling `IntentState(...)`."""
    parents = {child: node for node in ast.walk(tree) for child in ast.iter_child_nodes(node)}
    found = []
    for node in ast.walk(tree):
        named = (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "IntentState"
        )
        called = (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "IntentState"
        )
        if called:
            found.append(getattr(node, "lineno", 0))
        if not named:
            continue
        up = parents.get(node)
        while up is not None and not isinstance(up, ast.Compare | ast.stmt):
            up = parents.get(up)
        if not isinstance(up, ast.Compare):
            found.append(getattr(node, "lineno", 0))
    return sorted(found)


def test_only_the_table_module_names_a_state_to_set_it() -> None:
    offenders = {
        str(path.relative_to(ORACLE)): lines
        for path in sorted(ORACLE.rglob("*.py"))
        if path != TABLE_MODULE
        and (lines := _state_writes(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert offenders == {}, "set intent states with oracle.core.intents.transition"


def test_the_check_finds_a_state_set_directly() -> None:
    tree = ast.parse(
        "a = Intent(state=IntentState.SIGNED)\n"
        "b = x.model_copy(update={'state': IntentState.FAILED})\n"
        "c = IntentState('signed')\n"
        "ok = x.state == IntentState.SIGNED or x.state in (IntentState.MINED,)\n"
    )
    assert _state_writes(tree) == [1, 2, 3]
