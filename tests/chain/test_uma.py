"""UMA's real Optimistic Oracle V2 (compiled from @uma/core) on anvil: discovering requests
asked the way Polymarket's adapter asks them, proposing through the TxManager exactly once,
a request someone else proposed first, the bond currency, settling after liveness."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from oracle.chain.checkpoint import InMemoryCheckpointStore
from oracle.chain.contracts import encode_call
from oracle.chain.intents import InMemoryIntentStore, Intent, IntentState
from oracle.chain.settings import ScannerSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.core.ancillary import PRICE_SCALE, TOO_EARLY_PRICE, parse_ancillary
from oracle.errors import BondShortfall, TxError
from oracle.venues.uma.binding import (
    MAX_UINT256,
    MOCK_ORACLE_ANCILLARY,
    OPTIMISTIC_ORACLE_V2,
    PROPOSE_PREFIX,
    TESTNET_ERC20,
    YES_OR_NO_QUERY,
    Erc20,
    OptimisticOracleV2,
    PriceRequest,
    RequestKey,
    RequestSource,
    RequestState,
    UmaProposer,
    identifier_bytes,
)
from oracle.venues.uma.stack import UmaStack, deploy_uma_stack
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory
from tests.chain.helpers import manager_for, mining, sender_txs

LIVENESS = 7200
FINAL_FEE = 5 * 10**18
BOND = 100 * 10**18
REWARD = 2 * 10**18
REQUESTER, OURS, OTHER = DEV_ADDRESSES[1], DEV_ADDRESSES[2], DEV_ADDRESSES[3]
INITIALIZER = DEV_ADDRESSES[1][2:].lower()


def ancillary(title: str) -> bytes:
    """Ancillary data as Polymarket's adapter writes it (initializer appended)."""
    text = (
        f'q: title: {title}, description: This market will resolve to "Yes" if it does. '
        "res_data: p1: 0, p2: 1, p3: 0.5. Where p1 corresponds to No, p2 to Yes, p3 to "
        "unknown/50-50."
    )
    return f"{text},initializer:{INITIALIZER}".encode()


async def call(manager: TxManager, key: str, name: str, to: str, function: str, *args: Any) -> None:
    intent = await manager.submit(
        TxRequest(key=key, to=to, data=encode_call(name, function, *args))
    )
    assert intent.state == IntentState.CONFIRMED, intent.error


async def ask(requester: TxManager, stack: UmaStack, title: str, *, bond: int = BOND) -> RequestKey:
    """requestPrice + setEventBased + setBond from the requester, as the adapter does."""
    block = await requester.pool.call("eth_getBlockByNumber", lambda w3: w3.eth.get_block("latest"))
    key = RequestKey(
        requester.address,
        identifier_bytes(YES_OR_NO_QUERY),
        int(block["timestamp"]),
        ancillary(title),
    )
    oo = stack.optimistic_oracle
    tag = key.id_hex
    await call(requester, f"approve:{tag}", TESTNET_ERC20, stack.currency, "approve", oo, REWARD)
    await call(
        requester,
        f"request:{tag}",
        OPTIMISTIC_ORACLE_V2,
        oo,
        "requestPrice",
        key.identifier,
        key.timestamp,
        key.ancillary_data,
        stack.currency,
        REWARD,
    )
    await call(requester, f"event:{tag}", OPTIMISTIC_ORACLE_V2, oo, "setEventBased", *key.args[1:])
    await call(requester, f"bond:{tag}", OPTIMISTIC_ORACLE_V2, oo, "setBond", *key.args[1:], bond)
    return key


async def setup(anvil: Anvil, *, fund: dict[str, int] | None = None) -> UmaStack:
    async with manager_for(anvil.url) as deployer:
        stack = await deploy_uma_stack(deployer, liveness=LIVENESS, final_fee=FINAL_FEE)
        for account, amount in (fund or {REQUESTER: 10 * REWARD, OURS: 10 * BOND}).items():
            await call(
                deployer,
                f"fund:{account}",
                TESTNET_ERC20,
                stack.currency,
                "allocateTo",
                account,
                amount,
            )
    return stack


def reverted(anvil: Anvil) -> list[dict[str, Any]]:
    return [r for r in anvil.receipts_in_chain() if int(r["status"], 16) != 1]


