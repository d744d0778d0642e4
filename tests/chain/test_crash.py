"""A process killed between recording/broadcasting and confirmation, then restarted."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from oracle.chain.contracts import ORACLE, AgentOracle, encode_call
from oracle.chain.deploy import ask
from oracle.chain.intents import FileIntentStore, InMemoryIntentStore, IntentState
from oracle.chain.txmanager import TxRequest
from oracle.venues.own.submitter import ProposalSubmitter
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, REPO, AnvilFactory
from tests.chain.helpers import (
    RECIPIENT,
    answer,
    deploy_oracle,
    manager_for,
    mining,
    proposals_on_chain,
    sender_txs,
)

SENDER = DEV_ADDRESSES[0]


def run_worker(
    anvil_url: str, store: Path, *, key: str, to: str, value: int = 0, data: str = "0x", mode: str
) -> str:
    """Start the worker; return the broadcast hash once it is killed (or killed itself)."""
    worker = subprocess.Popen(
        [sys.executable, "-m", "tests.chain.crash_worker", anvil_url, str(store), key, to,
         str(value), data, mode],
        cwd=REPO,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        if mode == "after-record":
            worker.wait(timeout=60)
            assert worker.returncode == -signal.SIGKILL, (
                worker.stderr.read() if worker.stderr else ""
            )
            return ""
        assert worker.stdout is not None
        line = worker.stdout.readline()
        assert line.startswith("BROADCAST "), (line, worker.stderr.read() if worker.stderr else "")
        worker.send_signal(signal.SIGKILL)
        worker.wait(timeout=30)
        return line.split()[1]
    finally:
        if worker.poll() is None:
            worker.kill()
            worker.wait()


@pytest.mark.parametrize("mode", ["after-broadcast", "after-record"])
def test_killed_process_is_reconciled_without_a_second_transaction(
    anvil_factory: AnvilFactory, tmp_path: Path, mode: str
) -> None:
    anvil = anvil_factory("--no-mining")
    store_file = tmp_path / "intents.json"
    tx_hash = run_worker(anvil.url, store_file, key="pay:1", to=RECIPIENT, value=77, mode=mode)
    recorded = asyncio.run(FileIntentStore(store_file).get("pay:1"))
    assert recorded is not None
    if mode == "after-broadcast":
        assert recorded.state == IntentState.BROADCAST
        assert recorded.latest.tx_hash == tx_hash
        assert anvil.rpc("eth_getTransactionByHash", tx_hash) is not None
        anvil.mine(1)  # mined while nobody watches
    else:
        assert recorded.state == IntentState.SIGNED
        assert anvil.rpc("eth_getTransactionByHash", recorded.latest.tx_hash) is None

    async def restart() -> None:
        store = FileIntentStore(store_file)
        async with manager_for(anvil.url, store=store, confirmations=3) as manager, mining(anvil):
            (recovered,) = await manager.recover()
            assert recovered.state == IntentState.CONFIRMED
            assert recovered.hashes == recorded.hashes
            again = await manager.submit(TxRequest(key="pay:1", to=RECIPIENT, value=77))
            assert again == recovered

    asyncio.run(restart())
    assert DEV_KEYS[0].removeprefix("0x") not in store_file.read_text()  # no key in the store
    receipts = sender_txs(anvil, SENDER)
    assert len(receipts) == 1
    assert receipts[0]["transactionHash"] == recorded.latest.tx_hash
    assert all(r["status"] == "0x1" for r in anvil.receipts_in_chain())
    assert anvil.balance(RECIPIENT) == 77
    assert anvil.nonce(SENDER) == 1


def test_killed_while_proposing_never_proposes_twice(
    anvil_factory: AnvilFactory, tmp_path: Path
) -> None:
    anvil = anvil_factory("--no-mining")
    store_file = tmp_path / "intents.json"

    async def setup() -> tuple[str, str]:
        async with manager_for(anvil.url) as manager, mining(anvil, 0.05):
            deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
            oracle = deployment.address(ORACLE)
            asked = await ask(manager, oracle, text="crash?", earliest_time=1)
            return oracle, asked.question_id

    oracle, qid = asyncio.run(setup())
    key = f"propose:{qid}:0"
    data = encode_call(ORACLE, "propose", *answer(qid, 1).as_tuple())
    tx_hash = run_worker(
        anvil.url, store_file, key=key, to=oracle, data=data, mode="after-broadcast"
    )
    anvil.mine(1)  # the proposal lands while the process is dead

    async def restart() -> None:
        store = FileIntentStore(store_file)
        async with manager_for(anvil.url, store=store, confirmations=3) as manager, mining(anvil):
            await manager.resume()
            submitter = ProposalSubmitter(manager, AgentOracle(manager.pool, oracle))
            # The daemon sees the question again and proposes: it resumes, it does not resend.
            intent = await submitter.propose(answer(qid, 1))
            assert intent.state == IntentState.CONFIRMED
            assert intent.latest.tx_hash == tx_hash
            assert intent.hashes == (tx_hash,)
        # Even with the intents lost, the on-chain check prevents a second proposal.
        async with manager_for(anvil.url, store=InMemoryIntentStore()) as manager:
            submitter = ProposalSubmitter(manager, AgentOracle(manager.pool, oracle))
            assert (await submitter.propose(answer(qid, 1))).state == IntentState.SKIPPED

    asyncio.run(restart())
    proposals = proposals_on_chain(anvil, oracle)
    assert len(proposals) == 1
    assert proposals[0]["tx"] == tx_hash
    assert all(r["status"] == "0x1" for r in anvil.receipts_in_chain())
