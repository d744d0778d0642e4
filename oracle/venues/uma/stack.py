"""UMA's own contracts deployed on a development chain, wired as UMA wires them.

`deploy_uma_stack` deploys, from the artifacts compiled out of `@uma/core`
(`oracle/chain/artifacts/uma/`): the `Finder` (where each contract finds the others),
`IdentifierWhitelist` (price identifiers the oracle accepts), `AddressWhitelist` (bond
and reward currencies it accepts, the "CollateralWhitelist"), `Store` (the final fee per
currency), a `TestnetERC20` bond currency (unless one is given), `MockOracleAncillary`
(UMA's test stand-in for the token-holder vote, reached only by a second dispute) and
`OptimisticOracleV2` (and, with `deploy_optimistic_oracle_v3`, `OptimisticOracleV3`);
registers them in the Finder under UMA's interface names,
whitelists the identifiers and the currency, and sets the currency's final fee. Every
transaction goes through the given `TxManager`, whose signer owns the contracts.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eth_utils.address import to_checksum_address

from oracle.chain.contracts import encode_call
from oracle.chain.deploy import creation_code
from oracle.chain.erc20 import TESTNET_ERC20
from oracle.chain.intents import Intent, IntentState
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import DeploymentError, TxError
from oracle.venues.uma.binding import (
    ADDRESS_WHITELIST,
    FINDER,
    IDENTIFIER_WHITELIST,
    MANAGED_OPTIMISTIC_ORACLE_V2,
    MANAGED_PROPOSER_WHITELIST,
    MOCK_ORACLE_ANCILLARY,
    OPTIMISTIC_ORACLE_V2,
    OPTIMISTIC_ORACLE_V3,
    STORE,
    YES_OR_NO_QUERY,
    ZERO_ADDRESS,
    identifier_bytes,
)
from oracle.venues.uma.binding_v3 import ASSERT_TRUTH

DEFAULT_LIVENESS = 7200  # seconds: the adapter's default, OOv2's usual
DEFAULT_FINAL_FEE = 1_500 * 10**18  # in the currency's smallest unit


@dataclass(frozen=True)
class UmaStack:
    """Addresses of a deployed UMA system (EIP-55)."""

    finder: str
    identifier_whitelist: str
    address_whitelist: str
    store: str
    currency: str
    mock_oracle: str
    optimistic_oracle: str

    def contracts(self) -> dict[str, str]:
        return {
            FINDER: self.finder,
            IDENTIFIER_WHITELIST: self.identifier_whitelist,
            ADDRESS_WHITELIST: self.address_whitelist,
            STORE: self.store,
            TESTNET_ERC20: self.currency,
            MOCK_ORACLE_ANCILLARY: self.mock_oracle,
            OPTIMISTIC_ORACLE_V2: self.optimistic_oracle,
        }


def _confirmed(intent: Intent, what: str) -> Intent:
    if intent.state != IntentState.CONFIRMED:
        raise TxError(f"{what}: ended {intent.state.value}: {intent.error}")
    return intent


async def _deploy(manager: TxManager, run: str, name: str, *args: Any) -> str:
    intent = _confirmed(
        await manager.submit(
            TxRequest(key=f"uma-deploy:{run}:{name}", to=None, data=creation_code(name, *args))
        ),
        f"deploying {name}",
    )
    if intent.inclusion is None or intent.inclusion.contract_address is None:
        raise DeploymentError(f"deploying {name}: the receipt has no contract address")
    return to_checksum_address(intent.inclusion.contract_address)


async def _call(manager: TxManager, step: str, name: str, to: str, call: tuple[Any, ...]) -> None:
    """`call` = (function, *args) of contract `name` at `to`; `step` names it (and its key)."""
    function, *args = call
    _confirmed(
        await manager.submit(
            TxRequest(key=f"uma-deploy:{step}", to=to, data=encode_call(name, function, *args))
        ),
        step,
    )


async def deploy_uma_stack(
    manager: TxManager,
    *,
    liveness: int = DEFAULT_LIVENESS,
    final_fee: int = DEFAULT_FINAL_FEE,
    identifiers: Sequence[str] = (YES_OR_NO_QUERY,),
    currency: str | None = None,
) -> UmaStack:
    """Deploy and wire UMA's OOv2 system (see the module docstring); `currency`: an
    existing ERC-20 to accept for bonds, else a new `TestnetERC20` ("Bond", 18 decimals)."""
    run = secrets.token_hex(6)
    finder = await _deploy(manager, run, FINDER)
    identifiers_at = await _deploy(manager, run, IDENTIFIER_WHITELIST)
    collateral = await _deploy(manager, run, ADDRESS_WHITELIST)
    store = await _deploy(manager, run, STORE, (0,), (0,), ZERO_ADDRESS)
    token = (
        to_checksum_address(currency)
        if currency is not None
        else await _deploy(manager, run, TESTNET_ERC20, "Bond", "BOND", 18)
    )
    mock_oracle = await _deploy(manager, run, MOCK_ORACLE_ANCILLARY, finder, ZERO_ADDRESS)
    oracle = await _deploy(manager, run, OPTIMISTIC_ORACLE_V2, liveness, finder, ZERO_ADDRESS)
    for interface, address in (
        ("IdentifierWhitelist", identifiers_at),
        ("CollateralWhitelist", collateral),
        ("Store", store),
        ("Oracle", mock_oracle),
        ("OptimisticOracleV2", oracle),
    ):
        call: tuple[Any, ...] = (
            "changeImplementationAddress",
            identifier_bytes(interface),
            address,
        )
        await _call(manager, f"{run}:finder:{interface}", FINDER, finder, call)
    for name in identifiers:
        call = ("addSupportedIdentifier", identifier_bytes(name))
        await _call(manager, f"{run}:identifier:{name}", IDENTIFIER_WHITELIST, identifiers_at, call)
    call = ("addToWhitelist", token)
    await _call(manager, f"{run}:collateral", ADDRESS_WHITELIST, collateral, call)
    await _call(manager, f"{run}:final-fee", STORE, store, ("setFinalFee", token, (final_fee,)))
    return UmaStack(
        finder=finder,
        identifier_whitelist=identifiers_at,
        address_whitelist=collateral,
        store=store,
        currency=token,
        mock_oracle=mock_oracle,
        optimistic_oracle=oracle,
    )


async def deploy_optimistic_oracle_v3(
    manager: TxManager, stack: UmaStack, *, liveness: int = DEFAULT_LIVENESS
) -> str:
    """Deploy UMA's `OptimisticOracleV3` beside a deployed stack: `ASSERT_TRUTH` (its
    default identifier) whitelisted, the stack's currency its default bond currency (the
    minimum bond: twice the final fee), the stack's `MockOracleAncillary` its vote."""
    run = secrets.token_hex(6)
    call: tuple[Any, ...] = ("addSupportedIdentifier", identifier_bytes(ASSERT_TRUTH))
    await _call(
        manager,
        f"{run}:identifier:{ASSERT_TRUTH}",
        IDENTIFIER_WHITELIST,
        stack.identifier_whitelist,
        call,
    )
    oracle = await _deploy(
        manager, run, OPTIMISTIC_ORACLE_V3, stack.finder, stack.currency, liveness
    )
    call = ("changeImplementationAddress", identifier_bytes("OptimisticOracleV3"), oracle)
    await _call(manager, f"{run}:finder:OptimisticOracleV3", FINDER, stack.finder, call)
    return oracle