async def discover(manager: TxManager, stack: UmaStack) -> list[PriceRequest]:
    """The requester's requests through RequestSource, delivered once, parsed."""
    source = RequestSource(
        manager.pool,
        stack.optimistic_oracle,
        InMemoryCheckpointStore(),
        ScannerSettings(confirmations=0),
        requesters=[REQUESTER],
    )
    handled: list[PriceRequest] = []

    async def handler(requests: list[PriceRequest]) -> None:
        handled.extend(requests)

    found = await source.poll(handler)
    assert handled == found
    assert await source.poll() == []  # delivered once
    assert found[0].currency == stack.currency
    assert found[0].reward == REWARD
    assert found[0].final_fee == FINAL_FEE
    question = found[0].key.question()
    assert question.title == "Will it rain in Paris on 1 June?"
    assert question.initializer == REQUESTER.lower()
    view = await OptimisticOracleV2(manager.pool, stack.optimistic_oracle).get_request(found[0].key)
    assert view.state == RequestState.REQUESTED
    assert view.event_based
    assert (view.bond, view.final_fee, view.reward) == (BOND, FINAL_FEE, REWARD)
    return found


async def settle_after_liveness(anvil: Anvil, proposer: UmaProposer, request: RequestKey) -> None:
    assert await proposer.settle(request) is None  # not settleable during liveness
    anvil.rpc("evm_increaseTime", LIVENESS + 1)
    anvil.mine()
    oracle = proposer.oracle
    assert await oracle.get_state(request) == RequestState.EXPIRED
    assert await oracle.has_price(request)
    settled = await proposer.settle(request)
    assert settled is not None
    assert settled.state == IntentState.CONFIRMED
    view = await oracle.get_request(request)
    assert view.state == RequestState.SETTLED
    assert view.settled
    assert view.resolved_price == PRICE_SCALE
    assert await proposer.settle(request) == settled  # once


