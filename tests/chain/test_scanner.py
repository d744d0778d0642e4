"""LogScanner on a real anvil: ranges, confirmation depth, checkpoints, reorgs."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from eth_account import Account
from web3 import Web3

from oracle.chain.checkpoint import FileCheckpointStore, InMemoryCheckpointStore
from oracle.chain.events import DecodedLog, EventDecoder
from oracle.chain.rpc import RpcPool
from oracle.chain.scanner import LogScanner, scan_name
from oracle.chain.settings import ScannerSettings
from tests.anvil import DEV_KEYS, Anvil, AnvilFactory
from tests.chain.helpers import FAST_RPC, events, reverter_artifact

ARTIFACT = reverter_artifact()
BUMP = Web3().eth.contract(abi=ARTIFACT["abi"]).encode_abi("bump", [])
DECODER = EventDecoder(ARTIFACT["abi"], "Bumped")


def signed(key: str, nonce: int, to: str | None, data: str, gas: int = 1_000_000) -> str:
    tx: dict[str, Any] = {
        "data": data,
        "gas": gas,
        "maxFeePerGas": 50 * 10**9,
        "maxPriorityFeePerGas": 10**9,
        "nonce": nonce,
        "chainId": 31337,
        "type": 2,
    }
    if to is not None:
        tx["to"] = to
    return "0x" + Account.sign_transaction(tx, key).raw_transaction.hex()


def deploy(anvil: Anvil) -> str:
    tx_hash = anvil.rpc(
        "eth_sendRawTransaction", signed(DEV_KEYS[1], 0, None, ARTIFACT["bytecode"])
    )
    anvil.mine()
    address: str = anvil.rpc("eth_getTransactionReceipt", tx_hash)["contractAddress"]
    return Web3.to_checksum_address(address)


class Bumper:
    """Sends `bump()` from dev account 2, one nonce after the other."""

    def __init__(self, anvil: Anvil, address: str) -> None:
        self.anvil, self.address, self.nonce = anvil, address, 0

    def raw(self, gas: int = 1_000_000) -> str:
        raw = signed(DEV_KEYS[2], self.nonce, self.address, BUMP, gas)
        self.nonce += 1
        return raw

    def bump(self, mine: bool = True, gas: int = 1_000_000) -> str:
        tx_hash: str = self.anvil.rpc("eth_sendRawTransaction", self.raw(gas))
        if mine:
            self.anvil.mine()
        return tx_hash


def scanner(url_pool: RpcPool, address: str, store: Any, **settings: Any) -> LogScanner:
    return LogScanner(
        url_pool,
        address=address,
        decoder=DECODER,
        checkpoints=store,
        name="bumps",
        settings=ScannerSettings(**settings),
        id_of=lambda log: log.tx_hash,
        rewind_blocks=16,
    )


def canonical_bumps(anvil: Anvil, address: str, confirmations: int) -> list[str]:
    safe = anvil.block_number() - confirmations
    logs = anvil.rpc(
        "eth_getLogs",
        {"address": address, "topics": [DECODER.topic], "fromBlock": "0x0", "toBlock": hex(safe)},
    )
    return [log["transactionHash"] for log in logs]


def test_ranges_depth_and_restart(anvil_factory: AnvilFactory, tmp_path: Path) -> None:
    anvil = anvil_factory("--no-mining")
    address = deploy(anvil)
    bumper = Bumper(anvil, address)
    sent = [bumper.bump() for _ in range(5)]
    file = tmp_path / "checkpoints.json"

    async def run() -> None:
        async with RpcPool([anvil.url], FAST_RPC) as pool:
            first = scanner(pool, address, FileCheckpointStore(file), confirmations=2,
                            max_block_range=2)  # fmt: skip
            handled: list[DecodedLog] = []

            async def handler(logs: list[DecodedLog]) -> None:
                handled.extend(logs)

            found = await first.poll(handler)
            assert found == handled
            assert [log.tx_hash for log in found] == sent[:3]  # blocks 2..4 are safe, 5..6 not
            assert found[0].args == {"by": Account.from_key(DEV_KEYS[2]).address, "count": 1}
            anvil.mine(2)
            # A new process: continues from the file, delivers only what is new.
            second = scanner(pool, address, FileCheckpointStore(file), confirmations=2,
                             max_block_range=2)  # fmt: skip
            rest = await second.poll()
            assert [log.tx_hash for log in rest] == sent[3:]
            assert await second.poll() == []
            cp = await FileCheckpointStore(file).load("bumps")
            assert cp is not None
            assert cp.next_block == anvil.block_number() - 2 + 1

    asyncio.run(run())
    assert canonical_bumps(anvil, address, 2) == sent


def test_reorg_inside_the_window_loses_and_duplicates_nothing(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory("--no-mining")
    address = deploy(anvil)
    bumper = Bumper(anvil, address)
    delivered: list[str] = []

    async def run() -> None:
        async with RpcPool([anvil.url], FAST_RPC) as pool:
            scan = scanner(pool, address, InMemoryCheckpointStore(), confirmations=3)
            bumper.bump()
            anvil.mine(3)
            delivered.extend(log.tx_hash for log in await scan.poll())
            moved_raw = bumper.raw()
            moved = anvil.rpc("eth_sendRawTransaction", moved_raw)
            anvil.mine()
            gone = bumper.bump()  # will vanish in the reorg
            assert await scan.poll() == []  # both are inside the confirmation window
            # Replace the last two blocks: `moved` is re-included in the second new block,
            # `gone` is not; nonce 2 is then reused by a different transaction.
            anvil.rpc("anvil_reorg", 2, [[moved_raw, 1]])
            assert anvil.rpc("eth_getTransactionReceipt", gone) is None
            bumper.nonce = 2
            replacement = bumper.bump(gas=900_000)  # another transaction with the same nonce
            assert replacement != gone
            anvil.mine(3)
            delivered.extend(log.tx_hash for log in await scan.poll())
            assert moved in delivered
            assert replacement in delivered
            assert gone not in delivered

    asyncio.run(run())
    assert delivered == canonical_bumps(anvil, address, 3)
    assert len(set(delivered)) == len(delivered) == 3


def test_reorg_deeper_than_the_depth_is_rescanned(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="oracle.chain")
    anvil = anvil_factory("--no-mining")
    address = deploy(anvil)
    bumper = Bumper(anvil, address)
    delivered: list[str] = []

    async def run() -> None:
        async with RpcPool([anvil.url], FAST_RPC) as pool:
            scan = scanner(pool, address, InMemoryCheckpointStore(), confirmations=1)
            anvil.mine(3)  # keep the deployment out of the reorg
            first_raw = bumper.raw()
            first = anvil.rpc("eth_sendRawTransaction", first_raw)
            anvil.mine(2)
            delivered.extend(log.tx_hash for log in await scan.poll())
            assert delivered == [first]
            # Three blocks replaced (deeper than the depth of 1); `first` is replayed.
            anvil.rpc("anvil_reorg", 3, [[first_raw, 2]])
            added = bumper.bump()
            anvil.mine(1)
            delivered.extend(log.tx_hash for log in await scan.poll())
            assert delivered == [first, added]

    asyncio.run(run())
    assert events(caplog, "scanner.deep_reorg")
    assert delivered == canonical_bumps(anvil, address, 1)


def test_a_scans_checkpoint_is_named_by_source_chain_and_contract_in_any_case() -> None:
    # Saved checkpoints are found again by this name: it must not change between versions.
    contract = "0x" + "Ab" * 20
    assert scan_name("polymarket", 137, contract) == "polymarket:137:0x" + "ab" * 20
