"""Any ERC-20 token as the venues that take bonds in one read it: balance, allowance,
decimals and what it calls itself. Below the venues: UMA's bond account, Reality.eth's
ERC-20 answers and every chain venue's balance check use the one wrapper."""

from __future__ import annotations

from eth_utils.address import to_checksum_address

from oracle.chain.contracts import _Contract
from oracle.chain.revert import unless_reverted
from oracle.core.amounts import token_decimals, token_symbol

# UMA's TestnetERC20 artifact: its ABI has the standard functions of any ERC-20.
TESTNET_ERC20 = "uma/TestnetERC20"


class Erc20(_Contract):
    """Any ERC-20, through the standard functions of UMA's TestnetERC20 ABI."""

    artifact_name = TESTNET_ERC20

    async def balance_of(self, account: str) -> int:
        return int(await self.read("balanceOf", to_checksum_address(account)))

    async def allowance(self, owner: str, spender: str) -> int:
        return int(
            await self.read("allowance", to_checksum_address(owner), to_checksum_address(spender))
        )

    async def named(self) -> tuple[str | None, int | None]:
        """What the token calls itself and its decimals, made plain text and checked
        (`oracle.core.amounts.token_symbol`, `token_decimals`): a `symbol()` may be any
        text its deployer chose, or a `bytes32`. None for what the token does not answer
        (a call that reverts, no code there, a malformed answer)."""
        symbol, decimals = await self._answer("symbol"), await self._answer("decimals")
        return (
            None if symbol is None else token_symbol(symbol),
            None if decimals is None else token_decimals(decimals),
        )

    async def _answer(self, function: str) -> bytes | None:
        """The raw return data of a call of `function()`, undecoded; None when it reverts."""
        answered = await unless_reverted(
            self.pool.eth_calls(f"ERC20.{function}", self.address, [self.encode(function)])
        )
        return None if answered is None else answered[0]