def test_discover_parse_propose_once_and_settle(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        stack = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
            first = await ask(requester, stack, "Will it rain in Paris on 1 June?")
            second = await ask(requester, stack, "Will it snow in Oslo on 1 June?")
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            found = await discover(manager, stack)
            assert [r.key for r in found] == [first, second]
            price = found[0].key.question().price_for("YES")
            assert price == PRICE_SCALE

            oracle = OptimisticOracleV2(manager.pool, stack.optimistic_oracle)
            token = Erc20(manager.pool, stack.currency)
            before = await token.balance_of(OURS)
            proposer = UmaProposer(manager, oracle)
            proposal = await proposer.propose(first, price)
            assert proposal.intent is not None
            assert proposal.intent.state == IntentState.CONFIRMED
            assert proposal.intent.subjects == (proposer.proposal_key(first),)
            assert proposal.ours(OURS)
            assert proposal.request.state == RequestState.PROPOSED
            assert proposal.request.proposed_price == PRICE_SCALE
            assert await token.balance_of(OURS) == before - BOND - FINAL_FEE
            # Exactly what the bond needed was approved, and the proposal used it up.
            assert await token.allowance(OURS, stack.optimistic_oracle) == 0
            assert len(sender_txs(anvil, OURS)) == 2  # approve + proposePrice

            # The same request again: the confirmed intent, nothing sent.
            assert (await proposer.propose(first, price)).intent == proposal.intent
            # The intents lost (a new store): the pre-send check finds it proposed and
            # records a skipped intent; nothing is signed, so nothing reverts.
            async with manager_for(anvil.url, key=DEV_KEYS[2]) as amnesiac:
                lost = UmaProposer(amnesiac, OptimisticOracleV2(amnesiac.pool, oracle.address))
                skipped = await lost.propose(first, price)
                assert skipped.intent is not None
                assert skipped.intent.state == IntentState.SKIPPED
                assert skipped.ours(OURS)
            assert len(sender_txs(anvil, OURS)) == 2

            # A second proposal approves exactly its own bond again (never unlimited).
            await proposer.propose(second, 0)
            assert len(sender_txs(anvil, OURS)) == 4
            assert await token.allowance(OURS, stack.optimistic_oracle) == 0

            await settle_after_liveness(anvil, proposer, first)
            # Bond and final fee back, and the reward; the second's bond still posted.
            assert await token.balance_of(OURS) == before - BOND - FINAL_FEE + REWARD
            assert reverted(anvil) == []

    asyncio.run(run())


def test_a_request_proposed_first_by_someone_else_is_recorded_not_sent(
    anvil_factory: AnvilFactory,
) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        stack = await setup(anvil, fund={REQUESTER: 10 * REWARD, OURS: 10 * BOND, OTHER: 10 * BOND})
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
            request = await ask(requester, stack, "Will the other proposer be first?")
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as other:
            theirs = UmaProposer(other, OptimisticOracleV2(other.pool, stack.optimistic_oracle))
            first = await theirs.propose(request, 0)
            assert first.intent is not None
            assert first.intent.state == IntentState.CONFIRMED
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            oracle = OptimisticOracleV2(manager.pool, stack.optimistic_oracle)
            proposer = UmaProposer(manager, oracle)
            proposal = await proposer.propose(request, PRICE_SCALE)
            assert proposal.intent is not None
            assert proposal.intent.state == IntentState.SKIPPED
            assert not proposal.ours(OURS)
            assert proposal.request.proposer == OTHER
            assert proposal.request.proposed_price == 0
            assert proposal.request.state == RequestState.PROPOSED
            # Recorded under the request's key: asked again, the same skipped intent.
            assert (await proposer.propose(request, PRICE_SCALE)).intent == proposal.intent
        assert sender_txs(anvil, OURS) == []  # no approve, no proposal, nothing reverted
        assert reverted(anvil) == []

    asyncio.run(run())


def test_bond_balance_standing_allowance_and_too_early(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        stack = await setup(anvil, fund={REQUESTER: 10 * REWARD, OURS: BOND})  # fee short
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
            request = await ask(requester, stack, "Is the bond covered?")
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            oracle = OptimisticOracleV2(manager.pool, stack.optimistic_oracle)
            # A standing allowance configured above one bond: approved once, used twice.
            standing = 3 * (BOND + FINAL_FEE)
            proposer = UmaProposer(manager, oracle, allowance=standing)
            with pytest.raises(BondShortfall, match=f"{FINAL_FEE} short") as raised:
                await proposer.propose(request, PRICE_SCALE)
            assert raised.value.needed == BOND + FINAL_FEE
            assert raised.value.balance == BOND
            assert raised.value.token == stack.currency
            assert await manager.intent(proposer.proposal_key(request)) is None
            with pytest.raises(TxError, match="too-early price is never proposed"):
                await proposer.propose(request, TOO_EARLY_PRICE)
            assert sender_txs(anvil, OURS) == []
            # Funded: the standing allowance is approved, and the proposal takes its bond.
            async with manager_for(anvil.url) as deployer:
                await call(
                    deployer,
                    "top-up",
                    TESTNET_ERC20,
                    stack.currency,
                    "allocateTo",
                    OURS,
                    FINAL_FEE + BOND + FINAL_FEE,
                )
            proposal = await proposer.propose(request, PRICE_SCALE)
            assert proposal.intent is not None
            assert proposal.intent.state == IntentState.CONFIRMED
            token = Erc20(manager.pool, stack.currency)
            assert await token.allowance(OURS, oracle.address) == standing - BOND - FINAL_FEE
            assert len(sender_txs(anvil, OURS)) == 2  # approve + proposePrice
            async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
                another = await ask(requester, stack, "Is the standing allowance used again?")
            await proposer.propose(another, 0)
            assert len(sender_txs(anvil, OURS)) == 3  # no second approve
            assert await token.allowance(OURS, oracle.address) == standing - 2 * (BOND + FINAL_FEE)
        assert reverted(anvil) == []

    asyncio.run(run())


def test_the_ancillary_data_round_trips_through_the_event(anvil_factory: AnvilFactory) -> None:
    """The bytes the requester sent are the bytes the scanner hands over, and parse."""
    anvil = anvil_factory()

    async def run() -> None:
        stack = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
            request = await ask(requester, stack, "Café ☕ — will it open?")
            source = RequestSource(
                requester.pool,
                stack.optimistic_oracle,
                InMemoryCheckpointStore(),
                ScannerSettings(confirmations=0),
                requesters=[OTHER],  # someone else's requests only: none
            )
            assert await source.poll() == []
            anyone = RequestSource(
                requester.pool,
                stack.optimistic_oracle,
                InMemoryCheckpointStore(),
                ScannerSettings(confirmations=0),
                identifiers=["NUMERICAL"],  # another identifier: none
            )
            assert await anyone.poll() == []
            everyone = RequestSource(
                requester.pool,
                stack.optimistic_oracle,
                InMemoryCheckpointStore(),
                ScannerSettings(confirmations=0),
            )
            (found,) = await everyone.poll()
            assert found.key == request
            # The request id derived here is the contract's key of its `requests` mapping.
            oracle = OptimisticOracleV2(requester.pool, stack.optimistic_oracle)
            stored = await oracle.read("requests", found.key.request_id)
            assert stored[2].lower() == stack.currency.lower()  # currency: set, so found
            unknown = await oracle.read("requests", b"\x01" * 32)
            assert int(unknown[2], 16) == 0
            assert parse_ancillary(found.key.ancillary_data).title == "Café ☕ — will it open?"

    asyncio.run(run())


class _DiesBeforeBroadcastingAProposal(InMemoryIntentStore):
    """Records a signed proposal, then the process "dies" before broadcasting it."""

    async def put(self, intent: Intent) -> None:
        await super().put(intent)
        if intent.state == IntentState.SIGNED and intent.key.startswith(PROPOSE_PREFIX):
            raise _Died


class _Died(Exception):
    pass


def test_a_restart_checks_recorded_proposals_before_sending_them(
    anvil_factory: AnvilFactory,
) -> None:
    """Recorded, not broadcast, then the process died: after a restart the proposal whose
    request someone else proposed meanwhile is skipped, the other one is sent."""
    anvil = anvil_factory()

    async def run() -> None:
        stack = await setup(anvil, fund={REQUESTER: 10 * REWARD, OURS: 10 * BOND, OTHER: 10 * BOND})
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
            taken = await ask(requester, stack, "Will someone else be first?")
            open_ = await ask(requester, stack, "Will ours be sent after the restart?")
        store = _DiesBeforeBroadcastingAProposal()
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=store) as dying:
            proposer = UmaProposer(dying, OptimisticOracleV2(dying.pool, stack.optimistic_oracle))
            for request in (taken, open_):
                with pytest.raises(_Died):
                    await proposer.propose(request, PRICE_SCALE)
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as other:
            theirs = UmaProposer(other, OptimisticOracleV2(other.pool, stack.optimistic_oracle))
            await theirs.propose(taken, 0)
        restarted_store = InMemoryIntentStore()
        for key in (proposer.proposal_key(taken), proposer.proposal_key(open_)):
            recorded = await store.get(key)
            assert recorded is not None
            assert recorded.state == IntentState.SIGNED
            await restarted_store.put(recorded)
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=restarted_store) as manager:
            oracle = OptimisticOracleV2(manager.pool, stack.optimistic_oracle)
            restarted = UmaProposer(manager, oracle)  # registers the pre-send checks
            # The skipped one's nonce stays unused: the manager fills that gap (blocks
            # must come for it to see the proposal stuck behind it).
            async with mining(anvil):
                recovered = {i.key: i for i in await manager.recover()}
            assert recovered[restarted.proposal_key(taken)].state == IntentState.SKIPPED
            assert recovered[restarted.proposal_key(open_)].state == IntentState.CONFIRMED
            assert (await oracle.get_request(taken)).proposer == OTHER
            assert (await oracle.get_request(open_)).proposer == OURS
        calls = [r for r in sender_txs(anvil, OURS) if r["to"].lower() != OURS.lower()]
        assert len(calls) == 2  # the approve and one proposal (and a nonce-gap filler)
        assert reverted(anvil) == []

    asyncio.run(run())


