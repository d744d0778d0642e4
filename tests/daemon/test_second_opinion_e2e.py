"""The second opinion, end to end on UMA's real Optimistic Oracle V2 and Reality.eth v3 on
anvil: a market asked days before its deadline waits for its research, until another
account proposes or answers on it; the next pass researches it at once, by the chain's
clock, not the schedule's."""

from __future__ import annotations

from pathlib import Path

import pytest

from oracle.app import open_store
from oracle.core.lifecycle import MarketState
from oracle.core.timing import ScheduleParams
from oracle.daemon.service import SECOND_OPINION

from ..anvil import Anvil
from .test_answer_timing_e2e import DAY, SAY_YES, SCHEDULE
from .test_reality_e2e import AGREED as REALITY_AGREED
from .test_reality_e2e import NO_WORD, RealityWorld
from .test_uma_e2e import OTHER, UmaWorld, polymarket_question, propose_as_other
from .venue_world import chain_time, et_deadline, one_pass

YES_PRICE = 10**18
SCHEDULE_PARAMS = ScheduleParams.model_validate(SCHEDULE)


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> UmaWorld:
    return UmaWorld(anvil, tmp_path)


def test_another_proposal_makes_a_waiting_market_researched_at_once(
    world: UmaWorld, database_url: str
) -> None:
    asked_at = chain_time(world.anvil)
    words, _ = et_deadline(asked_at + 5 * DAY)
    market_id = world.ask(
        "Will the ferry sail?",
        SAY_YES,
        question=polymarket_question("Will the ferry sail?", deadline=words),
    )
    settings = world.config(database_url, daemon={"schedule": SCHEDULE})
    store = open_store(settings)
    try:
        # Discovered; its first research (the early check) is two days away.
        one_pass(settings)
        waiting = store.get_market(market_id)
        assert waiting.state == MarketState.DISCOVERED
        assert waiting.attempts == 0
        assert waiting.next_attempt_at > asked_at + DAY

        # Someone else proposes YES: the next pass researches it now, though its time has
        # not come by the chain's clock (no warp).
        propose_as_other(world, market_id, YES_PRICE)
        one_pass(settings)
        researched = store.get_market(market_id)
        assert researched.attempts == 1
        assert chain_time(world.anvil) < asked_at + DAY
        assert [a.reason for a in store.audit(market_id) if a.event == "research_now"] == [
            SECOND_OPINION
        ]
        # Our YES agrees with theirs: recorded beside it, never proposed a second time.
        assert researched.state == MarketState.SUBMITTED
        assert researched.submission["proposer"] == OTHER
        assert researched.submission["agrees"] is True
        assert world.proposals(market_id) == 1
    finally:
        store.engine.dispose()


def test_another_answer_on_reality_makes_a_waiting_question_researched_at_once(
    anvil: Anvil, tmp_path: Path, database_url: str
) -> None:
    """A Reality.eth question open from the start (opening_ts 0) whose words put its
    deadline days away waits for its research; another account's answer brings it now."""
    reality = RealityWorld(anvil, tmp_path)
    asked_at = chain_time(anvil)
    words, _ = et_deadline(asked_at + 5 * DAY)
    market_id = reality.ask(f"Will the ferry sail by {words}?", REALITY_AGREED, opening_ts=0)
    settings = reality.config(database_url, source={"claim": False})
    settings = settings.model_copy(
        update={"daemon": settings.daemon.model_copy(update={"schedule": SCHEDULE_PARAMS})}
    )
    store = open_store(settings)
    try:
        one_pass(settings)
        waiting = store.get_market(market_id)
        assert waiting.state == MarketState.DISCOVERED
        assert waiting.answer_window is not None
        assert waiting.answer_window["origin"] == "question"
        assert waiting.attempts == 0

        reality.counter(market_id, NO_WORD)
        one_pass(settings)
        researched = store.get_market(market_id)
        assert researched.attempts == 1
        assert chain_time(anvil) < asked_at + DAY
        assert [a.reason for a in store.audit(market_id) if a.event == "research_now"] == [
            SECOND_OPINION
        ]
    finally:
        store.engine.dispose()
