"""The transaction manager against real anvil nodes; each test ends on on-chain state."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from eth_account import Account
from web3 import Web3

from oracle.chain.fees import GWEI
from oracle.chain.intents import InMemoryIntentStore, Intent, IntentState
from oracle.chain.revert import ErrorDecoder
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import SubjectsHeld, TxReverted
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory, dead_url
from tests.chain.helpers import (
    RECIPIENT,
    capture,
    events,
    manager_for,
    mining,
    reverter_artifact,
    sender_txs,
    wait_for_state,
)

SENDER = DEV_ADDRESSES[0]


def transfer(key: str, value: int = 1) -> TxRequest:
    return TxRequest(key=key, to=RECIPIENT, value=value)


def take_our_nonce(anvil: Anvil, tx_hash: str) -> None:
    """Drop our pending transaction, and have someone else sign nonce 0 with our key."""
    anvil.rpc("anvil_dropTransaction", tx_hash)
    foreign = Account.sign_transaction(
        {"to": DEV_ADDRESSES[1], "value": 1, "gas": 21000, "maxFeePerGas": 10 * GWEI,
         "maxPriorityFeePerGas": GWEI, "nonce": 0, "chainId": 31337, "type": 2},
        DEV_KEYS[0],
    )  # fmt: skip
    anvil.rpc("eth_sendRawTransaction", "0x" + foreign.raw_transaction.hex())


def test_automine_concurrent_submissions_get_distinct_nonces(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as manager:
            intents = await asyncio.gather(
                *(manager.submit(transfer(f"t{i}", value=1000 + i)) for i in range(8))
            )
            assert sorted(i.nonce for i in intents if i.nonce is not None) == list(range(8))
            assert all(i.state == IntentState.CONFIRMED for i in intents)

    asyncio.run(run())
    assert anvil.nonce(SENDER) == 8
    assert anvil.balance(RECIPIENT) == sum(1000 + i for i in range(8))
    assert all(r["status"] == "0x1" for r in sender_txs(anvil, SENDER))


def test_interval_mining_waits_for_confirmation_depth(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory("--block-time", "0.3")

    async def run() -> int:
        async with manager_for(anvil.url, confirmations=3) as manager:
            intent = await manager.submit(transfer("interval", 5))
            assert intent.state == IntentState.CONFIRMED
            assert intent.inclusion is not None
            head = await manager._head()
            assert head - intent.inclusion.block_number + 1 >= 3
            return intent.inclusion.block_number

    block = asyncio.run(run())
    assert anvil.balance(RECIPIENT) == 5
    assert anvil.block(block)["transactions"]


def test_idempotency_key_and_pre_send_check(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store) as manager:
            first = await manager.submit(transfer("once", 7))
            again = await manager.submit(transfer("once", 7))
            assert again == first
            both = await asyncio.gather(
                manager.submit(transfer("twice", 3)), manager.submit(transfer("twice", 3))
            )
            assert both[0] == both[1]

            async def already_done() -> bool:
                return True

            skipped = await manager.submit(
                TxRequest(key="done", to=RECIPIENT, value=11, already_done=already_done)
            )
            assert skipped.state == IntentState.SKIPPED
            assert skipped.attempts == ()

    asyncio.run(run())
    assert anvil.balance(RECIPIENT) == 10
    assert anvil.nonce(SENDER) == 2


def test_reverts_decoded_before_and_after_sending(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()
    artifact = reverter_artifact()
    contract = Web3().eth.contract(abi=artifact["abi"])

    async def run() -> None:
        decoder = ErrorDecoder(artifact["abi"])
        async with manager_for(anvil.url, decoder=decoder) as manager:
            deployed = await manager.submit(
                TxRequest(key="deploy", to=None, data=artifact["bytecode"])
            )
            assert deployed.inclusion is not None
            address = deployed.inclusion.contract_address
            assert address is not None
            fail = contract.encode_abi("fail", [42])
            with pytest.raises(TxReverted) as caught:
                await manager.submit(TxRequest(key="fail", to=address, data=fail))
            assert caught.value.name == "NotAllowed"
            assert "code=42" in str(caught.value)
            assert await manager._store.get("fail") is None
            # With an explicit gas limit there is no estimate: it is mined and reverts.
            mined = await manager.submit(
                TxRequest(key="fail-mined", to=address, data=fail, gas_limit=100_000)
            )
            assert mined.state == IntentState.REVERTED
            assert mined.error_name == "NotAllowed"
            assert mined.error is not None
            assert "code=42" in mined.error
            exhaust = contract.encode_abi("exhaust", [])
            with pytest.raises(TxReverted, match=r"Exhausted\(tag=0x746167.*values=\[7, 9\]\)"):
                await manager.submit(TxRequest(key="exhaust", to=address, data=exhaust))

    asyncio.run(run())
    receipts = sender_txs(anvil, SENDER)
    assert [r["status"] for r in receipts] == ["0x1", "0x0"]


def test_dropped_transaction_is_sent_again(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture
) -> None:
    capture(caplog)
    anvil = anvil_factory("--no-mining")

    async def run() -> None:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store) as manager:
            sent = await manager.send(transfer("drop-me", 9))
            assert sent.state == IntentState.BROADCAST
            anvil.rpc("anvil_dropTransaction", sent.latest.tx_hash)
            assert anvil.rpc("eth_getTransactionByHash", sent.latest.tx_hash) is None
            await asyncio.sleep(0.3)  # the manager notices before any block is mined
            async with mining(anvil):
                final = await manager.wait("drop-me")
            assert final.state == IntentState.CONFIRMED

    asyncio.run(run())
    assert events(caplog, "tx.dropped")
    assert events(caplog, "tx.rebroadcast")
    assert anvil.balance(RECIPIENT) == 9
    assert len(sender_txs(anvil, SENDER)) == 1


def test_base_fee_spike_within_cap_is_outbid(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture
) -> None:
    capture(caplog)
    anvil = anvil_factory("--no-mining")
    cap = 60

    async def run() -> None:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store, max_fee_per_gas_gwei=cap) as manager:
            sent = await manager.send(transfer("spike", 4))
            assert sent.latest.max_fee_per_gas < 10 * GWEI
            anvil.rpc("anvil_setNextBlockBaseFeePerGas", hex(20 * GWEI))
            async with mining(anvil, 0.15):
                final = await manager.wait("spike")
            assert final.state == IntentState.CONFIRMED
            assert len(final.attempts) >= 2
            assert all(a.max_fee_per_gas <= cap * GWEI for a in final.attempts)
            for old, new in zip(final.attempts, final.attempts[1:], strict=False):
                assert new.max_fee_per_gas * 10 >= old.max_fee_per_gas * 11
                assert new.max_priority_fee_per_gas * 10 >= old.max_priority_fee_per_gas * 11
            assert final.inclusion is not None
            assert final.inclusion.tx_hash != final.attempts[0].tx_hash

    asyncio.run(run())
    assert events(caplog, "tx.replaced")
    assert anvil.balance(RECIPIENT) == 4
    (receipt,) = sender_txs(anvil, SENDER)
    assert int(receipt["effectiveGasPrice"], 16) <= cap * GWEI


def test_base_fee_above_cap_waits_instead_of_overpaying(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture
) -> None:
    capture(caplog)
    anvil = anvil_factory("--no-mining")
    cap = 8

    async def run() -> None:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store, max_fee_per_gas_gwei=cap) as manager:
            # A pending transaction caught by the spike: it may not be bumped past the cap.
            stuck = await manager.send(transfer("stuck", 2))
            anvil.rpc("anvil_setNextBlockBaseFeePerGas", hex(100 * GWEI))
            anvil.mine()
            # A new one: nothing is signed while the base fee is above the cap.
            fresh = asyncio.create_task(manager.submit(transfer("fresh", 3)))
            await asyncio.sleep(0.5)
            assert not fresh.done()
            assert await store.get("fresh") is None  # recorded before any broadcast
            assert anvil.nonce(SENDER, "pending") <= 1
            async with mining(anvil, 0.05):
                done = await fresh
                final_stuck = await manager.wait("stuck")
            for intent in (done, final_stuck):
                assert intent.state == IntentState.CONFIRMED
                assert all(a.max_fee_per_gas <= cap * GWEI for a in intent.attempts)
            assert stuck.nonce == 0
            assert done.nonce == 1

    asyncio.run(run())
    above = events(caplog, "tx.fee_above_cap")
    assert above
    assert above[0]["key"] == "fresh"
    assert above[0]["cap_gwei"] == cap
    assert events(caplog, "tx.fee_cap_reached")
    assert anvil.balance(RECIPIENT) == 5
    receipts = sender_txs(anvil, SENDER)
    assert len(receipts) == 2
    assert all(int(r["effectiveGasPrice"], 16) <= cap * GWEI for r in receipts)


def test_anvil_restart_from_saved_state(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture, tmp_path: Path
) -> None:
    capture(caplog)
    state = tmp_path / "anvil-state.json"
    anvil = anvil_factory("--no-mining", state=state)

    async def run() -> None:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store, confirmations=2) as manager:
            async with mining(anvil):
                before = await manager.submit(transfer("before", 100))
            assert before.state == IntentState.CONFIRMED
            pending = await manager.send(transfer("in-flight", 20))
            assert pending.state == IntentState.BROADCAST
            anvil.stop()  # SIGTERM: anvil writes its state file
            during = asyncio.create_task(manager.submit(transfer("while-down", 3)))
            await asyncio.sleep(1.0)
            assert not during.done()
            anvil.start()
            async with mining(anvil):
                results = await asyncio.gather(during, manager.wait("in-flight"))
            assert [r.state for r in results] == [IntentState.CONFIRMED] * 2
            assert sorted(r.nonce for r in (before, *results) if r.nonce is not None) == [0, 1, 2]

    asyncio.run(run())
    assert events(caplog, "tx.rpc_unavailable") or events(caplog, "rpc.node_down")
    assert anvil.balance(RECIPIENT) == 123
    assert anvil.nonce(SENDER) == 3
    assert len(sender_txs(anvil, SENDER)) == 3


def test_reorg_after_inclusion_sends_again(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture
) -> None:
    capture(caplog)
    anvil = anvil_factory("--no-mining")

    async def run() -> None:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store, confirmations=3) as manager:
            await manager.send(transfer("reorged", 6))
            anvil.mine()
            mined = await wait_for_state(store, "reorged", IntentState.MINED)
            assert mined.inclusion is not None
            anvil.rpc("anvil_reorg", 1, [])
            assert anvil.rpc("eth_getTransactionReceipt", mined.inclusion.tx_hash) is None
            await asyncio.sleep(0.3)
            async with mining(anvil):
                final = await manager.wait("reorged")
            assert final.state == IntentState.CONFIRMED
            assert final.inclusion is not None
            assert final.inclusion.block_hash != mined.inclusion.block_hash

    asyncio.run(run())
    assert events(caplog, "tx.reorged")
    assert anvil.balance(RECIPIENT) == 6
    assert len(sender_txs(anvil, SENDER)) == 1


def test_nonce_gap_is_filled(anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture) -> None:
    capture(caplog)
    anvil = anvil_factory("--no-mining")

    async def run() -> None:
        store = InMemoryIntentStore()
        # Someone else used the key: nonce 0 sits in the pool, so ours gets nonce 1 ...
        external = Account.sign_transaction(
            {
                "to": RECIPIENT,
                "value": 1,
                "gas": 21000,
                "maxFeePerGas": 10 * GWEI,
                "maxPriorityFeePerGas": GWEI,
                "nonce": 0,
                "chainId": 31337,
                "type": 2,
            },
            DEV_KEYS[0],
        )
        anvil.rpc("eth_sendRawTransaction", "0x" + external.raw_transaction.hex())
        async with manager_for(anvil.url, store=store) as manager:
            sent = await manager.send(transfer("after-gap", 50))
            assert sent.nonce == 1
            # ... and then it vanished from the pool: nonce 0 is a gap nothing will fill.
            anvil.rpc("anvil_dropTransaction", "0x" + external.hash.hex())
            async with mining(anvil):
                final = await manager.wait("after-gap")
                filler = await wait_for_state(
                    store, f"nonce-fill:{SENDER}:0", IntentState.CONFIRMED
                )
            assert final.state == IntentState.CONFIRMED
            assert filler.nonce == 0

    asyncio.run(run())
    assert events(caplog, "tx.nonce_gap")
    assert anvil.nonce(SENDER) == 2
    assert anvil.balance(RECIPIENT) == 50
    receipts = sender_txs(anvil, SENDER)
    assert {r["to"].lower() for r in receipts} == {SENDER.lower(), RECIPIENT.lower()}


def test_nonce_too_low_resyncs(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture
) -> None:
    capture(caplog)
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as manager:
            await manager.submit(transfer("first", 1))
            real = manager._nonce_at
            stale = {"left": 1}

            async def stale_view(block: str) -> int:  # a node that lags one block behind
                if block == "pending" and stale["left"]:
                    stale["left"] -= 1
                    return 0
                return await real(block)  # type: ignore[arg-type]

            manager._nonce_at = stale_view  # type: ignore[assignment,method-assign]
            manager._book._next = 0  # the local counter also missed the first one
            second = await manager.submit(transfer("second", 2))
            assert second.state == IntentState.CONFIRMED
            assert second.nonce == 1

    asyncio.run(run())
    assert events(caplog, "tx.nonce_too_low")
    assert anvil.nonce(SENDER) == 2
    assert anvil.balance(RECIPIENT) == 3


def test_one_of_two_rpc_urls_dead(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for([dead_url(), anvil.url]) as manager:
            intent = await manager.submit(transfer("via-live", 12))
            assert intent.state == IntentState.CONFIRMED
            status = manager._pool.status()
            assert not status[0].up
            assert status[1].up

    asyncio.run(run())
    assert anvil.balance(RECIPIENT) == 12


@pytest.mark.parametrize("checked", [False, True])
def test_nonce_used_by_a_foreign_transaction(
    anvil_factory: AnvilFactory, caplog: pytest.LogCaptureFixture, checked: bool
) -> None:
    capture(caplog)
    anvil = anvil_factory("--no-mining")

    async def not_done() -> bool:
        return False

    async def run() -> None:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store) as manager:
            request = TxRequest(
                key="ours", to=RECIPIENT, value=8, already_done=not_done if checked else None
            )
            sent = await manager.send(request)
            assert sent.nonce == 0
            take_our_nonce(anvil, sent.latest.tx_hash)  # and that one is mined
            async with mining(anvil):
                final = await manager.wait("ours")
            if checked:  # the check says "not done": sent again under a fresh nonce
                assert final.state == IntentState.CONFIRMED
                assert final.nonce == 1
                assert sent.latest.tx_hash in final.superseded_hashes
            else:  # no way to know: never re-signed on its own
                assert final.state == IntentState.FAILED
                assert final.error is not None
                assert "no pre-send check" in final.error

    asyncio.run(run())
    assert events(caplog, "tx.nonce_consumed")
    assert anvil.balance(RECIPIENT) == (8 if checked else 0)
    assert anvil.nonce(SENDER) == (2 if checked else 1)


def test_just_checked_skips_the_first_check_only(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory("--no-mining")
    checks = 0

    async def done() -> bool:
        nonlocal checks
        checks += 1
        return True

    async def run() -> None:
        async with manager_for(anvil.url) as manager:
            request = TxRequest(
                key="ours", to=RECIPIENT, value=8, already_done=done, just_checked=True
            )
            sent = await manager.send(request)  # the caller just checked: sent, no check
            assert checks == 0
            assert sent.state == IntentState.BROADCAST
            take_our_nonce(anvil, sent.latest.tx_hash)
            async with mining(anvil):
                final = await manager.wait("ours")
            assert checks == 1  # our nonce taken: the check runs, and says done
            assert final.state == IntentState.SKIPPED

    asyncio.run(run())
    assert anvil.balance(RECIPIENT) == 0
    assert anvil.nonce(SENDER) == 1


def held(key: str, subject: str, value: int = 1) -> TxRequest:
    return TxRequest(key=key, to=RECIPIENT, value=value, subjects=(subject,))


def test_a_subject_is_in_one_transaction_only(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory("--no-mining")

    async def run() -> None:
        store = InMemoryIntentStore()
        async with manager_for(anvil.url, store=store) as manager:
            first = await manager.send(held("first", "question-1", 5))
            # Another key for the same subject, while the first is only in the mempool.
            with pytest.raises(SubjectsHeld) as raised:
                await manager.send(held("second", "question-1", 7))
            assert raised.value.holders == {"question-1": "first"}
            assert await store.get("second") is None
            assert anvil.nonce(SENDER, "pending") == 1  # one transaction sent, not two
            anvil.mine()
            assert (await manager.wait("first")).state == IntentState.CONFIRMED
            # Confirmed, it still holds the subject: the action is done.
            with pytest.raises(SubjectsHeld):
                await manager.send(held("second", "question-1", 7))
            holders = await manager.holders(["question-1"])
            assert holders["question-1"].key == first.key

    asyncio.run(run())
    assert anvil.balance(RECIPIENT) == 5


class _DiesBeforeBroadcast(InMemoryIntentStore):
    """Records a signed intent, then the process "dies" before broadcasting it."""

    async def put(self, intent: Intent) -> None:
        await super().put(intent)
        if intent.state == IntentState.SIGNED:
            raise _Died


class _Died(Exception):
    pass


def _recorded_unsent(store: InMemoryIntentStore, anvil: Anvil, key: str) -> Intent:
    async def run() -> None:
        async with manager_for(anvil.url, store=_DiesBeforeBroadcast()) as dying:
            with pytest.raises(_Died):
                await dying.send(held(key, f"subject-of-{key}", 9))
            recorded = await dying._store.get(key)
            assert recorded is not None
            await store.put(recorded)

    asyncio.run(run())
    intent = asyncio.run(store.get(key))
    assert intent is not None
    assert intent.state == IntentState.SIGNED
    return intent


def test_a_recorded_unsent_intent_is_checked_again_before_it_is_sent(
    anvil_factory: AnvilFactory,
) -> None:
    anvil = anvil_factory()
    store = InMemoryIntentStore()
    recorded = _recorded_unsent(store, anvil, "late")

    async def run() -> Intent:
        async with manager_for(anvil.url, store=store) as manager:

            async def done_meanwhile(_: Intent) -> bool:
                return True  # e.g. another replica proposed the question meanwhile

            manager.register_precheck("late", done_meanwhile)
            (recovered,) = await manager.recover()
            return recovered

    recovered = asyncio.run(run())
    assert recovered.state == IntentState.SKIPPED
    assert anvil.rpc("eth_getTransactionByHash", recorded.latest.tx_hash) is None
    assert anvil.balance(RECIPIENT) == 0
    assert asyncio.run(store.holders([f"subject-of-{recorded.key}"])) == {}


def test_another_signers_intent_is_relayed_never_driven(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()
    store = InMemoryIntentStore()  # shared by two replicas with their own keys
    recorded = _recorded_unsent(store, anvil, "theirs")

    async def run() -> None:
        async with manager_for(anvil.url, store=store, key=DEV_KEYS[2]) as other:
            # The same key: it is the first replica's intent, not this one's to sign.
            with pytest.raises(SubjectsHeld):
                await other.send(held("theirs", "subject-of-theirs", 9))
            assert await other.resume() == []  # only its own signer's intents
            assert await other.relay(recorded)  # lost by the node: sent again as signed
            assert not await other.relay(recorded)  # known now: nothing to do

    asyncio.run(run())
    receipt = anvil.rpc("eth_getTransactionReceipt", recorded.latest.tx_hash)
    assert receipt["from"].lower() == SENDER.lower()
    assert anvil.balance(RECIPIENT) == 9
    assert sender_txs(anvil, DEV_ADDRESSES[2]) == []


def test_submit_once_sends_an_action_once_or_follows_what_carries_it(
    anvil_factory: AnvilFactory,
) -> None:
    """`submit_once`: a recorded intent carries its action (a dead replica's is relayed,
    not signed again); an intent of another key holding the same subject carries it too,
    not one holding only part of a batch's; a reverted or failed one is tried again."""
    anvil = anvil_factory()
    store = InMemoryIntentStore()  # shared by two replicas with their own keys
    recorded = _recorded_unsent(store, anvil, "theirs")
    built: list[str] = []

    def sending(manager: TxManager, request: TxRequest) -> Callable[[], Awaitable[Intent]]:
        async def send() -> Intent:
            built.append(request.key)
            return await manager.submit(request)

        return send

    async def run() -> None:
        async with manager_for(anvil.url, store=store, key=DEV_KEYS[2]) as ours:
            carried = await ours.submit_once(
                "theirs", sending(ours, held("theirs", "subject-of-theirs", 9))
            )
            assert carried.key == "theirs"
            assert carried.sender.lower() == SENDER.lower()

            first = await ours.submit_once("mine", sending(ours, held("mine", "question", 3)))
            assert first.state == IntentState.CONFIRMED
            again = await ours.submit_once("mine", sending(ours, held("mine", "question", 3)))
            assert again == first
            other_key = await ours.submit_once("also", sending(ours, held("also", "question", 4)))
            assert other_key == first, "the subject's holder carries the action"
            batch = TxRequest(key="batch", to=RECIPIENT, value=5, subjects=("question", "more"))
            with pytest.raises(SubjectsHeld):  # held in part: no one intent carries it
                await ours.submit_once("batch", sending(ours, batch))

            await store.put(
                first.model_copy(
                    update={"key": "retry", "state": IntentState.REVERTED, "subjects": ()}
                )
            )
            retried = await ours.submit_once("retry", sending(ours, transfer("retry", 2)))
            assert retried.state == IntentState.CONFIRMED
            assert retried.hashes != first.hashes

    asyncio.run(run())
    assert built == ["mine", "also", "batch", "retry"], "built where nothing carried it"
    assert anvil.rpc("eth_getTransactionReceipt", recorded.latest.tx_hash)["status"] == "0x1"
    assert anvil.balance(RECIPIENT) == 9 + 3 + 2
    assert len(sender_txs(anvil, DEV_ADDRESSES[2])) == 2
