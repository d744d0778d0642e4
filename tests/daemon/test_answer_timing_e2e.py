"""When a question can be answered, end to end on UMA's real Optimistic Oracle V2 on anvil:
two questions asked as Polymarket asks them, days before their deadline, the chain's time
warped past each step of the research schedule. The market the agents answer NO is held
until its deadline has passed (a NO on "by D" can still change before D), then researched
once more and proposed; the one they answer YES is proposed at its early check (a YES is
final once the event happened)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from oracle.app import open_store
from oracle.config import Settings
from oracle.core.lifecycle import MarketState
from oracle.venues.uma.binding import RequestState

from ..anvil import Anvil
from .test_uma_e2e import UmaWorld, polymarket_question
from .venue_world import chain_time, et_deadline, one_pass, warp_to

HOUR, DAY = 3600, 86400
SAY_NO = [("alpha", "NO", 0.9), ("beta", "NO", 0.85), ("gamma", "NO", 0.8)]
SAY_YES = [("alpha", "YES", 0.9), ("beta", "YES", 0.85), ("gamma", "YES", 0.8)]
SCHEDULE = {"settle_margin": 2 * HOUR, "early_checks": 1, "early_check_every": 2 * DAY}


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> UmaWorld:
    return UmaWorld(anvil, tmp_path)


def assert_held(settings: Settings, market_id: str) -> None:
    """The verdict waits, and its proof says why: the outcome can still change."""
    store = open_store(settings)
    try:
        verdict = store.latest_consensus(market_id)
        assert verdict is not None
        assert verdict.action == "research_again"
        assert verdict.proof["timing"]["code"] == "held"
        assert verdict.proof["market"]["window"]["origin"] == "question"
        assert "NO can still change" in verdict.proof["timing"]["reason"]
    finally:
        store.engine.dispose()


def test_a_no_is_held_until_its_deadline_and_an_early_yes_is_proposed_when_seen(
    world: UmaWorld, database_url: str
) -> None:
    asked_at = chain_time(world.anvil)
    words, deadline = et_deadline(asked_at + 5 * DAY)
    no = world.ask(
        "Will the bridge reopen?",
        SAY_NO,
        question=polymarket_question("Will the bridge reopen?", deadline=words),
    )
    yes = world.ask(
        "Will the launch happen?",
        SAY_YES,
        question=polymarket_question("Will the launch happen?", deadline=words),
    )
    settings = world.config(database_url, daemon={"schedule": SCHEDULE})

    def market(market_id: str) -> Any:
        store = open_store(settings)
        try:
            return store.get_market(market_id)
        finally:
            store.engine.dispose()

    def research_runs(market_id: str) -> int:
        return int(market(market_id).attempts)

    # Asked days before the deadline: discovered, nothing researched, nothing proposed.
    one_pass(settings)
    for market_id in (no, yes):
        found = market(market_id)
        assert found.state == MarketState.DISCOVERED
        assert found.answer_window["origin"] == "question"
        assert found.answer_window["closes_at"] == pytest.approx(deadline, abs=60)
        assert found.answer_window["early_outcomes"] == ["YES"]
        assert research_runs(market_id) == 0
        assert world.proposals(market_id) == 0

    # The early check: YES is final once seen, and proposed; NO can still change, held.
    warp_to(world.anvil, asked_at + 2 * DAY + 60)
    one_pass(settings)
    assert market(yes).state == MarketState.SUBMITTED
    assert world.view(yes).state == RequestState.PROPOSED
    assert world.proposals(yes) == 1
    held = market(no)
    assert held.state == MarketState.DEFERRED
    assert research_runs(no) == 1
    assert world.proposals(no) == 0
    assert held.next_attempt_at == pytest.approx(deadline + 2 * HOUR, abs=60)
    assert_held(settings, no)

    # The deadline passed but results have not settled: still nothing.
    warp_to(world.anvil, deadline + HOUR)
    one_pass(settings)
    assert market(no).state == MarketState.DEFERRED
    assert research_runs(no) == 1
    assert world.proposals(no) == 0

    # After the window and its settle margin: one research, one proposal of NO.
    warp_to(world.anvil, deadline + 2 * HOUR + 60)
    one_pass(settings)
    answered = market(no)
    assert answered.state == MarketState.SUBMITTED
    assert answered.decided_outcome == "NO"
    assert research_runs(no) == 2
    assert world.proposals(no) == 1
    assert world.view(no).proposed_price == 0
    assert datetime.fromtimestamp(chain_time(world.anvil), UTC) > datetime.fromtimestamp(
        deadline, UTC
    )


def test_without_early_checks_a_question_is_researched_once_after_its_window_never_before(
    world: UmaWorld, database_url: str
) -> None:
    """Asked days before its deadline: every pass before the window researches nothing,
    whatever the day; the first pass after it researches once and proposes once."""
    asked_at = chain_time(world.anvil)
    words, deadline = et_deadline(asked_at + 4 * DAY)
    market_id = world.ask(
        "Will the tunnel open?",
        SAY_NO,
        question=polymarket_question("Will the tunnel open?", deadline=words),
    )
    schedule = {**SCHEDULE, "early_checks": 0}
    settings = world.config(database_url, daemon={"schedule": schedule})
    store = open_store(settings)
    try:
        for moment in (asked_at, asked_at + DAY, asked_at + 3 * DAY, deadline + HOUR):
            warp_to(world.anvil, max(moment, chain_time(world.anvil)))
            one_pass(settings)
            waiting = store.get_market(market_id)
            assert (waiting.state, waiting.attempts) == (MarketState.DISCOVERED, 0)
            assert world.proposals(market_id) == 0
        warp_to(world.anvil, deadline + 2 * HOUR + 60)
        one_pass(settings)
        answered = store.get_market(market_id)
        assert (answered.state, answered.attempts) == (MarketState.SUBMITTED, 1)
        assert world.proposals(market_id) == 1
    finally:
        store.engine.dispose()
