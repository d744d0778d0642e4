"""End to end on UMA's ManagedOptimisticOracleV2 (UMIP-189) as this project's test double
of it (contracts/src/testing/ManagedOptimisticOracleV2Double.sol, standing for
UMAprotocol/managed-oracle at commit 6258c86) on anvil, with the daemon (replay agents): off
the proposer whitelist nothing is approved or sent and another's contradicting price opens a
disagreement item; on it, exactly one proposal, exactly its bond approved; a request
manager's custom bond above the cap refused before signing; the settlement left to the
resolver and followed."""

from __future__ import annotations

import asyncio
import logging
from dataclasses import replace
from pathlib import Path

import pytest

from oracle.app import open_store
from oracle.chain.contracts import Deployment
from oracle.chain.intents import IntentState
from oracle.core.ancillary import PRICE_SCALE
from oracle.core.lifecycle import MarketState
from oracle.daemon.metrics import DaemonMetrics
from oracle.errors import SetupError
from oracle.store.reviews import Seen
from oracle.venues.uma.binding import (
    MANAGED_OPTIMISTIC_ORACLE_V2,
    PROPOSE_PREFIX,
    TESTNET_ERC20,
    Erc20,
    ManagedOptimisticOracleV2,
    OptimisticOracleV2,
    RequestState,
    UmaProposer,
)
from oracle.venues.uma.stack import (
    UmaStack,
    deploy_managed_oracle,
    deploy_style_requester,
    deploy_uma_stack,
    manage_request,
)

from ..anvil import DEV_ADDRESSES, Anvil
from ..chain.helpers import manager_for
from .test_uma_e2e import (
    AGREED,
    BOND,
    FINAL_FEE,
    LIVENESS,
    OTHER,
    OTHER_KEY,
    OURS,
    REWARD,
    UmaWorld,
    assert_settled_as,
    call,
)
from .venue_world import gauge, intent_keys, one_pass

CUSTOM_LIVENESS = 900


class ManagedWorld(UmaWorld):
    """UmaWorld on the managed oracle's double, its default proposer whitelist `proposers`;
    the deployer (DEV_ADDRESSES[0]) is its request manager and resolver."""

    def __init__(self, anvil: Anvil, tmp_path: Path, proposers: list[str] | None) -> None:
        self.proposers = proposers
        super().__init__(anvil, tmp_path)

    async def _deploy(self) -> tuple[UmaStack, str, Deployment]:
        async with manager_for(self.anvil.url) as deployer:
            block = int(self.anvil.rpc("eth_blockNumber"), 16)
            plain = await deploy_uma_stack(deployer, liveness=LIVENESS, final_fee=FINAL_FEE)
            managed = await deploy_managed_oracle(
                deployer, plain, proposers=self.proposers, liveness=LIVENESS
            )
            stack = replace(plain, optimistic_oracle=managed.oracle)
            requester = await deploy_style_requester(deployer, stack)
            for account in (requester, OURS, OTHER, DEV_ADDRESSES[0]):
                await call(
                    deployer, TESTNET_ERC20, stack.currency, "allocateTo", account, 20 * BOND
                )
            deployment = Deployment(
                chain_id=deployer.chain_id,
                block_number=block,
                deployer=deployer.address,
                contracts=stack.contracts(),
            )
        return stack, requester, deployment

    def manage(self, market_id: str, function: str, *args: object) -> None:
        """A request manager's setting for the market's question (bond, liveness, whitelist)."""
        key = self.keys[market_id]

        async def run() -> None:
            async with manager_for(self.anvil.url) as manager:
                await manage_request(
                    manager,
                    self.stack.optimistic_oracle,
                    function,
                    key.requester,
                    key.ancillary_data,
                    *args,
                )

        asyncio.run(run())

    def resolve(self, market_id: str) -> None:
        """The resolver role settles the market's request."""

        async def run() -> None:
            async with manager_for(self.anvil.url) as resolver:
                await call(
                    resolver,
                    MANAGED_OPTIMISTIC_ORACLE_V2,
                    self.stack.optimistic_oracle,
                    "settle",
                    *self.keys[market_id].args,
                )

        asyncio.run(run())

    def allowance(self) -> int:
        async def run() -> int:
            async with manager_for(self.anvil.url) as reader:
                token = Erc20(reader.pool, self.stack.currency)
                return await token.allowance(OURS, self.stack.optimistic_oracle)

        return asyncio.run(run())


