"""Shared pieces of the anvil tests: fast settings, a manager factory, a block miner."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from typing import Any

import pytest

from oracle.chain.contracts import ORACLE, Deployment, load_artifact, proof_hash
from oracle.chain.deploy import deploy_contracts
from oracle.chain.events import EventDecoder
from oracle.chain.intents import InMemoryIntentStore, Intent, IntentState, IntentStore
from oracle.chain.keys import LocalSigner
from oracle.chain.observer import SILENT, ChainObserver
from oracle.chain.revert import ErrorDecoder
from oracle.chain.rpc import RpcPool
from oracle.chain.settings import RpcSettings, TxSettings
from oracle.chain.txmanager import TxManager
from oracle.venues.own.submitter import Answer
from tests.anvil import DEV_KEYS, Anvil

FIXTURES = Path(__file__).parent / "fixtures"
RECIPIENT = "0x000000000000000000000000000000000000bEEF"

FAST_RPC = RpcSettings(
    # Generous: on a loaded 2-CPU machine anvil can stall a request for seconds (a world's
    # read timed out at 2 s in CI). Tests of timeouts set their own (tests/chain/test_rpc.py).
    request_timeout=10,
    retry_backoff=0.1,
    retry_backoff_max=0.5,
    call_deadline=20,
    health_check_interval=1,
)
FAST_TX = TxSettings(
    poll_interval=0.05,
    confirmations=1,
    resend_after_blocks=2,
    max_fee_per_gas_gwei=50,
    min_priority_fee_gwei=1,
    max_priority_fee_gwei=2,
)


def reverter_artifact() -> dict[str, Any]:
    artifact: dict[str, Any] = json.loads((FIXTURES / "reverter.json").read_text())
    return artifact


@asynccontextmanager
async def manager_for(
    urls: str | Sequence[str],
    *,
    key: str = DEV_KEYS[0],
    store: IntentStore | None = None,
    decoder: ErrorDecoder | None = None,
    rpc: RpcSettings = FAST_RPC,
    observer: ChainObserver = SILENT,
    **tx: Any,
) -> AsyncIterator[TxManager]:
    pool = RpcPool([urls] if isinstance(urls, str) else list(urls), rpc, observer=observer)
    await pool.start()
    manager = TxManager(
        pool,
        LocalSigner(key),
        store if store is not None else InMemoryIntentStore(),
        FAST_TX.model_copy(update=tx),
        decoder=decoder,
        observer=observer,
    )
    try:
        yield manager
    finally:
        await manager.close()
        await pool.close()


@asynccontextmanager
async def mining(anvil: Anvil, interval: float = 0.1) -> AsyncIterator[None]:
    """Mine one block every `interval` seconds (errors, e.g. while anvil is down, ignored)."""
    stop = asyncio.Event()

    async def loop() -> None:
        while not stop.is_set():
            with suppress(Exception):  # anvil restarting: try again next tick
                await asyncio.to_thread(anvil.rpc, "evm_mine")
            with suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval)

    task = asyncio.create_task(loop())
    try:
        yield
    finally:
        stop.set()
        await task


async def wait_for_state(
    store: IntentStore, key: str, *states: IntentState, timeout: float = 20
) -> Intent:
    """Poll the store until the intent under `key` is in one of `states`."""
    deadline = asyncio.get_running_loop().time() + timeout
    while True:
        intent = await store.get(key)
        if intent is not None and intent.state in states:
            return intent
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"{key} never reached {states}; now {intent}")
        await asyncio.sleep(0.02)


def events(caplog: pytest.LogCaptureFixture, name: str) -> list[dict[str, Any]]:
    return [dict(r.__dict__["fields"]) for r in caplog.records if getattr(r, "event", None) == name]


def capture(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="oracle.chain")


def sender_txs(anvil: Anvil, sender: str) -> list[dict[str, Any]]:
    """Receipts of every canonical transaction sent by `sender`."""
    return [r for r in anvil.receipts_in_chain() if r["from"].lower() == sender.lower()]


async def deploy_oracle(manager: TxManager, **overrides: Any) -> Deployment:
    """AgentOracle + Conditional Tokens + adapter, deployer as owner and reporter."""
    options: dict[str, Any] = {
        "min_liveness": 600,
        "deploy_conditional_tokens": True,
        "adapter": True,
    }
    options.update(overrides)
    return await deploy_contracts(manager, **options)


def answer(qid: str, outcome: int = 0, checksum: str = "ab" * 32) -> Answer:
    return Answer(bytes.fromhex(qid.removeprefix("0x")), outcome, proof_hash(checksum))


def proposals_on_chain(anvil: Anvil, oracle: str) -> list[dict[str, Any]]:
    """Every AnswerProposed log of the canonical chain."""
    decoder = EventDecoder(load_artifact(ORACLE).abi, "AnswerProposed")
    logs = anvil.rpc(
        "eth_getLogs",
        {"address": oracle, "topics": [decoder.topic], "fromBlock": "0x0", "toBlock": "latest"},
    )
    return [decoder.decode(log).args | {"tx": log["transactionHash"]} for log in logs]