def test_a_disputed_request_resolved_by_the_vote_is_settled(anvil_factory: AnvilFactory) -> None:
    """Someone else's wrong proposal, disputed; UMA's mock vote returns Yes: RESOLVED, then
    `settle` makes it SETTLED at the vote's price (the stack's Oracle entry is wired)."""
    anvil = anvil_factory()
    disputer = DEV_ADDRESSES[0]

    async def run() -> None:
        stack = await setup(
            anvil, fund={REQUESTER: 10 * REWARD, OTHER: 10 * BOND, disputer: 10 * BOND}
        )
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
            request = await ask(requester, stack, "Will the vote say Yes?")
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as other:
            theirs = UmaProposer(other, OptimisticOracleV2(other.pool, stack.optimistic_oracle))
            await theirs.propose(request, 0)
        oo = stack.optimistic_oracle
        async with manager_for(anvil.url) as manager:
            oracle = OptimisticOracleV2(manager.pool, oo)
            await call(
                manager, "approve", TESTNET_ERC20, stack.currency, "approve", oo, MAX_UINT256
            )
            await call(manager, "dispute", OPTIMISTIC_ORACLE_V2, oo, "disputePrice", *request.args)
            view = await oracle.get_request(request)
            assert view.state == RequestState.DISPUTED
            assert view.disputer == disputer
            # The vote: the mock oracle gets the request as OOv2 stamped it.
            stamped = await oracle.read("stampAncillaryData", request.ancillary_data, REQUESTER)
            assert bytes(stamped).endswith(f",ooRequester:{REQUESTER[2:].lower()}".encode())
            vote_time = view.expiration_time - LIVENESS  # event-based: the proposal's time
            await call(
                manager,
                "vote",
                MOCK_ORACLE_ANCILLARY,
                stack.mock_oracle,
                "pushPrice",
                request.identifier,
                vote_time,
                bytes(stamped),
                PRICE_SCALE,
            )
            assert await oracle.get_state(request) == RequestState.RESOLVED
            settled = await UmaProposer(manager, oracle).settle(request)
            assert settled is not None
            assert settled.state == IntentState.CONFIRMED
            view = await oracle.get_request(request)
            assert view.state == RequestState.SETTLED
            assert view.resolved_price == PRICE_SCALE
            assert view.proposed_price == 0
        assert reverted(anvil) == []

    asyncio.run(run())
