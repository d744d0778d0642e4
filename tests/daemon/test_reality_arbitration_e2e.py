"""Arbitration by policy on the real RealityETH_v3_0 with Reality.eth's own Arbitrator
(flat/Arbitrator-development.sol from @reality.eth/contracts) as the question's
arbitrator, on anvil, replay agents: a bond war that reaches the threshold is offered to a
person, nothing is sent on one person's word (four-eyes), a second approves, the daemon
requests arbitration once paying the fee it read from the arbitrator, the arbitrator
rules, and the question is claimed: our balance exact to the wei."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from oracle.app import open_store
from oracle.chain.contracts import encode_call
from oracle.chain.intents import IntentState
from oracle.chain.txmanager import TxRequest
from oracle.core.lifecycle import MarketState
from oracle.errors import ArbitrationRefused
from oracle.store.repository import Store
from oracle.venues.reality.arbitration import (
    ARBITRATION_PREFIX,
    ARBITRATOR,
    ArbitrationRequester,
    deploy_reality_arbitrator,
)
from oracle.venues.reality.binding import AnswerLog, RealityETH
from oracle.venues.reality.rules import NULL_HASH

from ..anvil import DEV_KEYS, Anvil
from ..chain.helpers import manager_for
from .test_reality_e2e import AGREED, BOUNTY, INITIAL, NO_WORD, OTHER, OURS, YES_WORD, RealityWorld
from .venue_world import intent_keys, one_pass

FEE = 10**16  # 0.01 ETH: the Arbitrator's dispute fee, set by its owner
THRESHOLD = 16 * INITIAL  # arbitration once the next answer would need this much


class ArbitratedWorld(RealityWorld):
    """RealityWorld whose questions name Reality.eth's own Arbitrator."""

    async def _deploy(self) -> tuple[str, str]:
        reality, _ = await super()._deploy()
        async with manager_for(self.anvil.url) as owner:
            arbitrator = await deploy_reality_arbitrator(owner, reality, FEE, run="e2e")
        return reality, arbitrator

    def rule_for(self, market_id: str, answer: bytes, payee_if_wrong: str) -> None:
        """The arbitrator's owner rules `answer`, naming the last answer as Reality.eth
        checks it against the history hash."""
        logs: list[AnswerLog] = self._read("history", market_id)
        before = logs[-2].history_hash if len(logs) > 1 else NULL_HASH
        qid = bytes.fromhex(market_id.split(":")[1][2:])

        async def run() -> None:
            async with manager_for(self.anvil.url) as owner:
                intent = await owner.submit(
                    TxRequest(
                        key=f"rule:{market_id}",
                        to=self.arbitrator,
                        data=encode_call(
                            ARBITRATOR,
                            "assignWinnerAndSubmitAnswerByArbitrator",
                            qid,
                            answer,
                            payee_if_wrong,
                            before,
                            logs[-1].entry.answer,
                            logs[-1].entry.answerer,
                        ),
                    )
                )
                assert intent.state == IntentState.CONFIRMED, intent.error

        asyncio.run(run())

    def pending(self, market_id: str) -> bool:
        return self.view(market_id).pending_arbitration


@pytest.fixture
def world(anvil: Anvil, tmp_path: Path) -> ArbitratedWorld:
    return ArbitratedWorld(anvil, tmp_path)


def _fees_paid_to_arbitrator(world: RealityWorld) -> list[dict[str, Any]]:
    return [
        r
        for r in world.our_transactions()
        if (r.get("to") or "").lower() == world.arbitrator.lower()
    ]


def _arbitration_keys(store: Store) -> list[str]:
    return [k for k in intent_keys(store) if k.startswith(ARBITRATION_PREFIX)]


