"""UMA's real Optimistic Oracle V3 (compiled from @uma/core) on anvil: asserting a claim
that names its proof exactly once, settling it after liveness, several claims in one
`multicall` (and what that saves), a dispute followed to the vote, and disputing
another's assertion once (its own bond), never after its liveness."""

from __future__ import annotations

import asyncio

import pytest

from oracle.chain.intents import IntentState
from oracle.core.claims import assertion_claim
from oracle.errors import BondShortfall
from oracle.venues.uma.binding import (
    MAX_UINT256,
    MOCK_ORACLE_ANCILLARY,
    OPTIMISTIC_ORACLE_V3,
    Erc20,
)
from oracle.venues.uma.binding_v3 import (
    ASSERT_TRUTH,
    AssertionState,
    Claim,
    OptimisticOracleV3,
    UmaAsserter,
)
from oracle.venues.uma.stack import deploy_optimistic_oracle_v3
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory
from tests.chain.helpers import manager_for, sender_txs
from tests.chain.test_uma import FINAL_FEE, LIVENESS, OTHER, OURS, call, reverted, setup

MINIMUM_BOND = 2 * FINAL_FEE  # OOv3 burns half a disputed bond: minimum = final fee / 50 %


def claim_for(currency: str, market: str, *, bond: int = MINIMUM_BOND) -> Claim:
    text = assertion_claim(
        market_id=market,
        question=f"Did event {market} happen before 1 June?",
        outcome="YES",
        proof_checksum="cd" * 32,
    )
    return Claim(text=text, bond=bond, liveness=LIVENESS, currency=currency)


async def chain_time(anvil: Anvil) -> int:
    block = await asyncio.to_thread(anvil.rpc, "eth_getBlockByNumber", "latest", False)
    return int(block["timestamp"], 16)


async def deploy(anvil: Anvil, fund: dict[str, int]) -> tuple[str, str, str]:
    """(OOv3, bond currency, mock vote) with the accounts in `fund` holding the currency."""
    stack = await setup(anvil, fund=fund)
    async with manager_for(anvil.url) as deployer:
        oracle = await deploy_optimistic_oracle_v3(deployer, stack, liveness=LIVENESS)
    return oracle, stack.currency, stack.mock_oracle