def test_off_the_whitelist_nothing_is_sent_and_a_wrong_proposal_opens_an_item(
    anvil: Anvil, tmp_path: Path, database_url: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    world = ManagedWorld(anvil, tmp_path, proposers=[OTHER])
    market_id = world.ask("Did the launch happen before the deadline?", AGREED)
    settings = world.config(database_url, source={"managed": True})
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    # One line at start: the signer, the oracle and that it may not propose.
    [line] = [r for r in caplog.records if getattr(r, "event", "") == "uma.proposer_whitelist"]
    fields = line.fields  # type: ignore[attr-defined]
    assert (fields["signer"], fields["oracle"]) == (OURS, world.stack.optimistic_oracle)
    assert fields["may_propose"] is False
    store = open_store(settings)
    market = store.get_market(market_id)
    assert market.decided_outcome == "YES"
    assert market.state == MarketState.FAILED_RETRY  # waits for a whitelisted proposer
    assert "ProposerNotWhitelisted" in store.audit(market_id)[-1].reason
    assert "second opinion" in store.audit(market_id)[-1].reason
    assert world.our_transactions() == []  # no approval, no proposal
    assert world.allowance() == 0
    refusals = gauge(metrics, "oracle_bond_refusals_total", venue="uma", reason="not_whitelisted")
    assert refusals == 1
    assert not [k for k in intent_keys(store) if k.startswith(PROPOSE_PREFIX)]

    # A whitelisted proposer's wrong price: compared with ours, a disagreement item.
    async def propose_no() -> None:
        async with manager_for(world.anvil.url, key=OTHER_KEY) as other:
            oracle = OptimisticOracleV2(other.pool, world.stack.optimistic_oracle)
            managed = ManagedOptimisticOracleV2(other.pool, world.stack.optimistic_oracle)
            proposal = await UmaProposer(other, oracle, managed=managed).propose(
                world.keys[market_id], 0
            )
            assert proposal.intent is not None
            assert proposal.intent.state == IntentState.CONFIRMED

    asyncio.run(propose_no())
    metrics = DaemonMetrics()
    one_pass(settings, metrics)

    market = store.get_market(market_id)
    assert market.state == MarketState.SUBMITTED
    assert market.submission["proposed_by_other"] is True
    assert (market.submission["their_outcome"], market.submission["our_outcome"]) == (
        "NO",
        "YES",
    )
    [item] = store.reviews()
    assert item.market_id == market_id
    assert "proposed NO (price 0)" in item.reasons[0]
    assert gauge(metrics, "oracle_venue_disagreements_total", venue="uma") == 1
    assert world.our_transactions() == []  # still nothing of ours on chain
    assert world.reverted() == []
    store.engine.dispose()


def test_on_the_whitelist_one_proposal_a_custom_bond_above_the_cap_refused_settled_by_the_resolver(
    anvil: Anvil, tmp_path: Path, database_url: str
) -> None:
    world = ManagedWorld(anvil, tmp_path, proposers=[OURS, OTHER])
    agreed = world.ask("Did the launch happen before the deadline?", AGREED)
    costly = world.ask("Did the costly event happen?", AGREED)
    # The request manager: a shorter liveness for one, a bond above our cap for the other
    # (getRequest still shows the requester's 100 before a proposal).
    world.manage(agreed, "requestManagerSetCustomLiveness", CUSTOM_LIVENESS)
    world.manage(costly, "requestManagerSetBond", world.stack.currency, 5 * BOND)
    assert world.view(costly).bond == BOND
    settings = world.config(database_url, max_bond_per_request=300)  # managed: detected
    before = world.balance(OURS)
    metrics = DaemonMetrics()

    one_pass(settings, metrics)

    store = open_store(settings)
    view = world.view(agreed)
    assert view.state == RequestState.PROPOSED
    assert (view.proposer, view.proposed_price) == (OURS, PRICE_SCALE)
    assert store.get_market(agreed).window_ends_at == view.expiration_time
    assert world.proposals(agreed) == 1
    # The costly one: refused before signing, by the bond it would really have cost.
    refused = store.get_market(costly)
    assert refused.state == MarketState.FAILED_RETRY
    assert "bond refused (per_request_cap)" in store.audit(costly)[-1].reason
    assert world.view(costly).state == RequestState.REQUESTED
    assert world.proposals(costly) == 0
    assert gauge(metrics, "oracle_bond_refusals_total", venue="uma", reason="per_request_cap") == 1
    assert world.balance(OURS) == before - BOND - FINAL_FEE
    assert world.allowance() == 0  # exactly the bond was approved, and taken
    assert len(world.our_transactions()) == 2  # approve + proposePrice

    # Past its (custom) liveness: not final, nothing sent; the resolver settles it.
    world.anvil.rpc("evm_increaseTime", CUSTOM_LIVENESS + 1)
    world.anvil.mine()
    assert world.view(agreed).state == RequestState.EXPIRED
    one_pass(settings)
    assert store.get_market(agreed).state == MarketState.SUBMITTED
    assert len(world.our_transactions()) == 2  # never a settle of ours
    world.resolve(agreed)
    one_pass(settings)
    assert store.get_market(agreed).state == MarketState.FINAL
    assert_settled_as(store, agreed, "YES")
    assert world.balance(OURS) == before + REWARD
    assert len(world.our_transactions()) == 2
    assert world.reverted() == []
    store.engine.dispose()


def test_a_managed_setting_that_does_not_match_the_contract_stops_the_start(
    anvil: Anvil, tmp_path: Path, database_url: str
) -> None:
    world = ManagedWorld(anvil, tmp_path, proposers=None)
    settings = world.config(database_url, source={"managed": False})
    with pytest.raises(SetupError, match=r"market_sources\[uma\]\.managed.*is a ManagedOptimistic"):
        one_pass(settings)


def test_past_its_liveness_an_unsettled_proposal_is_not_final_and_a_confirmed_dispute_goes_out(
    anvil: Anvil, tmp_path: Path, database_url: str
) -> None:
    """The managed oracle leaves a proposal disputable until its resolver settles it: past
    the liveness the market stays submitted, and a person's confirmation still disputes."""
    world = ManagedWorld(anvil, tmp_path, proposers=[OTHER])
    market_id = world.ask("Did the other proposer get it wrong?", AGREED)

    async def propose_no() -> None:
        async with manager_for(world.anvil.url, key=OTHER_KEY) as other:
            oracle = OptimisticOracleV2(other.pool, world.stack.optimistic_oracle)
            await UmaProposer(other, oracle).propose(world.keys[market_id], 0)

    asyncio.run(propose_no())
    settings = world.config(database_url, source={"dispute": "after_review"})
    one_pass(settings)
    store = open_store(settings)
    assert store.get_market(market_id).submission["challenge"] == "dispute"
    [item] = store.reviews()

    world.pass_time()
    assert world.view(market_id).state == RequestState.EXPIRED
    one_pass(settings)
    assert store.get_market(market_id).state == MarketState.SUBMITTED  # not final: unsettled
    assert world.our_transactions() == []

    latest = store.latest_consensus(market_id)
    assert latest is not None
    store.decide_review(
        item.id, "YES", "the launch happened", "alice", seen=Seen(latest.id, latest.checksum)
    )
    before = world.balance(OURS)
    one_pass(settings)
    view = world.view(market_id)
    assert (view.state, view.disputer, view.proposer) == (RequestState.DISPUTED, OURS, OTHER)
    assert store.get_market(market_id).state == MarketState.DISPUTED
    assert world.balance(OURS) == before - BOND - FINAL_FEE
    assert world.allowance() == 0  # exactly the dispute's bond was approved
    assert len(world.our_transactions()) == 2  # approve + disputePrice
    assert world.reverted() == []
    store.engine.dispose()