def test_a_bond_war_past_the_threshold_is_arbitrated_after_four_eyes_and_claimed(
    world: ArbitratedWorld, tmp_path: Path
) -> None:
    market_id = world.ask("Did the referendum pass?", AGREED)
    settings = world.config(
        f"sqlite:///{tmp_path / 'oracle.db'}",
        source={
            "arbitration": {
                "request": "after_review",
                "bond_threshold_wei": THRESHOLD,
                "max_fee_wei": 2 * FEE,
            }
        },
        defend=True,
        max_per_question_wei=40 * INITIAL,  # the threshold comes first, not the cap
    )
    before = world.anvil.balance(OURS)
    one_pass(settings)  # YES at INITIAL
    world.counter(market_id, NO_WORD)  # NO at 2x: the next bond (4x) is below the threshold
    one_pass(settings)  # superseded: defended (reset, researched again)
    one_pass(settings)  # YES at 4x
    store = open_store(settings)
    assert world.history(market_id)[-1] == (OURS, 4 * INITIAL, YES_WORD)
    assert world.counter(market_id, NO_WORD) == 8 * INITIAL  # the next bond would be 16x

    one_pass(settings)
    offered = store.get_market(market_id)
    assert offered.state == MarketState.DISPUTED
    assert offered.submission["challenge"] == "arbitrate"
    assert offered.submission["arbitration_fee"] == FEE
    assert offered.submission["arbitrator"].lower() == world.arbitrator.lower()
    assert "reaches the arbitration threshold" in store.audit(market_id)[-1].reason
    (item,) = store.reviews()
    assert any("arbitrator" in reason and str(FEE) in reason for reason in item.reasons)
    assert not world.pending(market_id)

    # One person's word pays nothing: the decision waits for a second.
    store.decide_review(item.id, "YES", "the electoral commission's results", "alice")
    assert store.review(item.id).status == "needs_approval"
    one_pass(settings)
    assert not world.pending(market_id)
    assert _arbitration_keys(store) == []
    assert store.get_market(market_id).state == MarketState.DISPUTED

    store.add_user("bob", "approver", "correct horse battery")
    assert store.approve_review(item.id, "bob").state == MarketState.CHALLENGING
    one_pass(settings)
    assert world.pending(market_id)
    assert store.get_market(market_id).state == MarketState.DISPUTED
    (paid,) = _fees_paid_to_arbitrator(world)
    assert int(paid["status"], 16) == 1
    assert _arbitration_keys(store) == [
        f"{ARBITRATION_PREFIX}31337:{world.reality.lower()}:{market_id.split(':')[1]}:{8 * INITIAL}"
    ]
    one_pass(settings)  # frozen: nothing more is sent
    assert len(_fees_paid_to_arbitrator(world)) == 1

    # The arbitrator rules YES: NO was wrong, so we (who paid) take the last answer's place.
    world.rule_for(market_id, YES_WORD, OURS)
    one_pass(settings)
    final = store.get_market(market_id)
    assert final.state == MarketState.FINAL
    assert store.audit(market_id)[-1].event == "dispute_rejected"
    assert world.view(market_id).history_hash == NULL_HASH  # claimed
    assert world.held_for_us() == 0  # withdrawn
    # The bounty and every bond (8x theirs in full: the final bond), less the 1/40 of each
    # earlier claimed bond; we paid INITIAL, 4x, the fee and gas.
    won = BOUNTY + 8 * INITIAL
    won += sum(b - b // 40 for b in (4 * INITIAL, 2 * INITIAL, INITIAL))
    assert world.anvil.balance(OURS) == (
        before - INITIAL - 4 * INITIAL - FEE + won - world.our_gas()
    )
    assert world.reverted() == []
    # The ruling is an entry of its own: the payee (we paid), no bond, the ruled answer.
    assert world.history(market_id)[-2:] == [(OTHER, 8 * INITIAL, NO_WORD), (OURS, 0, YES_WORD)]
    store.engine.dispose()


def test_the_fee_is_read_from_the_questions_arbitrator_and_a_fee_past_the_cap_is_refused(
    world: ArbitratedWorld,
) -> None:
    market_id = world.ask("Was the bridge reopened?", AGREED)
    qid = market_id.split(":")[1]
    bond = world.counter(market_id, YES_WORD)

    async def run() -> tuple[str, int, list[str]]:
        async with manager_for(world.anvil.url, key=DEV_KEYS[2]) as ours:
            reality = RealityETH(ours.pool, world.reality)
            capped = ArbitrationRequester(ours, reality, max_fee=FEE - 1)
            arbitrator, fee = await capped.fee(qid)
            refusals = []
            uncapped = ArbitrationRequester(ours, reality, max_fee=FEE)
            for requester, max_previous in ((capped, bond), (uncapped, 0)):
                try:
                    await requester.request(qid, max_previous)
                except ArbitrationRefused as refused:
                    refusals.append(refused.reason)
            return arbitrator, fee, refusals

    arbitrator, fee, refusals = asyncio.run(run())
    assert (arbitrator.lower(), fee) == (world.arbitrator.lower(), FEE)
    assert refusals == [
        f"the arbitrator's fee {FEE} wei is above the cap of {FEE - 1}",
        f"it moved on (bond 0 -> {bond} wei) since arbitration was decided",
    ]
    assert _fees_paid_to_arbitrator(world) == []
    assert not world.pending(market_id)


def test_an_arbitrator_that_names_no_fee_leaves_the_bond_policy_to_decide(
    anvil: Anvil, tmp_path: Path
) -> None:
    # The tests' own arbitrator has no getDisputeFee: nothing is offered, nothing paid.
    plain = RealityWorld(anvil, tmp_path)
    market_id = plain.ask("Did the museum reopen?", AGREED)
    settings = plain.config(
        f"sqlite:///{tmp_path / 'oracle.db'}",
        source={
            "arbitration": {
                "request": "after_review",
                "bond_threshold_wei": INITIAL,
                "max_fee_wei": FEE,
            }
        },
    )
    one_pass(settings)
    plain.counter(market_id, NO_WORD)
    one_pass(settings)
    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.state == MarketState.DISPUTED
    assert "challenge" not in market.submission
    assert "sends superseded answers to a person" in store.audit(market_id)[-1].reason
    assert _arbitration_keys(store) == []
    store.engine.dispose()
