"""A Reality.eth question finalized as "answered too soon" (0xff..fe), end to end on the
real RealityETH_v3_0 on anvil with replay agents: the daemon reads the reserved answer,
reopens the question (`reopenQuestion`, the same text, arbitrator, timeout, opening time
and minimum bond), answers the reopening as the same market, and claims it with the
bounty the reopening took over, to the wei; with `reopen: false` a person decides."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from oracle.app import open_store
from oracle.core.lifecycle import MarketState
from oracle.testing import consensus_document, result_dict
from oracle.venues.reality.binding import RealityETH
from oracle.venues.reality.reopen import REOPEN_PREFIX, reopened_as
from oracle.venues.reality.rules import NULL_HASH, TOO_SOON_ANSWER

from ..anvil import Anvil
from ..chain.helpers import manager_for
from .test_reality_e2e import (
    AGREED,
    BOUNTY,
    INITIAL,
    MIN_BOND,
    OTHER,
    OURS,
    TIMEOUT,
    YES_WORD,
    RealityWorld,
    assert_settled_as,
)
from .venue_world import intent_keys, one_pass


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> RealityWorld:
    return RealityWorld(anvil, tmp_path)


def _reopening(world: RealityWorld, market_id: str) -> bytes | None:
    async def run() -> bytes | None:
        async with manager_for(world.anvil.url) as reader:
            return await reopened_as(RealityETH(reader.pool, world.reality), market_id[8:])

    return asyncio.run(run())


def _record(world: RealityWorld, market_id: str, votes: list[tuple[str, str, float]]) -> None:
    """The agents' recorded answers to a question whose market offers TOO_EARLY."""
    document = consensus_document(
        [result_dict(agent, outcome, conf) for agent, outcome, conf in votes],
        market_id=market_id,
        question="Has the comet been sighted yet?",
        outcomes=["YES", "NO", "TOO_EARLY"],
    )
    (world.replays / f"{market_id[8:]}.json").write_text(json.dumps(document))


def _settled_too_soon(world: RealityWorld, market_id: str) -> None:
    assert world.counter(market_id, TOO_SOON_ANSWER) == MIN_BOND
    world.elapse(TIMEOUT + 1)
    view = world.view(market_id)
    assert view.best_answer == TOO_SOON_ANSWER
    assert view.finalize_ts <= view.now


def test_a_question_answered_too_soon_is_reopened_answered_there_and_claimed(
    world: RealityWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Did the new stadium open?", AGREED)
    _settled_too_soon(world, market_id)
    settings = world.config(f"sqlite:///{tmp_path / 'oracle.db'}")
    before = world.anvil.balance(OURS)

    one_pass(settings)  # the verdict meets a question settled too soon: reopened, reset
    store = open_store(settings)
    reopening = _reopening(world, market_id)
    assert reopening is not None
    reopened = world.view("reality:0x" + reopening.hex())
    original = world.view(market_id)
    assert (reopened.content_hash, reopened.arbitrator, reopened.timeout) == (
        original.content_hash,
        original.arbitrator,
        original.timeout,
    )
    assert (reopened.min_bond, reopened.bounty, original.bounty) == (MIN_BOND, BOUNTY, 0)
    assert "answered too soon; reopened as" in " ".join(a.reason for a in store.audit(market_id))
    assert [k for k in intent_keys(store) if k.startswith(REOPEN_PREFIX)] == [
        f"{REOPEN_PREFIX}31337:{world.reality.lower()}:{market_id[8:]}:0x{NULL_HASH.hex()}"
    ]

    one_pass(settings)  # the same market answers the reopening
    market = store.get_market(market_id)
    assert market.state == MarketState.SUBMITTED
    assert market.submission["question_id"] == "0x" + reopening.hex()
    reopened_id = "reality:0x" + reopening.hex()
    assert world.history(reopened_id) == [(OURS, INITIAL, YES_WORD)]
    assert world.history(market_id) == [(OTHER, MIN_BOND, TOO_SOON_ANSWER)]

    world.elapse(TIMEOUT + 1)
    one_pass(settings)
    assert store.get_market(market_id).state == MarketState.FINAL
    assert_settled_as(store, market_id, "YES")
    assert world.view(reopened_id).history_hash == NULL_HASH  # claimed
    assert world.held_for_us() == 0
    # Our bond came back with the bounty the reopening took over; we paid gas only.
    assert world.anvil.balance(OURS) == before + BOUNTY - world.our_gas()
    assert world.reverted() == []
    store.engine.dispose()


def test_with_reopen_off_a_question_settled_too_soon_goes_to_a_person(
    world: RealityWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Did the ferry resume service?", AGREED)
    _settled_too_soon(world, market_id)
    settings = world.config(f"sqlite:///{tmp_path / 'oracle.db'}", source={"reopen": False})
    one_pass(settings)
    one_pass(settings)
    store = open_store(settings)
    assert store.get_market(market_id).state == MarketState.DISPUTED
    assert "answered too soon and reopen is off" in store.audit(market_id)[-1].reason
    assert _reopening(world, market_id) is None
    assert world.our_transactions() == []
    store.engine.dispose()


def test_our_own_answered_too_soon_is_claimed_on_the_original_after_the_reopening(
    world: RealityWorld, tmp_path: Path
) -> None:
    too_early = [(agent, "TOO_EARLY", 0.9) for agent in ("alpha", "beta", "gamma")]
    market_id = world.ask("Has the comet been sighted yet?", AGREED)
    _record(world, market_id, too_early)
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}", source={"allow_unresolved": True}
    )
    before = world.anvil.balance(OURS)
    one_pass(settings)  # the agents find it too early: answered 0xff..fe with our bond
    assert world.history(market_id) == [(OURS, INITIAL, TOO_SOON_ANSWER)]
    world.elapse(TIMEOUT + 1)
    _record(world, market_id, AGREED)  # the comet is sighted: the agents now say YES
    one_pass(settings)  # settled too soon: reopened, reset
    one_pass(settings)  # answered YES on the reopening
    reopening = _reopening(world, market_id)
    assert reopening is not None
    reopened_id = "reality:0x" + reopening.hex()
    assert world.history(reopened_id) == [(OURS, INITIAL, YES_WORD)]

    world.elapse(TIMEOUT + 1)
    one_pass(settings)
    store = open_store(settings)
    assert store.get_market(market_id).state == MarketState.FINAL
    assert_settled_as(store, market_id, "YES")
    # Both questions claimed: our too-soon bond on the original, our YES and the bounty
    # (moved to the reopening) on the reopening; we paid gas only.
    assert world.view(market_id).history_hash == NULL_HASH
    assert world.view(reopened_id).history_hash == NULL_HASH
    assert world.held_for_us() == 0
    assert world.anvil.balance(OURS) == before + BOUNTY - world.our_gas()
    assert world.reverted() == []
    store.engine.dispose()