# --- a requester that asks as Polymarket's adapter does (tests, local chains) -------------

STYLE_REQUESTER = "UmaStyleRequester"


async def deploy_style_requester(manager: TxManager, stack: UmaStack) -> str:
    """Deploy `UmaStyleRequester` (contracts/src/testing/) on `stack`'s oracle and currency;
    it pays rewards from what it holds, so fund it before it asks."""
    run = secrets.token_hex(6)
    return await _deploy(manager, run, STYLE_REQUESTER, stack.optimistic_oracle, stack.currency)


@dataclass(frozen=True)
class AskedQuestion:
    """What `ask_like_polymarket` asked: the request's fields as the oracle keys it."""

    requester: str
    timestamp: int
    ancillary_data: bytes
    transaction: str


async def ask_like_polymarket(
    manager: TxManager, requester: str, question: str, *, reward: int, bond: int
) -> AskedQuestion:
    """Ask `question` (`q: title: ..., description: ... res_data: ...`) through the
    requester at `requester`, signed by `manager` (whose address the requester appends as
    the initializer)."""
    requester = to_checksum_address(requester)
    intent = _confirmed(
        await manager.submit(
            TxRequest(
                key=f"uma-ask:{requester}:{secrets.token_hex(8)}",
                to=requester,
                data=encode_call(STYLE_REQUESTER, "ask", question.encode(), reward, bond),
            )
        ),
        "asking",
    )
    assert intent.inclusion is not None
    block = await manager.pool.call(
        "eth_getBlockByNumber",
        lambda w3: w3.eth.get_block(intent.inclusion.block_number),  # type: ignore[union-attr]
    )
    data = f"{question},initializer:{manager.address[2:].lower()}".encode()
    return AskedQuestion(requester, int(block["timestamp"]), data, intent.inclusion.tx_hash)


