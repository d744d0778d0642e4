"""Any ERC-20 token as the venues that take bonds in one read it: balance, allowance and
decimals. Below the venues: UMA's bond account, Reality.eth's ERC-20 answers and every
chain venue's balance check use the one wrapper."""

from __future__ import annotations

from eth_utils.address import to_checksum_address

from oracle.chain.contracts import _Contract

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