def test_assert_once_then_settle_true_after_liveness(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        address, currency, _ = await deploy(anvil, {OURS: 10 * MINIMUM_BOND})
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            oracle = OptimisticOracleV3(manager.pool, address)
            assert await oracle.minimum_bond(currency) == MINIMUM_BOND
            assert await oracle.default_currency() == currency
            token = Erc20(manager.pool, currency)
            before = await token.balance_of(OURS)
            asserter = UmaAsserter(manager, oracle)
            claim = claim_for(currency, "m1")
            asserted = await asserter.assert_truth(claim)
            assert asserted.intent.state == IntentState.CONFIRMED
            assert asserted.intent.subjects == (asserter.assertion_key(claim),)
            made = asserted.assertion
            assert made is not None
            assert made.claim == claim.text
            assert b"Proof: sha256:" + b"cd" * 32 in made.claim  # the proof, from the chain
            assert made.tx_hash == asserted.intent.inclusion.tx_hash  # type: ignore[union-attr]
            view = await oracle.get_assertion(made.assertion_id)
            assert view.asserter == OURS
            assert view.bond == MINIMUM_BOND
            assert view.identifier.rstrip(b"\0") == ASSERT_TRUTH.encode()
            assert view.state(await chain_time(anvil)) == AssertionState.ASSERTED
            assert await token.balance_of(OURS) == before - MINIMUM_BOND
            assert await token.allowance(OURS, address) == 0  # exactly the bond, used up
            assert len(sender_txs(anvil, OURS)) == 2  # approve + assertTruth

            # Again: the confirmed intent, nothing sent.
            assert (await asserter.assert_truth(claim)).intent == asserted.intent
            # The intents lost (a new store): its own AssertionMade event is found and the
            # claim recorded as skipped; a second bond is never posted.
            async with manager_for(anvil.url, key=DEV_KEYS[2]) as amnesiac:
                lost = UmaAsserter(amnesiac, OptimisticOracleV3(amnesiac.pool, address))
                again = await lost.assert_truth(claim)
                assert again.intent.state == IntentState.SKIPPED
                assert again.assertion == made
            assert len(sender_txs(anvil, OURS)) == 2

            assert await asserter.settle(made.assertion_id, await chain_time(anvil)) is None
            anvil.rpc("evm_increaseTime", LIVENESS + 1)
            anvil.mine()
            now = await chain_time(anvil)
            assert (await oracle.get_assertion(made.assertion_id)).state(now) == (
                AssertionState.EXPIRED
            )
            settled = await asserter.settle(made.assertion_id, now)
            assert settled is not None
            assert settled.state == IntentState.CONFIRMED
            view = await oracle.get_assertion(made.assertion_id)
            assert view.settled
            assert view.settlement_resolution
            assert await token.balance_of(OURS) == before  # the bond back
            assert await asserter.settle(made.assertion_id, now) == settled  # once
        assert reverted(anvil) == []

    asyncio.run(run())


def test_a_bond_short_of_funds_is_refused_before_anything_is_signed(
    anvil_factory: AnvilFactory,
) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        address, currency, _ = await deploy(anvil, {OURS: MINIMUM_BOND - 1})
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            asserter = UmaAsserter(manager, OptimisticOracleV3(manager.pool, address))
            with pytest.raises(BondShortfall, match="1 short"):
                await asserter.assert_truth(claim_for(currency, "m1"))
        assert sender_txs(anvil, OURS) == []

    asyncio.run(run())


def test_several_claims_in_one_multicall_cost_less_gas(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        address, currency, _ = await deploy(anvil, {OURS: 20 * MINIMUM_BOND})
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            oracle = OptimisticOracleV3(manager.pool, address)
            asserter = UmaAsserter(manager, oracle)
            singles = [
                await asserter.assert_truth(claim_for(currency, f"single-{i}")) for i in range(3)
            ]
            single_gas = sum(s.intent.inclusion.gas_used for s in singles[1:])  # type: ignore[union-attr]
            # The first single paid for the allowance's cold slot: compare like with like.
            claims = [claim_for(currency, f"batch-{i}") for i in range(2)]
            batch = await asserter.assert_many(claims, "b1")
            assert {b.intent.key for b in batch} == {"uma-assert-batch:b1"}
            assert all(b.assertion is not None for b in batch)
            assert [b.assertion.claim for b in batch] == [c.text for c in claims]  # type: ignore[union-attr]
            for result in batch:
                view = await oracle.get_assertion(result.assertion.assertion_id)  # type: ignore[union-attr]
                assert view.asserter == OURS  # msg.sender kept through multicall's delegatecall
                assert view.asserting_caller == OURS
            batch_gas = batch[0].intent.inclusion.gas_used  # type: ignore[union-attr]
            assert batch_gas < single_gas  # two claims, one base transaction cost
            # A batch whose claims were all asserted already sends nothing.
            again = await asserter.assert_many(claims, "b2")
            assert again[0].intent.state == IntentState.SKIPPED
            # A claim asserted alone is left out of a later batch.
            mixed = [claims[0], claim_for(currency, "batch-new")]
            done = await asserter.assert_many(mixed, "b3")
            assert done[0].assertion == batch[0].assertion
            assert done[1].assertion is not None
            assert done[1].intent.state == IntentState.CONFIRMED
            # Each bond approves exactly what it needs: an approval before each of the three
            # singles, the batch and the later claim.
            assert len(sender_txs(anvil, OURS)) == 2 * 3 + 2 + 2
        assert reverted(anvil) == []

    asyncio.run(run())


def test_a_disputed_assertion_settles_by_the_vote(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        funds = {OURS: 10 * MINIMUM_BOND, OTHER: 10 * MINIMUM_BOND}
        address, currency, mock_vote = await deploy(anvil, funds)
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            oracle = OptimisticOracleV3(manager.pool, address)
            asserter = UmaAsserter(manager, oracle)
            made = (await asserter.assert_truth(claim_for(currency, "contested"))).assertion
            assert made is not None
            assertion_id = bytes.fromhex(made.assertion_id[2:])
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as other:
            await call(
                other, "approve", "uma/TestnetERC20", currency, "approve", address, MAX_UINT256
            )
            await call(
                other,
                "dispute",
                OPTIMISTIC_ORACLE_V3,
                address,
                "disputeAssertion",
                assertion_id,
                OTHER,
            )
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            oracle = OptimisticOracleV3(manager.pool, address)
            asserter = UmaAsserter(manager, oracle)
            view = await oracle.get_assertion(made.assertion_id)
            assert view.disputer == OTHER
            now = await chain_time(anvil)
            assert view.state(now) == AssertionState.DISPUTED
            assert await asserter.settle(made.assertion_id, now) is None  # no vote yet
            # The vote (UMA's MockOracleAncillary) says true: the asserter wins.
            stamp = await oracle.read("stampAssertion", assertion_id)
            async with manager_for(anvil.url) as deployer:
                await call(
                    deployer,
                    "vote",
                    MOCK_ORACLE_ANCILLARY,
                    mock_vote,
                    "pushPrice",
                    ASSERT_TRUTH.encode().ljust(32, b"\0"),
                    view.assertion_time,
                    stamp,
                    10**18,
                )
            settled = await asserter.settle(made.assertion_id, await chain_time(anvil))
            assert settled is not None
            assert settled.state == IntentState.CONFIRMED
            view = await oracle.get_assertion(made.assertion_id)
            assert view.settled
            assert view.settlement_resolution
            token = Erc20(manager.pool, currency)
            # Both bonds, less the half of one burned to the Store.
            assert await token.balance_of(OURS) == 10 * MINIMUM_BOND + MINIMUM_BOND // 2
        assert DEV_ADDRESSES[2] == OURS
        # Only the settle attempted before the vote would have reverted: it was not sent.
        assert reverted(anvil) == []

    asyncio.run(run())


def test_a_dispute_posts_the_assertions_bond_once_and_never_goes_out_late(
    anvil_factory: AnvilFactory,
) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        funds = {OURS: 10 * MINIMUM_BOND, OTHER: 10 * MINIMUM_BOND}
        address, currency, _ = await deploy(anvil, funds)
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as other:
            theirs = UmaAsserter(other, OptimisticOracleV3(other.pool, address))
            made = [
                (await theirs.assert_truth(claim_for(currency, m, bond=bond))).assertion
                for m, bond in (("wrong", 2 * MINIMUM_BOND), ("late", MINIMUM_BOND))
            ]
        wrong, late = (m.assertion_id for m in made if m is not None)
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            oracle = OptimisticOracleV3(manager.pool, address)
            token = Erc20(manager.pool, currency)
            before = await token.balance_of(OURS)
            disputer = UmaAsserter(manager, oracle)
            intent = await disputer.dispute(wrong)
            assert intent.state == IntentState.CONFIRMED
            assert intent.subjects == (disputer.dispute_key(wrong),)
            view = await oracle.get_assertion(wrong)
            assert (view.disputer, view.asserter) == (OURS, OTHER)
            assert not view.disputable(await chain_time(anvil))
            # The assertion's own bond (not the minimum), in its currency, once.
            assert await token.balance_of(OURS) == before - 2 * MINIMUM_BOND
            assert await oracle.disputed_by(OURS) == [wrong]
            assert await disputer.dispute(wrong) == intent  # again: the confirmed intent
            # The intents lost (a new store): the assertion is disputed already, recorded
            # as skipped; no second bond.
            async with manager_for(anvil.url, key=DEV_KEYS[2]) as amnesiac:
                lost = UmaAsserter(amnesiac, OptimisticOracleV3(amnesiac.pool, address))
                assert (await lost.dispute(wrong)).state == IntentState.SKIPPED
            assert len(sender_txs(anvil, OURS)) == 2  # approve (once) + disputeAssertion

            # Past its liveness an assertion cannot be disputed: skipped, nothing sent.
            anvil.rpc("evm_increaseTime", LIVENESS + 1)
            anvil.mine()
            assert (await disputer.dispute(late)).state == IntentState.SKIPPED
            assert await oracle.disputed_by(OURS) == [wrong]
            assert len(sender_txs(anvil, OURS)) == 2
        assert reverted(anvil) == []

    asyncio.run(run())