# --- a bulletin board like Polymarket's adapter carries (tests, local chains) -------------

BULLETIN_BOARD = "UmaBulletinBoard"


async def deploy_bulletin_board(manager: TxManager) -> str:
    """Deploy `UmaBulletinBoard` (contracts/src/testing/): where question creators post
    clarifications, with the interface of the board in Polymarket's UMA CTF adapter."""
    return await _deploy(manager, secrets.token_hex(6), BULLETIN_BOARD)


async def post_update(manager: TxManager, board: str, question: bytes, update: bytes) -> int:
    """Post `update` on `board` for `question` (its id: keccak256 of the request's
    ancillary data), signed by `manager`; the block time it was posted at."""
    intent = _confirmed(
        await manager.submit(
            TxRequest(
                key=f"uma-post-update:{board}:{secrets.token_hex(8)}",
                to=to_checksum_address(board),
                data=encode_call(BULLETIN_BOARD, "postUpdate", question, update),
            )
        ),
        "posting an update",
    )
    assert intent.inclusion is not None
    block = await manager.pool.call(
        "eth_getBlockByNumber",
        lambda w3: w3.eth.get_block(intent.inclusion.block_number),  # type: ignore[union-attr]
    )
    return int(block["timestamp"])


# --- UMA's managed Optimistic Oracle V2 (UMIP-189), as its test double (tests, local chains) --


@dataclass(frozen=True)
class ManagedStack:
    """A `ManagedOptimisticOracleV2Double` deployed on a stack (EIP-55 addresses)."""

    oracle: str
    proposer_whitelist: str
    requester_whitelist: str


async def deploy_managed_oracle(
    manager: TxManager,
    stack: UmaStack,
    *,
    proposers: Sequence[str] | None,
    liveness: int = DEFAULT_LIVENESS,
    minimum_dispute_window: int = 300,
    bond_range: tuple[int, int] = (1, 2**128 - 1),
) -> ManagedStack:
    """Deploy the test double of UMA's ManagedOptimisticOracleV2 (contracts/src/testing/)
    on `stack`'s Finder: a default proposer whitelist of `proposers` (None: a disabled
    whitelist, anyone may propose), a disabled requester whitelist (anyone may ask), the
    stack's currency's allowed custom bond range `bond_range`; `manager`'s signer holds the
    config admin, request manager and resolver roles."""
    run = secrets.token_hex(6)
    proposer_whitelist = await deploy_proposer_whitelist(manager, proposers)
    requester_whitelist = await deploy_proposer_whitelist(manager, None)
    oracle = await _deploy(
        manager,
        run,
        MANAGED_OPTIMISTIC_ORACLE_V2,
        liveness,
        stack.finder,
        proposer_whitelist,
        requester_whitelist,
        minimum_dispute_window,
    )
    for step, call in (
        ("bond-range", ("setAllowedBondRange", stack.currency, bond_range)),
        ("request-manager", ("addRequestManager", manager.address)),
        ("resolver", ("addResolver", manager.address)),
    ):
        await _call(manager, f"{run}:{step}", MANAGED_OPTIMISTIC_ORACLE_V2, oracle, call)
    return ManagedStack(oracle, proposer_whitelist, requester_whitelist)


async def deploy_proposer_whitelist(manager: TxManager, members: Sequence[str] | None) -> str:
    """A `ManagedProposerWhitelist` of `members` (None: disabled, everyone is on it), owned
    by `manager`'s signer: a default whitelist, or one a request manager sets per request."""
    run = secrets.token_hex(6)
    address = await _deploy(manager, run, MANAGED_PROPOSER_WHITELIST, members is not None)
    for index, member in enumerate(members or ()):
        call: tuple[Any, ...] = ("addToWhitelist", to_checksum_address(member))
        await _call(manager, f"{run}:member:{index}", MANAGED_PROPOSER_WHITELIST, address, call)
    return address


async def manage_request(
    manager: TxManager, oracle: str, function: str, requester: str, ancillary: bytes, *args: Any
) -> None:
    """A request manager's call on the managed oracle for YES_OR_NO_QUERY requests of
    `requester` with `ancillary` data: `requestManagerSetBond` (args: currency, bond),
    `requestManagerSetCustomLiveness` (liveness), `requestManagerSetProposerWhitelist`
    (whitelist)."""
    call = (function, requester, identifier_bytes(YES_OR_NO_QUERY), ancillary, *args)
    step = f"manage:{secrets.token_hex(6)}:{function}"
    await _call(manager, step, MANAGED_OPTIMISTIC_ORACLE_V2, oracle, call)
