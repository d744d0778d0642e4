"""UMA's ManagedOptimisticOracleV2 (UMIP-189), as this project's test double of it
(contracts/src/testing/ManagedOptimisticOracleV2Double.sol, standing for
UMAprotocol/managed-oracle at commit 6258c86), on anvil: the proposer off the whitelist
approves and sends nothing; on it, it proposes once, paying the request manager's custom
bond, which `getRequest` does not show before; a direct call is refused with the contract's
custom error, decoded by name; only the resolver settles, and a proposal past its liveness
stays disputable until then."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from eth_utils.crypto import keccak

from oracle.chain.contracts import encode_call, error_decoder
from oracle.chain.intents import IntentState
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.core.ancillary import PRICE_SCALE
from oracle.errors import NotWhitelisted, TxReverted
from oracle.venues.uma.binding import (
    MANAGED_OPTIMISTIC_ORACLE_V2,
    TESTNET_ERC20,
    YES_OR_NO_QUERY,
    Erc20,
    ManagedOptimisticOracleV2,
    OptimisticOracleV2,
    RequestKey,
    RequestState,
    UmaProposer,
    identifier_bytes,
    report_whitelist,
)
from oracle.venues.uma.stack import (
    ManagedStack,
    UmaStack,
    deploy_managed_oracle,
    deploy_proposer_whitelist,
    deploy_uma_stack,
    manage_request,
)
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory
from tests.chain.helpers import manager_for, sender_txs

LIVENESS = 7200
FINAL_FEE = 5 * 10**18
BOND = 100 * 10**18
CUSTOM_BOND = 250 * 10**18
REWARD = 2 * 10**18
REQUESTER, OURS, OTHER = DEV_ADDRESSES[1], DEV_ADDRESSES[2], DEV_ADDRESSES[3]
PROPOSER_NOT_WHITELISTED = "0x6ffe5a95"  # ProposerNotWhitelisted()


async def call(manager: TxManager, key: str, name: str, to: str, function: str, *args: Any) -> None:
    intent = await manager.submit(
        TxRequest(key=key, to=to, data=encode_call(name, function, *args))
    )
    assert intent.state == IntentState.CONFIRMED, intent.error


async def setup(anvil: Anvil, proposers: list[str] | None) -> tuple[UmaStack, ManagedStack]:
    async with manager_for(anvil.url) as deployer:
        stack = await deploy_uma_stack(deployer, liveness=LIVENESS, final_fee=FINAL_FEE)
        managed = await deploy_managed_oracle(
            deployer, stack, proposers=proposers, liveness=LIVENESS
        )
        for account in (REQUESTER, OURS, OTHER):
            await call(
                deployer,
                f"fund:{account}",
                TESTNET_ERC20,
                stack.currency,
                "allocateTo",
                account,
                10 * BOND,
            )
    return stack, managed


async def ask(requester: TxManager, stack: UmaStack, oracle: str, title: str) -> RequestKey:
    """requestPrice + setEventBased + setBond (BOND) from the requester, as the adapter does."""
    block = await requester.pool.call("eth_getBlockByNumber", lambda w3: w3.eth.get_block("latest"))
    data = f"q: title: {title}, res_data: p1: 0, p2: 1, p3: 0.5".encode()
    key = RequestKey(
        requester.address, identifier_bytes(YES_OR_NO_QUERY), int(block["timestamp"]), data
    )
    tag = key.id_hex
    oo = MANAGED_OPTIMISTIC_ORACLE_V2
    await call(
        requester, f"approve:{tag}", TESTNET_ERC20, stack.currency, "approve", oracle, REWARD
    )
    await call(
        requester,
        f"request:{tag}",
        oo,
        oracle,
        "requestPrice",
        *key.args[1:],
        stack.currency,
        REWARD,
    )
    await call(requester, f"event:{tag}", oo, oracle, "setEventBased", *key.args[1:])
    await call(requester, f"bond:{tag}", oo, oracle, "setBond", *key.args[1:], BOND)
    return key


def reverted(anvil: Anvil) -> list[dict[str, Any]]:
    return [r for r in anvil.receipts_in_chain() if int(r["status"], 16) != 1]


def test_the_double_keeps_the_published_selectors() -> None:
    """The function and error selectors the daemon relies on are those of the published
    ManagedOptimisticOracleV2 (signatures from its interface)."""
    decoder = error_decoder()
    assert decoder.decode(bytes.fromhex(PROPOSER_NOT_WHITELISTED[2:])).name == (
        "ProposerNotWhitelisted"
    )
    for name in ("SenderNotWhitelisted", "RequestNotSettled", "BondExceedsMaximumBond"):
        assert name in decoder.names
    identifier = identifier_bytes(YES_OR_NO_QUERY)
    for function, signature, args in (
        ("getProposerWhitelistWithEnabledStatus", "(address,bytes32,bytes)", ()),
        ("requestManagerSetBond", "(address,bytes32,bytes,address,uint256)", (OURS, 1)),
        ("requestManagerSetCustomLiveness", "(address,bytes32,bytes,uint256)", (600,)),
        ("requestManagerSetProposerWhitelist", "(address,bytes32,bytes,address)", (OURS,)),
        ("customBonds", "(bytes32,address)", None),
    ):
        call_args = (b"\0" * 32, OURS) if args is None else (REQUESTER, identifier, b"q", *args)
        data = encode_call(MANAGED_OPTIMISTIC_ORACLE_V2, function, *call_args)
        assert data[:10] == "0x" + keccak(text=function + signature)[:4].hex(), function


def test_off_the_whitelist_nothing_is_approved_or_sent(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        stack, managed = await setup(anvil, proposers=[OTHER])
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
            request = await ask(requester, stack, managed.oracle, "Off the list?")
        async with manager_for(anvil.url, key=DEV_KEYS[2], decoder=error_decoder()) as manager:
            oracle = OptimisticOracleV2(manager.pool, managed.oracle)
            reader = ManagedOptimisticOracleV2(manager.pool, managed.oracle)
            assert await reader.is_managed()
            assert not await ManagedOptimisticOracleV2(
                manager.pool, stack.optimistic_oracle
            ).is_managed()
            assert await report_whitelist(reader, OURS) is False
            proposer = UmaProposer(manager, oracle, managed=reader)
            with pytest.raises(NotWhitelisted, match="ProposerNotWhitelisted") as refused:
                await proposer.propose(request, PRICE_SCALE)
            assert refused.value.signer == OURS
            assert await manager.intent(proposer.proposal_key(request)) is None
            token = Erc20(manager.pool, stack.currency)
            assert await token.allowance(OURS, managed.oracle) == 0
            assert sender_txs(anvil, OURS) == []  # no approval, no proposal

            # Sent anyway (a plain proposer): its gas estimate reverts with the contract's
            # custom error, decoded by name; nothing is broadcast.
            with pytest.raises(TxReverted) as raw:
                await manager.submit(
                    TxRequest(
                        key="direct",
                        to=managed.oracle,
                        data=oracle.encode("proposePrice", *request.args, PRICE_SCALE),
                    )
                )
            assert raw.value.name == "ProposerNotWhitelisted"
            assert "ProposerNotWhitelisted()" in str(raw.value)
            assert sender_txs(anvil, OURS) == []

            # The request manager lists us for this request alone: now we may, once.
            async with manager_for(anvil.url) as deployer:
                await manage_request(
                    deployer,
                    managed.oracle,
                    "requestManagerSetProposerWhitelist",
                    request.requester,
                    request.ancillary_data,
                    await deploy_proposer_whitelist(deployer, [OURS]),
                )
            proposal = await proposer.propose(request, PRICE_SCALE)
            assert proposal.ours(OURS)
            assert len(sender_txs(anvil, OURS)) == 2  # approve + proposePrice
        assert reverted(anvil) == []

    asyncio.run(run())


def test_the_custom_bond_is_paid_and_only_the_resolver_settles(
    anvil_factory: AnvilFactory,
) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        stack, managed = await setup(anvil, proposers=[OURS, OTHER])
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as requester:
            request = await ask(requester, stack, managed.oracle, "Custom bond?")
        async with manager_for(anvil.url) as deployer:
            for function, args in (
                ("requestManagerSetBond", (stack.currency, CUSTOM_BOND)),
                ("requestManagerSetCustomLiveness", (600,)),
            ):
                await manage_request(
                    deployer,
                    managed.oracle,
                    function,
                    request.requester,
                    request.ancillary_data,
                    *args,
                )
        async with manager_for(anvil.url, key=DEV_KEYS[2], decoder=error_decoder()) as manager:
            oracle = OptimisticOracleV2(manager.pool, managed.oracle)
            reader = ManagedOptimisticOracleV2(manager.pool, managed.oracle)
            view = await oracle.get_request(request)
            assert view.bond == BOND  # getRequest shows the requester's bond before the proposal
            terms = await reader.terms(request, stack.currency)
            assert terms.may_propose(OURS)
            assert terms.enabled
            assert (terms.custom_bond, terms.custom_liveness) == (CUSTOM_BOND, 600)
            proposer = UmaProposer(manager, oracle, managed=reader)
            assert await proposer.charged(request, view, "k") == CUSTOM_BOND + FINAL_FEE
            token = Erc20(manager.pool, stack.currency)
            before = await token.balance_of(OURS)
            proposal = await proposer.propose(request, PRICE_SCALE)
            assert proposal.ours(OURS)
            assert await token.balance_of(OURS) == before - CUSTOM_BOND - FINAL_FEE
            assert await token.allowance(OURS, managed.oracle) == 0  # exactly what it needed
            view = await oracle.get_request(request)
            assert view.bond == CUSTOM_BOND
            block = await manager.pool.call(
                "eth_getBlockByNumber", lambda w3: w3.eth.get_block("latest")
            )
            assert view.expiration_time == int(block["timestamp"]) + 600

            anvil.rpc("evm_increaseTime", 601)
            anvil.mine()
            assert await oracle.get_state(request) == RequestState.EXPIRED
            # Not the resolver: settling reverts with OpenZeppelin's role error.
            with pytest.raises(TxReverted) as raw:
                await manager.submit(
                    TxRequest(
                        key="settle", to=managed.oracle, data=oracle.encode("settle", *request.args)
                    )
                )
            assert raw.value.name == "AccessControlUnauthorizedAccount"
        async with manager_for(anvil.url) as resolver:
            await call(
                resolver,
                "resolve",
                MANAGED_OPTIMISTIC_ORACLE_V2,
                managed.oracle,
                "settle",
                *request.args,
            )
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            view = await OptimisticOracleV2(manager.pool, managed.oracle).get_request(request)
            assert view.state == RequestState.SETTLED
            assert view.resolved_price == PRICE_SCALE
            token = Erc20(manager.pool, stack.currency)
            assert await token.balance_of(OURS) == before + REWARD
        assert len(sender_txs(anvil, OURS)) == 2  # approve + proposePrice; never a settle
        assert reverted(anvil) == []

    asyncio.run(run())
