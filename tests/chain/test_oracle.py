"""The contract-specific chain layer against the real AgentOracle on anvil."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest
from eth_utils.crypto import keccak
from web3 import Web3

from oracle.chain.checkpoint import FileCheckpointStore
from oracle.chain.contracts import (
    ADAPTER,
    CONDITIONAL_TOKENS,
    INVALID_OUTCOME,
    LIVENESS_FLOOR,
    MAX_LIVENESS,
    ORACLE,
    AgentOracle,
    ConditionalTokens,
    ConditionalTokensAdapter,
    Role,
    Status,
    error_decoder,
    outcome_index,
    proof_hash,
    question_id,
)
from oracle.chain.deploy import DEFAULT_BOND_WEI, ask
from oracle.chain.eip712 import SignedProposal, batch_typed_data, digest, proposal_typed_data
from oracle.chain.intents import InMemoryIntentStore, Intent, IntentState
from oracle.chain.keys import LocalSigner
from oracle.chain.settings import ScannerSettings, SubmitterSettings
from oracle.chain.txmanager import TxRequest
from oracle.venues.own.scanner import MarketSource, RequestedQuestion
from oracle.venues.own.submitter import ProposalSubmitter
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, AnvilFactory
from tests.chain.helpers import (
    answer,
    capture,
    deploy_oracle,
    events,
    manager_for,
    mining,
    proposals_on_chain,
    sender_txs,
    wait_for_state,
)

REPORTER = DEV_ADDRESSES[0]
ZERO = "0x0000000000000000000000000000000000000000"
FAR_PAST = 1


def test_deploy_ask_and_read(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> str:
        async with manager_for(anvil.url) as manager:
            deployment = await deploy_oracle(manager)
            assert deployment.chain_id == 31337
            assert set(deployment.contracts) == {ORACLE, CONDITIONAL_TOKENS, ADAPTER}
            oracle = AgentOracle(manager.pool, deployment.address(ORACLE))
            assert await oracle.has_role(REPORTER, Role.REPORTER)
            assert await oracle.read("primaryReporter") == REPORTER
            # The Python side's bounds and defaults are the contract's.
            assert await oracle.read("LIVENESS_FLOOR") == LIVENESS_FLOOR
            assert await oracle.read("MAX_LIVENESS") == MAX_LIVENESS
            assert await oracle.read("bond") == (ZERO, DEFAULT_BOND_WEI)
            asked = await ask(
                manager, oracle.address, text="Will it rain?", earliest_time=FAR_PAST, liveness=60
            )
            q = await oracle.get_question(asked.question_id)
            assert q.status == Status.REQUESTED
            assert q.outcome_count == 2
            assert q.liveness == 60
            salt = b"\x01" * 32
            local = question_id(
                REPORTER, b"x", outcome_count=3, earliest_time=5, liveness=7,
                callback=DEV_ADDRESSES[1], salt=salt,
            )  # fmt: skip
            assert local == await oracle.read(
                "questionIdOf", REPORTER, keccak(b"x"), 3, 5, 7, DEV_ADDRESSES[1], salt
            )
            # Operators' EIP-712 digests are the contract's.
            p = SignedProposal(bytes(32), 0, 1, b"\x07" * 20)
            typed = proposal_typed_data(31337, oracle.address, p)
            assert digest(typed) == await oracle.proposal_digest(bytes(32), 0, 1, b"\x07" * 20)
            return oracle.address

    address = asyncio.run(run())
    assert anvil.rpc("eth_getCode", address, "latest") != "0x"


def test_encodings() -> None:
    assert proof_hash("ab" * 32) == bytes.fromhex("ab" * 20)
    with pytest.raises(ValueError, match="32 bytes"):
        proof_hash("ab" * 20)
    assert outcome_index("YES") == 0
    assert outcome_index("NO") == 1
    assert outcome_index("INVALID") == INVALID_OUTCOME
    assert outcome_index("b", ["a", "b", "c"]) == 1
    with pytest.raises(ValueError, match="not one of"):
        outcome_index("MAYBE")


def test_market_source_checkpoint_restart_and_reorg(
    anvil_factory: AnvilFactory, tmp_path: Path
) -> None:
    anvil = anvil_factory("--no-mining")
    checkpoints = tmp_path / "checkpoints.json"
    settings = ScannerSettings(confirmations=2, max_block_range=3)
    seen: list[str] = []

    async def run() -> list[str]:
        async with manager_for(anvil.url) as manager:
            async with mining(anvil, 0.05):
                deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
            oracle = deployment.address(ORACLE)
            start = deployment.block_number

            async def asked(text: str) -> str:
                async with mining(anvil, 0.05):
                    return (
                        await ask(manager, oracle, text=text, earliest_time=FAR_PAST)
                    ).question_id

            first = [await asked(f"question {i}") for i in range(3)]
            source = MarketSource(
                manager.pool, oracle, FileCheckpointStore(checkpoints), settings, start_block=start
            )

            async def handler(questions: list[RequestedQuestion]) -> None:
                seen.extend(q.question_id for q in questions)

            anvil.mine(2)
            found = await source.poll(handler)
            assert [q.question_id for q in found] == first
            assert found[0].text == "question 0"
            assert found[0].market().outcomes == ("YES", "NO")
            # A restarted process continues from the checkpoint file.
            again = MarketSource(
                manager.pool, oracle, FileCheckpointStore(checkpoints), settings, start_block=start
            )
            assert await again.poll() == []
            # A question inside the confirmation window is reorged out, another one is asked.
            contract = AgentOracle(manager.pool, oracle)
            lost = question_id(
                REPORTER, b"reorged away", outcome_count=2, earliest_time=FAR_PAST, liveness=60,
                callback=ZERO, salt=bytes(32),
            )  # fmt: skip
            data = contract.encode("request", b"reorged away", 2, FAR_PAST, 60, ZERO, bytes(32))
            await manager.send(TxRequest(key="lost", to=oracle, data=data))
            anvil.mine()
            assert (await contract.get_question(lost)).exists
            assert await again.poll(handler) == []  # inside the window: not delivered yet
            anvil.rpc("anvil_reorg", 1, [])
            assert not (await contract.get_question(lost)).exists
            await manager.close()  # stop the manager from sending it again
            kept = await asked("asked after the reorg")
            anvil.mine(2)
            later = await again.poll(handler)
            assert [q.question_id for q in later] == [kept]
            return [*first, kept]

    expected = asyncio.run(run())
    assert seen == expected
    assert len(set(seen)) == len(seen)


def test_single_proposal_and_pre_send_check(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> str:
        async with manager_for(anvil.url) as manager:
            deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
            oracle = AgentOracle(manager.pool, deployment.address(ORACLE))
            qid = (await ask(manager, oracle.address, text="q", earliest_time=FAR_PAST)).question_id
            submitter = ProposalSubmitter(manager, oracle)
            intent = await submitter.propose(answer(qid, outcome=1))
            assert intent.state == IntentState.CONFIRMED
            assert intent.key == f"propose:{qid}:0"
            q = await oracle.get_question(qid)
            assert (q.status, q.outcome, q.proposer) == (Status.PROPOSED, 1, REPORTER)
            assert q.proof_hash == "0x" + "ab" * 20
            # Same key: the recorded intent, nothing sent.
            assert await submitter.propose(answer(qid, outcome=1)) == intent
            # The check used for recorded intents after a restart reads the calldata.
            assert await submitter._recorded_proposal_done(intent)
        # A new process that lost its intents: the on-chain check stops a second proposal.
        async with manager_for(anvil.url, store=InMemoryIntentStore()) as manager:
            submitter = ProposalSubmitter(manager, AgentOracle(manager.pool, oracle.address))
            again = await submitter.propose(answer(qid, outcome=1))
            assert again.state == IntentState.SKIPPED
            return oracle.address

    address = asyncio.run(run())
    assert len(proposals_on_chain(anvil, address)) == 1


def test_batches_by_size_and_by_time(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> str:
        async with manager_for(anvil.url) as manager:
            deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
            oracle = AgentOracle(manager.pool, deployment.address(ORACLE))
            qids = [
                (
                    await ask(manager, oracle.address, text=f"q{i}", earliest_time=FAR_PAST)
                ).question_id
                for i in range(5)
            ]
            submitter = ProposalSubmitter(
                manager, oracle, settings=SubmitterSettings(batch_max_size=3, batch_max_wait=0.5)
            )
            loop = asyncio.get_running_loop()
            started = loop.time()
            full = await asyncio.gather(
                *(submitter.enqueue(answer(q, i % 2)) for i, q in enumerate(qids[:3]))
            )
            assert loop.time() - started < 0.5  # sent at 3 answers, not after the wait
            carriers = {c.key for o in full for c in o.carriers.values() if c}
            assert len(carriers) == 1  # one transaction carries every answer
            assert carriers.pop().startswith("propose-batch:")
            # Every answer's question, as the chain shows it after the batch: one read.
            assert full[0].questions is full[2].questions
            for i, q in enumerate(qids[:3]):
                view = full[0].questions[bytes.fromhex(q[2:])]
                assert (view.status, view.outcome) == (Status.PROPOSED, i % 2)
                assert view.proof_hash == "0x" + "ab" * 20
            started = loop.time()
            partial = await asyncio.gather(*(submitter.enqueue(answer(q)) for q in qids[3:]))
            assert loop.time() - started >= 0.5  # two answers: sent when the wait ran out
            assert partial[0] == partial[1]
            batch = partial[0].carriers[bytes.fromhex(qids[3][2:])]
            assert batch is not None
            assert batch.state == IntentState.CONFIRMED
            for q in qids:
                assert (await oracle.get_question(q)).status == Status.PROPOSED
            # Already proposed: nothing left to send.
            assert await submitter.propose_batch([answer(q) for q in qids]) is None
            assert await submitter._recorded_proposal_done(batch)
            return oracle.address

    address = asyncio.run(run())
    proposals = proposals_on_chain(anvil, address)
    assert len(proposals) == 5
    assert len({p["tx"] for p in proposals}) == 2  # two transactions


def test_multi_operator_signatures(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()
    operators = [LocalSigner(DEV_KEYS[2]), LocalSigner(DEV_KEYS[3])]

    async def run() -> str:
        async with manager_for(anvil.url) as manager:
            deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
            oracle = AgentOracle(manager.pool, deployment.address(ORACLE))
            for op in operators:
                await manager.submit(TxRequest(
                    key=f"op:{op.address}", to=oracle.address,
                    data=oracle.encode("grantRole", op.address, int(Role.OPERATOR)),
                ))  # fmt: skip
            await manager.submit(
                TxRequest(key="threshold", to=oracle.address, data=oracle.encode("setThreshold", 2))
            )
            assert (await oracle.config()).threshold == 2
            qids = [
                (
                    await ask(manager, oracle.address, text=f"m{i}", earliest_time=FAR_PAST)
                ).question_id
                for i in range(3)
            ]
            # Too few operator signers: refused before anything is sent.
            with pytest.raises(ValueError, match="needs 2 operator signatures"):
                await ProposalSubmitter(manager, oracle, operators=operators[:1]).propose(
                    answer(qids[0])
                )
            submitter = ProposalSubmitter(manager, oracle, operators=operators)
            single = await submitter.propose(answer(qids[0], INVALID_OUTCOME))
            assert single.state == IntentState.CONFIRMED
            batch = await submitter.propose_batch([answer(qids[1], 0), answer(qids[2], 1)])
            assert batch is not None
            assert batch.state == IntentState.CONFIRMED
            items = [
                SignedProposal(bytes.fromhex(q[2:]), 0, o, b"\xab" * 20)
                for q, o in ((qids[1], 0), (qids[2], 1))
            ]
            typed = batch_typed_data(31337, oracle.address, items)
            assert digest(typed) == await oracle.batch_digest(
                [(i.question_id, i.outcome, i.proof_hash) for i in items]
            )
            q0 = await oracle.get_question(qids[0])
            assert (q0.status, q0.outcome) == (Status.PROPOSED, INVALID_OUTCOME)
            return oracle.address

    address = asyncio.run(run())
    assert len(proposals_on_chain(anvil, address)) == 3


def test_settle_and_conditional_tokens_payouts(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as manager:
            deployment = await deploy_oracle(manager)
            oracle = AgentOracle(manager.pool, deployment.address(ORACLE))
            adapter = ConditionalTokensAdapter(manager.pool, deployment.address(ADAPTER))
            tokens = ConditionalTokens(manager.pool, deployment.address(CONDITIONAL_TOKENS))
            qids = []
            for i in range(2):
                text = f"ct {i}".encode()
                data = adapter.encode("prepareQuestion", text, 2, FAR_PAST, 60, bytes(32))
                prepared = await manager.submit(
                    TxRequest(key=f"prepare:{i}", to=adapter.address, data=data)
                )
                assert prepared.state == IntentState.CONFIRMED
                # The adapter is the requester; its oracle salt is keccak(caller, salt).
                qids.append(
                    question_id(
                        adapter.address, text, outcome_count=2, earliest_time=FAR_PAST,
                        liveness=60, callback=adapter.address, salt=_salt(manager.address),
                    )
                )  # fmt: skip
            submitter = ProposalSubmitter(manager, oracle)
            for qid, outcome in zip(qids, (0, 1), strict=True):
                assert (await oracle.get_question(qid)).callback == adapter.address
                await submitter.propose(answer("0x" + qid.hex(), outcome))
                assert await submitter.settle(qid) is None  # window still open
            anvil.rpc("evm_increaseTime", 601)
            anvil.mine()
            # First question: settle; its callback reports the payouts.
            settled = await submitter.settle(qids[0])
            assert settled is not None
            assert settled.intent is not None
            assert settled.intent.state == IntentState.CONFIRMED
            assert settled.delivered
            assert (await oracle.get_question(qids[0])).settled
            skipped = await submitter.report_payouts(adapter, qids[0])
            assert skipped is not None
            assert skipped.state == IntentState.SKIPPED
            # Second question: the adapter's own payout report, then settle.
            reported = await submitter.report_payouts(adapter, qids[1])
            assert reported is not None
            assert reported.state == IntentState.CONFIRMED
            for qid, payouts in zip(qids, ([1, 0], [0, 1]), strict=True):
                condition = await tokens.condition_id(adapter.address, qid, 2)
                assert await tokens.payout_denominator(condition) == 1
                assert await tokens.payouts(condition, 2) == payouts

    asyncio.run(run())


def test_a_failed_callback_is_settled_again_until_it_takes_the_answer(
    anvil_factory: AnvilFactory,
) -> None:
    anvil = anvil_factory()
    consumer = "0x00000000000000000000000000000000000c0de5"  # no code yet: the call fails

    async def run() -> list[Any]:
        async with manager_for(anvil.url) as manager:
            deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
            oracle = AgentOracle(manager.pool, deployment.address(ORACLE))
            asked = await ask(
                manager, oracle.address, text="cb", earliest_time=FAR_PAST, callback=consumer
            )
            qid = bytes.fromhex(asked.question_id[2:])
            submitter = ProposalSubmitter(
                manager, oracle, settings=SubmitterSettings(settle_attempts=3)
            )
            await submitter.propose(answer(asked.question_id))
            anvil.rpc("evm_increaseTime", 601)
            anvil.mine()
            first = await submitter.settle(qid)
            again = await submitter.settle(qid)  # still no code: the second attempt fails too
            anvil.rpc("anvil_setCode", consumer, "0x00")  # deployed: takes any call
            delivered = await submitter.settle(qid)
            after = await submitter.settle(qid)  # delivered: nothing more is sent
            return [first, again, delivered, after]

    first, again, delivered, after = asyncio.run(run())
    assert (first.delivered, first.attempts_left) == (False, 2)
    assert (again.delivered, again.attempts_left) == (False, 1)
    assert (delivered.delivered, delivered.attempts_left) == (True, 0)
    assert after.delivered
    assert after.intent == delivered.intent
    keys = [s.intent.key for s in (first, again, delivered)]
    assert len(set(keys)) == 3, "each attempt is its own transaction"
    settles = [r for r in sender_txs(anvil, REPORTER) if r["to"] and len(r["logs"]) == 1]
    assert all(int(r["status"], 16) == 1 for r in settles)


def _salt(caller: str) -> bytes:
    return keccak(Web3().codec.encode(["address", "bytes32"], [caller, bytes(32)]))


def test_reorg_after_inclusion_proposal_ends_on_chain_once(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture
) -> None:
    capture(caplog)
    anvil = anvil_factory("--no-mining")

    async def run() -> str:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store, confirmations=3) as manager:
            async with mining(anvil, 0.05):
                deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
                oracle = AgentOracle(manager.pool, deployment.address(ORACLE))
                qid = (
                    await ask(manager, oracle.address, text="r", earliest_time=FAR_PAST)
                ).question_id
            submitter = ProposalSubmitter(manager, oracle)
            task = asyncio.create_task(submitter.propose(answer(qid, 0)))
            key = f"propose:{qid}:0"
            await wait_for_state(store, key, IntentState.BROADCAST)
            snapshot = anvil.rpc("evm_snapshot")
            anvil.mine()
            mined = await wait_for_state(store, key, IntentState.MINED)
            assert (await oracle.get_question(qid)).status == Status.PROPOSED
            anvil.rpc("evm_revert", snapshot)  # the block with the proposal is gone
            assert (await oracle.get_question(qid)).status == Status.REQUESTED
            await asyncio.sleep(0.3)
            async with mining(anvil, 0.05):
                final = await task
            assert final.state == IntentState.CONFIRMED
            assert final.inclusion is not None
            assert mined.inclusion is not None
            assert final.inclusion.block_hash != mined.inclusion.block_hash
            assert (await oracle.get_question(qid)).status == Status.PROPOSED
            return oracle.address

    address = asyncio.run(run())
    assert events(caplog, "tx.reorged")
    assert len(proposals_on_chain(anvil, address)) == 1
    assert all(r["status"] == "0x1" for r in sender_txs(anvil, REPORTER))


def test_events_are_logged_without_secrets(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as manager:
            await manager.submit(TxRequest(key="x", to=DEV_ADDRESSES[1], value=1))

    asyncio.run(run())
    assert events(caplog, "tx.confirmed")
    assert DEV_KEYS[0][2:] not in caplog.text
    assert anvil.balance(DEV_ADDRESSES[1]) == 10_000 * 10**18 + 1


@pytest.mark.parametrize("tracing", [True, False])
def test_a_reverted_duplicate_is_named_or_explained(
    anvil_factory: AnvilFactory, monkeypatch: pytest.MonkeyPatch, tracing: bool
) -> None:
    """Two proposals of one question in one block: the second reverts. With a trace the
    custom error is named; a node without tracing still gets a reason, not just "no data"."""
    anvil = anvil_factory()

    async def run() -> Intent:
        async with manager_for(anvil.url, decoder=error_decoder()) as manager:
            deployment = await deploy_oracle(manager, deploy_conditional_tokens=False)
            oracle = AgentOracle(manager.pool, deployment.address(ORACLE))
            qid = (await ask(manager, oracle.address, text="q", earliest_time=FAR_PAST)).question_id
            if not tracing:
                request = manager.pool.request

                async def no_trace(method: str, params: Any = ()) -> Any:
                    if method == "debug_traceTransaction":
                        raise RuntimeError("the method debug_traceTransaction does not exist")
                    return await request(method, params)

                monkeypatch.setattr(manager.pool, "request", no_trace)
            anvil.rpc("evm_setAutomine", False)
            data = oracle.encode("propose", *answer(qid).as_tuple())
            await manager.send(TxRequest(key="first", to=oracle.address, data=data))
            await manager.send(TxRequest(key="second", to=oracle.address, data=data))
            anvil.mine()
            assert (await manager.wait("first")).state == IntentState.CONFIRMED
            return await manager.wait("second")

    second = asyncio.run(run())
    assert second.state == IntentState.REVERTED
    if tracing:
        assert second.error_name == "InvalidStatus"
        assert second.error is not None
        assert "status=2" in second.error  # Proposed
    else:
        assert second.error_name == "Empty"
        assert "earlier transaction in that block" in (second.error or "")
