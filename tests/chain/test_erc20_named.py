"""What a venue records of a bond token's name (`Erc20.named`, `TokenBonds.named`), on
anvil: UMA's TestnetERC20 with a plain and a hostile symbol, an old token answering a
`bytes32`, a contract whose every call reverts, an address without code."""

from __future__ import annotations

import asyncio
from decimal import Decimal

import pytest

from oracle.chain.deploy import creation_code
from oracle.chain.erc20 import TESTNET_ERC20, Erc20
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.daemon.chain_parts import TokenBonds
from oracle.errors import ChainError
from tests.anvil import Anvil
from tests.chain.helpers import manager_for

# Every call reverts, with no reason: PUSH1 0, PUSH1 0, REVERT.
REVERTS = "0x60006000fd"


def answers_with(word: bytes) -> str:
    """Code that answers every call with one 32-byte `word`, as old tokens (MKR, SAI)
    answer `symbol()` with a `bytes32`: PUSH32 word, PUSH1 0, MSTORE, PUSH1 32, PUSH1 0,
    RETURN."""
    assert len(word) == 32
    return "0x7f" + word.hex() + "60005260206000f3"


async def deploy_token(manager: TxManager, symbol: str, decimals: int) -> str:
    intent = await manager.submit(
        TxRequest(
            key=f"token:{symbol}",
            to=None,
            data=creation_code(TESTNET_ERC20, "A token", symbol, decimals),
        )
    )
    assert intent.inclusion is not None
    assert intent.inclusion.contract_address is not None
    return str(intent.inclusion.contract_address)


def test_a_tokens_name_is_read_as_plain_text_or_not_at_all_and_once(anvil: Anvil) -> None:
    old, reverting, empty = ("0x" + byte * 20 for byte in ("0a", "0b", "0c"))
    anvil.rpc("anvil_setCode", old, answers_with(b"MKR".ljust(32, b"\0")))
    anvil.rpc("anvil_setCode", reverting, REVERTS)

    async def run() -> None:
        async with manager_for(anvil.url) as manager:
            usdc = await deploy_token(manager, "USDC", 6)
            hostile = await deploy_token(manager, "US\u202eDC\u200b\n<script>", 6)
            pool = manager.pool
            assert await Erc20(pool, usdc).named() == ("USDC", 6)
            # A bidi override, a zero-width space and a line break gone; the markup is
            # text the console escapes.
            assert await Erc20(pool, hostile).named() == ("USDC <script>", 6)
            # Its decimals() answers the same word: no number of decimals, not believed.
            assert await Erc20(pool, old).named() == ("MKR", None)
            assert await Erc20(pool, reverting).named() == (None, None)
            assert await Erc20(pool, empty).named() == (None, None)

            bonds = TokenBonds(None, "uma", Decimal(0))
            usdc_named = {"currency_symbol": "USDC", "currency_decimals": 6}
            assert await bonds.named(pool, usdc) == usdc_named
            assert await bonds.named(pool, reverting) == {}
            with pytest.raises(ChainError, match="no number of decimals"):
                await bonds.decimals(pool, reverting)
            # Read once per venue, name and decimals together: a token changed since is
            # not read again.
            anvil.rpc("anvil_setCode", usdc, REVERTS)
            assert await bonds.named(pool, usdc) == usdc_named
            assert await bonds.decimals(pool, usdc) == 6
            assert await TokenBonds(None, "uma", Decimal(0)).named(pool, usdc) == {}

    asyncio.run(run())
