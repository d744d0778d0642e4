"""Reality.eth questions answered by a value, end to end on the real RealityETH_v3_0 on
anvil with replay agents: a uint (template 1, 18 decimals), a multiple-select (template 3,
a bitmask) and a datetime (template 4, Unix seconds), each answered as Reality.eth's
tools encode it, finalized by timeout, read back as the same value and claimed to the
wei; a value the agents disagree on goes to a person, who decides a value."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from oracle.app import open_store
from oracle.core.lifecycle import MarketState
from oracle.errors import StoreError
from oracle.testing import consensus_document, result_dict
from oracle.venues.reality.binding import ask_question
from oracle.venues.reality.rules import QuestionKind, encode_question_text, template_id_of

from ..anvil import Anvil
from ..chain.helpers import manager_for
from .test_reality_e2e import (
    ASKER_KEY,
    BOUNTY,
    INITIAL,
    MIN_BOND,
    OURS,
    TIMEOUT,
    RealityWorld,
    assert_settled_as,
)
from .venue_world import one_pass

NUMBER = {"kind": "number", "decimals": 18}
COLOURS = ["Red", "Green", "Blue"]


def ask_value(
    world: RealityWorld,
    kind: QuestionKind,
    title: str,
    votes: list[tuple[str, str, float]],
    *,
    outcomes: list[str] | None = None,
    values: dict[str, object],
) -> str:
    """A question of `kind` asked by the asker with a bounty, open now, and the agents'
    recorded values; the market id."""
    latest = world.anvil.rpc("eth_getBlockByNumber", "latest", False)
    text = encode_question_text(kind, title, outcomes=outcomes or (), category="data")
    world.nonce += 1

    async def run() -> bytes:
        async with manager_for(world.anvil.url, key=ASKER_KEY) as asker:
            return await ask_question(
                asker,
                world.reality,
                template_id=template_id_of(kind),
                text=text,
                arbitrator=world.arbitrator,
                timeout=TIMEOUT,
                nonce=world.nonce,
                opening_ts=int(latest["timestamp"], 16),
                min_bond=MIN_BOND,
                bounty=BOUNTY,
            )

    market_id = "reality:0x" + asyncio.run(run()).hex()
    document = consensus_document(
        [result_dict(agent, outcome, conf) for agent, outcome, conf in votes],
        market_id=market_id,
        question=title,
        outcomes=outcomes or [],
    )
    document["market"]["values"] = values
    (world.replays / f"{market_id.split(':')[1]}.json").write_text(json.dumps(document))
    return market_id


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> RealityWorld:
    return RealityWorld(anvil, tmp_path)


def word(value: int) -> bytes:
    return value.to_bytes(32, "big")


def test_a_number_a_set_and_a_time_are_answered_final_and_claimed(
    world: RealityWorld, tmp_path: Path
) -> None:
    number = ask_value(
        world,
        QuestionKind.UINT,
        "How many ships docked in Rotterdam in May, in thousands?",
        [("alpha", "2.75", 0.9), ("beta", "2.75", 0.85), ("gamma", "3", 0.6)],
        values=NUMBER,
    )
    colours = ask_value(
        world,
        QuestionKind.MULTIPLE_SELECT,
        "Which colours does the new flag use?",
        [
            ("alpha", '["Red", "Blue"]', 0.9),
            ("beta", '["Red", "Blue"]', 0.8),
            ("gamma", '["Red"]', 0.6),
        ],
        outcomes=COLOURS,
        values={"kind": "set"},
    )
    launch = ask_value(
        world,
        QuestionKind.DATETIME,
        "On which day did the rocket launch?",
        [(agent, "2024-05-01", 0.9) for agent in ("alpha", "beta", "gamma")],
        values={"kind": "datetime", "precision": "d"},
    )
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}", source={"templates": [0, 1, 2, 3, 4]}
    )
    before = world.anvil.balance(OURS)

    one_pass(settings)

    store = open_store(settings)
    expected = {
        number: (word(2_750_000_000_000_000_000), "2.75", []),
        colours: (word(0b101), '["Red", "Blue"]', COLOURS),
        launch: (word(1_714_521_600), "2024-05-01", []),
    }
    for market_id, (answer, outcome, options) in expected.items():
        market = store.get_market(market_id)
        assert market.state == MarketState.SUBMITTED, (market_id, market.state)
        assert market.outcomes == options
        assert market.submission["our_outcome"] == outcome
        assert world.history(market_id) == [(OURS, INITIAL, answer)]
    assert store.get_market(number).details["value_format"] == NUMBER

    world.elapse(TIMEOUT + 1)
    one_pass(settings)
    for market_id, (_, outcome, _) in expected.items():
        assert store.get_market(market_id).state == MarketState.FINAL
        assert_settled_as(store, market_id, outcome)
        assert world.view(market_id).history_hash == bytes(32)  # claimed
    assert world.held_for_us() == 0
    # Three answers stood alone: each pays back its bond and the bounty, less only gas.
    assert world.anvil.balance(OURS) == before + 3 * BOUNTY - world.our_gas()
    assert world.reverted() == []
    store.engine.dispose()


def test_a_contested_value_goes_to_a_person_who_decides_a_value(
    world: RealityWorld, tmp_path: Path
) -> None:
    number = ask_value(
        world,
        QuestionKind.UINT,
        "What was the closing price, in euros?",
        [("alpha", "101.5", 0.7), ("beta", "99", 0.7), ("gamma", "120", 0.7)],
        values=NUMBER,
    )
    settings = world.config(f"sqlite:///{tmp_path / 'oracle.db'}", source={"templates": [1]})
    one_pass(settings)
    store = open_store(settings)
    assert store.get_market(number).state == MarketState.NEEDS_REVIEW
    assert world.history(number) == []  # nothing posted on a value nobody agreed on
    (item,) = store.reviews()
    with pytest.raises(StoreError, match=r"write it '101\.5', its canonical spelling"):
        store.decide_review(item.id, "101.50", "the exchange's page", "alice")
    with pytest.raises(StoreError, match="not a number written plainly"):
        store.decide_review(item.id, "YES", "the exchange's page", "alice")
    store.decide_review(item.id, "101.5", "the exchange's page", "alice")
    one_pass(settings)
    assert world.history(number) == [(OURS, INITIAL, word(101_500_000_000_000_000_000))]
    assert store.get_market(number).state == MarketState.SUBMITTED
    store.engine.dispose()
