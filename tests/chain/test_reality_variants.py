"""Reality.eth's other contracts on anvil, real bytecode compiled from @reality.eth/contracts:
v2.1 (`Realitio_v2_1`, where Omen asks on Gnosis chain) and v3 with ERC-20 bonds
(`RealityETH_ERC20_v3_0`), each asked, answered, countered, defended, finalized and
claimed with exact books; claims of several questions in one
`claimMultipleAndWithdrawBalance`; the deployment probe that tells the contracts apart;
v2.1's claim rule (the bounty queued with the bonds) against the contract on random
histories."""

from __future__ import annotations

import asyncio
import contextlib
import random
from typing import Any

import pytest

from oracle.chain.checkpoint import InMemoryCheckpointStore
from oracle.chain.contracts import encode_call
from oracle.chain.deploy import creation_code
from oracle.chain.erc20 import TESTNET_ERC20, Erc20
from oracle.chain.intents import InMemoryIntentStore, Intent, IntentState
from oracle.chain.keys import LocalSigner
from oracle.chain.settings import ScannerSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import BondShortfall
from oracle.venues.reality.binding import (
    APPROVE_PREFIX,
    CLAIM_MANY_PREFIX,
    QuestionSource,
    RealitioV21,
    RealityAnswerer,
    RealityETH,
    RealityETHERC20,
    ask_question,
    deploy_arbitrator,
    deploy_reality,
    reality_contract,
)
from oracle.venues.reality.rules import (
    NULL_HASH,
    TOO_SOON_ANSWER,
    Phase,
    QuestionKind,
    claim_payouts,
    encode_answer,
    encode_question_text,
)
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory
from tests.chain.helpers import manager_for, mining, sender_txs

ETHER = 10**18
BOND = ETHER // 10
BOUNTY = ETHER // 4
TIMEOUT = 86400  # Omen's
FEE = ETHER // 100
ASKER, OURS, OTHER = DEV_ADDRESSES[1], DEV_ADDRESSES[2], DEV_ADDRESSES[3]
# As Omen asks: single-select with Yes / No, a category and a language.
OMEN_TEXT = encode_question_text(
    QuestionKind.SINGLE_SELECT,
    "Will the Gnosis chain process more than 1M transactions on 1 May 2026?",
    outcomes=["Yes", "No"],
    category="technology",
    language="en_US",
)
BOOL_TEXT = encode_question_text(QuestionKind.BOOL, "Did it rain in Paris on 1 June?")


def gas_cost(*intents: Intent | None) -> int:
    total = 0
    for intent in intents:
        if intent is not None and intent.inclusion is not None:
            total += intent.inclusion.gas_used * intent.inclusion.effective_gas_price
    return total


def reverted(anvil: Anvil) -> list[dict[str, Any]]:
    return [r for r in anvil.receipts_in_chain() if int(r["status"], 16) != 1]


def elapse(anvil: Anvil, seconds: int) -> None:
    anvil.rpc("evm_increaseTime", seconds)
    anvil.mine()


async def deploy_token(manager: TxManager, holders: list[str], amount: int) -> str:
    """UMA's TestnetERC20 (the bond token), `amount` minted to each of `holders`."""
    intent = await manager.submit(
        TxRequest(key="token", to=None, data=creation_code(TESTNET_ERC20, "Bond", "BOND", 18))
    )
    assert intent.inclusion is not None
    assert intent.inclusion.contract_address is not None
    token = intent.inclusion.contract_address
    for holder in holders:
        minted = await manager.submit(
            TxRequest(
                key=f"mint:{holder}",
                to=token,
                data=encode_call(TESTNET_ERC20, "allocateTo", holder, amount),
            )
        )
        assert minted.state == IntentState.CONFIRMED
    return str(token)


def test_v2_1_an_omen_question_answered_countered_defended_claimed(
    anvil_factory: AnvilFactory,
) -> None:
    """On Realitio_v2_1: an Omen-style question (single-select Yes/No, no minimum bond)
    found by the scanner with the id `ask_question` derives (v2.1's rule: no contract
    address in it), answered Yes, countered No at double, defended at double again,
    finalized and claimed: the bounty and every bond, less the 1/40 withheld, to the
    wei."""
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as deployer:
            reality = await deploy_reality(deployer, run="v21", version="v2.1")
            arbitrator = await deploy_arbitrator(deployer, reality, FEE, run="v21")
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            contract = reality_contract(asker.pool, reality, version="v2.1")
            assert isinstance(contract, RealitioV21)
            latest = anvil.rpc("eth_getBlockByNumber", "latest", False)
            qid = await ask_question(
                asker,
                reality,
                template_id=2,
                text=OMEN_TEXT,
                arbitrator=arbitrator,
                timeout=TIMEOUT,
                opening_ts=int(latest["timestamp"], 16),
                nonce=7,
                bounty=BOUNTY,
                contract=contract,
            )
            source = QuestionSource(
                asker.pool, reality, InMemoryCheckpointStore(), ScannerSettings(confirmations=0)
            )
            (found,) = await source.poll()
        assert found.question_id == qid
        question = found.question()
        assert question.outcomes == ("Yes", "No")
        yes, no = encode_answer(question, "Yes"), encode_answer(question, "No")
        ours_start, other_start = anvil.balance(OURS), anvil.balance(OTHER)
        async with (
            manager_for(anvil.url, key=DEV_KEYS[2]) as manager,
            manager_for(anvil.url, key=DEV_KEYS[3]) as other_manager,
        ):
            ours = RealityAnswerer(manager, reality_contract(manager.pool, reality, version="v2.1"))
            other = RealityAnswerer(
                other_manager, reality_contract(other_manager.pool, reality, version="v2.1")
            )
            view = await ours.reality.get_question(qid)
            assert (view.min_bond, view.phase, view.bounty) == (0, Phase.OPEN, BOUNTY)
            first = await ours.answer(qid, yes, bond=BOND)
            counter = await other.answer(qid, no)
            defence = await ours.answer(qid, yes)
            assert (first.bond, counter.bond, defence.bond) == (BOND, 2 * BOND, 4 * BOND)
            assert all(o.answered for o in (first, counter, defence))
            elapse(anvil, TIMEOUT + 1)
            view = await ours.reality.get_question(qid)
            assert view.phase == Phase.FINALIZED
            assert view.best_answer == yes
            history = [h.entry for h in await ours.reality.history(qid)]
            won = claim_payouts(
                history, best_answer=yes, final_bond=4 * BOND, bounty=BOUNTY, bounty_queued=True
            )
            expected = BOUNTY + 4 * BOND + (2 * BOND - 2 * BOND // 40) + BOND - BOND // 40
            assert won == {OURS.lower(): expected}
            claimed = await ours.claim(qid)
            assert claimed is not None
            assert claimed.withdrawn == expected
            assert await ours.reality.get_history_hash(qid) == NULL_HASH
            spent = [first.intent, defence.intent, claimed.claim, claimed.withdraw]
            assert len(sender_txs(anvil, OURS)) == 4
            assert anvil.balance(OURS) == ours_start - 5 * BOND + expected - gas_cost(*spent)
            assert anvil.balance(OTHER) == other_start - 2 * BOND - gas_cost(counter.intent)
        assert reverted(anvil) == []

    asyncio.run(run())


def test_erc20_a_question_bonded_in_a_token_with_exact_approvals(  # noqa: PLR0915
    anvil_factory: AnvilFactory,
) -> None:
    """On RealityETH_ERC20_v3_0: the bounty and every bond in the token. Each of our
    answers approves exactly its bond first (never more: the allowance is back to zero once
    the contract pulled it); claimed and withdrawn in tokens to the wei; our native balance
    pays only gas."""
    anvil = anvil_factory()
    supply = 10 * ETHER

    async def run() -> None:  # noqa: PLR0915
        async with manager_for(anvil.url) as deployer:
            token = await deploy_token(deployer, [ASKER, OURS, OTHER], supply)
            reality = await deploy_reality(deployer, run="erc20", bond_token=token)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            contract = reality_contract(asker.pool, reality, bond_token=token)
            assert isinstance(contract, RealityETHERC20)
            assert await contract.token() == token
            assert contract.currency == token
            qid = await ask_question(
                asker,
                reality,
                template_id=0,
                text=BOOL_TEXT,
                arbitrator=asker.address,
                timeout=TIMEOUT,
                min_bond=BOND,
                bounty=BOUNTY,
                contract=contract,
            )
            erc20 = Erc20(asker.pool, token)
            assert await erc20.balance_of(ASKER) == supply - BOUNTY
            assert await erc20.allowance(ASKER, reality) == 0
        yes, no = (1).to_bytes(32, "big"), bytes(32)
        native_start = anvil.balance(OURS)
        async with (
            manager_for(anvil.url, key=DEV_KEYS[2]) as manager,
            manager_for(anvil.url, key=DEV_KEYS[3]) as other_manager,
        ):
            ours = RealityAnswerer(
                manager, reality_contract(manager.pool, reality, bond_token=token)
            )
            other = RealityAnswerer(
                other_manager, reality_contract(other_manager.pool, reality, bond_token=token)
            )
            erc20 = Erc20(manager.pool, token)
            first = await ours.answer(qid, yes)
            assert first.answered
            assert (first.bond, first.intent.value) == (BOND, 0)
            approval = await manager.intent(ours.approve_key(qid, 0))
            assert approval is not None
            assert approval.state == IntentState.CONFIRMED
            _, args = erc20.decode_call(approval.data)
            assert list(args.values()) == [reality, BOND]  # exactly the bond
            assert await erc20.allowance(OURS, reality) == 0  # pulled whole
            counter = await other.answer(qid, no)
            assert counter.bond == 2 * BOND
            defence = await ours.answer(qid, yes)
            assert defence.bond == 4 * BOND
            second = await manager.intent(ours.approve_key(qid, 2 * BOND))
            assert second is not None
            assert list(erc20.decode_call(second.data)[1].values()) == [reality, 4 * BOND]
            assert await erc20.allowance(OURS, reality) == 0
            assert await erc20.balance_of(OURS) == supply - 5 * BOND
            assert await erc20.balance_of(reality) == BOUNTY + 7 * BOND
            elapse(anvil, TIMEOUT + 1)
            history = [h.entry for h in await ours.reality.history(qid)]
            expected = BOUNTY + 4 * BOND + (2 * BOND - 2 * BOND // 40) + BOND - BOND // 40
            assert claim_payouts(history, best_answer=yes, final_bond=4 * BOND, bounty=BOUNTY) == {
                OURS.lower(): expected
            }
            claimed = await ours.claim(qid)
            assert claimed is not None
            assert claimed.withdrawn == expected
            assert await erc20.balance_of(OURS) == supply - 5 * BOND + expected
            assert await erc20.balance_of(OTHER) == supply - 2 * BOND
            # 1/40 of the two bonds below the last stays in the contract.
            assert await erc20.balance_of(reality) == 2 * BOND // 40 + BOND // 40
            spent = [
                first.intent,
                defence.intent,
                approval,
                second,
                claimed.claim,
                claimed.withdraw,
            ]
            assert len(sender_txs(anvil, OURS)) == 6
            assert anvil.balance(OURS) == native_start - gas_cost(*spent)
        assert reverted(anvil) == []

    asyncio.run(run())


def test_claims_of_several_questions_go_in_one_transaction(anvil_factory: AnvilFactory) -> None:
    """Four finalized questions we answered (two countered and defended), plus one not
    finalized and one where we lost: one `claimMultipleAndWithdrawBalance` claims the four
    and withdraws, paying exactly what `claim_payouts` computes; the others are left out;
    asked again, nothing is sent."""
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as deployer:
            reality = await deploy_reality(deployer, run="batch")
        yes, no = (1).to_bytes(32, "big"), bytes(32)
        async with (
            manager_for(anvil.url, key=DEV_KEYS[1]) as asker,
            manager_for(anvil.url, key=DEV_KEYS[2]) as manager,
            manager_for(anvil.url, key=DEV_KEYS[3]) as other_manager,
        ):
            ours = RealityAnswerer(manager, RealityETH(manager.pool, reality))
            other = RealityAnswerer(other_manager, RealityETH(other_manager.pool, reality))
            assert ours.reality.has_batch_claim
            qids = []
            for number in range(6):
                qids.append(
                    await ask_question(
                        asker,
                        reality,
                        template_id=0,
                        text=BOOL_TEXT,
                        arbitrator=asker.address,
                        timeout=TIMEOUT,
                        nonce=number,
                        bounty=BOUNTY,
                    )
                )
            for qid in qids[:5]:
                assert (await ours.answer(qid, yes, bond=BOND)).answered
            for qid in qids[1:3]:  # countered, and defended
                assert (await other.answer(qid, no)).answered
                assert (await ours.answer(qid, yes)).answered
            assert (await other.answer(qids[4], no)).answered  # we lose this one
            elapse(anvil, TIMEOUT + 1)
            late = await ask_question(
                asker,
                reality,
                template_id=0,
                text=BOOL_TEXT,
                arbitrator=asker.address,
                timeout=TIMEOUT,
                nonce=99,
            )
            assert (await ours.answer(late, yes, bond=BOND)).answered  # not finalized
            expected = 0
            for qid in qids[:4]:
                view = await ours.reality.get_question(qid)
                history = [h.entry for h in await ours.reality.history(qid)]
                expected += claim_payouts(
                    history, best_answer=view.best_answer, final_bond=view.bond, bounty=BOUNTY
                )[OURS.lower()]
            before = anvil.balance(OURS)
            txs = len(sender_txs(anvil, OURS))
            wanted = [(q, 0) for q in [*qids[:4], late]]
            batch = await ours.claim_many(wanted)
            (intent,) = batch.intents
            assert intent.state == IntentState.CONFIRMED
            assert intent.key.startswith(CLAIM_MANY_PREFIX)
            assert ours.reality.decode_call(intent.data)[0] == "claimMultipleAndWithdrawBalance"
            assert set(batch.claimed) == {"0x" + q.hex() for q in qids[:4]}
            assert batch.withdrawn == expected
            assert len(sender_txs(anvil, OURS)) == txs + 1
            assert anvil.balance(OURS) == before + expected - gas_cost(intent)
            for qid in qids[:4]:
                assert await ours.reality.get_history_hash(qid) == NULL_HASH
            assert await ours.reality.get_history_hash(late) != NULL_HASH
            assert await ours.reality.balance_of(OURS) == 0
            again = await ours.claim_many(wanted)
            assert (again.intents, again.claimed, again.withdrawn) == ((), (), 0)
            assert len(sender_txs(anvil, OURS)) == txs + 1
        assert reverted(anvil) == []

    asyncio.run(run())


def test_the_deployment_probe_tells_the_contracts_apart(anvil_factory: AnvilFactory) -> None:
    """Each binding finds its own contract and names what another one is instead."""
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as deployer:
            token = await deploy_token(deployer, [], 0)
            v3 = await deploy_reality(deployer, run="p3")
            v21 = await deploy_reality(deployer, run="p21", version="v2.1")
            erc20 = await deploy_reality(deployer, run="p20", bond_token=token)
            pool = deployer.pool

            async def problem(address: str, **kind: Any) -> str | None:
                return await reality_contract(pool, address, **kind).deployment_problem()

            assert await problem(v3) is None
            assert await problem(v21, version="v2.1") is None
            assert await problem(erc20, bond_token=token) is None
            assert "not Reality.eth v3" in str(await problem(v21))
            assert "not Reality.eth v2.1" in str(await problem(v3, version="v2.1"))
            assert "set bond_token" in str(await problem(erc20))
            assert "no token()" in str(await problem(v3, bond_token=token))
            assert f"not bond_token {deployer.address}" in str(
                await problem(erc20, bond_token=deployer.address)
            )

    asyncio.run(run())


def test_v2_1_claim_rule_matches_the_contract_on_random_histories(
    anvil_factory: AnvilFactory,
) -> None:
    """Histories of up to six answers by three accounts on Realitio_v2_1, drawn at random
    (fixed seed), each with a bounty: after one claim per question every account holds
    what `claim_payouts(bounty_queued=True)` computes, to the wei. Answers are Yes, No
    and 0xff..fe: v3 pays no bounty on a question finalized as "answered too soon", v2.1
    (which knows no such answer) does, so v3's rule would have been wrong on some.
    (Otherwise the two rules credit the same: queueing the bounty moves no takeover.)"""
    anvil = anvil_factory()
    draw = random.Random(20261128)

    async def run() -> None:
        async with manager_for(anvil.url) as deployer:
            reality = await deploy_reality(deployer, run="r21", version="v2.1")
        async with contextlib.AsyncExitStack() as stack:
            managers = [
                await stack.enter_async_context(manager_for(anvil.url, key=DEV_KEYS[i]))
                for i in range(4)
            ]
            answerers = [
                RealityAnswerer(m, reality_contract(m.pool, reality, version="v2.1"))
                for m in managers
            ]
            claimer, accounts = answerers[0], answerers[1:]
            expected: dict[str, int] = {}
            differs = 0
            for number in range(10):
                qid = await ask_question(
                    managers[0],
                    reality,
                    template_id=0,
                    text=BOOL_TEXT,
                    arbitrator=managers[0].address,
                    timeout=TIMEOUT,
                    nonce=number,
                    bounty=BOUNTY,
                    contract=claimer.reality,
                )
                for _ in range(draw.randint(2, 6)):
                    answerer = draw.choice(accounts)
                    view = await answerer.reality.get_question(qid)
                    bond = max(view.next_bond, BOND // 10) * draw.choice((1, 1, 2, 3))
                    answer = draw.choice((bytes(31) + b"\x01", bytes(32), TOO_SOON_ANSWER))
                    outcome = await answerer.answer(qid, answer, bond=bond)
                    assert outcome.answered
                elapse(anvil, TIMEOUT + 1)
                view = await claimer.reality.get_question(qid)
                history = [h.entry for h in await claimer.reality.history(qid)]
                best, final = view.best_answer, view.bond
                payouts = claim_payouts(
                    history, best_answer=best, final_bond=final, bounty=BOUNTY, bounty_queued=True
                )
                v3_rule = claim_payouts(history, best_answer=best, final_bond=final, bounty=BOUNTY)
                differs += payouts != v3_rule
                for who, amount in payouts.items():
                    expected[who] = expected.get(who, 0) + amount
                claimed = await claimer.claim(qid)
                assert claimed is not None
                assert claimed.claim is not None
                assert claimed.claim.state == IntentState.CONFIRMED
            for answerer in accounts:
                address = answerer.manager.address
                assert await claimer.reality.balance_of(address) == expected.get(address.lower(), 0)
            assert differs > 0
        assert reverted(anvil) == []

    asyncio.run(run())


def test_an_erc20_answer_refused_past_the_token_balance_approves_nothing(
    anvil_factory: AnvilFactory,
) -> None:
    """Our token balance below the bond: BondShortfall names the token, and neither an
    approval nor an answer is sent."""
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as deployer:
            token = await deploy_token(deployer, [OURS], BOND - 1)
            reality = await deploy_reality(deployer, run="short", bond_token=token)
            qid = await ask_question(
                deployer,
                reality,
                template_id=0,
                text=BOOL_TEXT,
                arbitrator=deployer.address,
                timeout=TIMEOUT,
                min_bond=BOND,
                contract=reality_contract(deployer.pool, reality, bond_token=token),
            )
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            ours = RealityAnswerer(
                manager, reality_contract(manager.pool, reality, bond_token=token)
            )
            with pytest.raises(BondShortfall, match=token):
                await ours.answer(qid, (1).to_bytes(32, "big"))
            assert sender_txs(anvil, OURS) == []
            assert await manager.intent(ours.approve_key(qid, 0)) is None
            assert ours.approve_key(qid, 0).startswith(APPROVE_PREFIX)

    asyncio.run(run())


class _Died(Exception):
    pass


class _DiesBeforeBroadcastingABatch(InMemoryIntentStore):
    async def put(self, intent: Intent) -> None:
        await super().put(intent)
        if intent.state == IntentState.SIGNED and intent.key.startswith(CLAIM_MANY_PREFIX):
            raise _Died


def test_a_batch_someone_claimed_part_of_meanwhile_is_skipped_after_a_restart(
    anvil_factory: AnvilFactory,
) -> None:
    """Our batch of two claims was recorded, then the process died; someone else claimed
    one of its questions (anyone may). After the restart the recorded batch is skipped,
    not sent (its walk there would revert the whole transaction), and a new batch claims
    the other question and withdraws everything the contract credited us."""
    anvil = anvil_factory()
    yes = (1).to_bytes(32, "big")

    async def run() -> None:
        async with manager_for(anvil.url) as deployer:
            reality = await deploy_reality(deployer, run="dies")
            qids = [
                await ask_question(
                    deployer,
                    reality,
                    template_id=0,
                    text=BOOL_TEXT,
                    arbitrator=deployer.address,
                    timeout=TIMEOUT,
                    nonce=n,
                    bounty=BOUNTY,
                )
                for n in range(2)
            ]
        store = _DiesBeforeBroadcastingABatch()
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=store) as dying:
            answerer = RealityAnswerer(dying, RealityETH(dying.pool, reality))
            answered = [await answerer.answer(q, yes, bond=BOND) for q in qids]
            elapse(anvil, TIMEOUT + 1)
            with pytest.raises(_Died):
                await answerer.claim_many([(q, 0) for q in qids])
        (recorded,) = [
            i for i in await store.unfinished(31337, OURS) if i.key.startswith(CLAIM_MANY_PREFIX)
        ]
        assert recorded.state == IntentState.SIGNED
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as helper:
            theirs = await RealityAnswerer(helper, RealityETH(helper.pool, reality)).claim(qids[0])
            assert theirs is not None
            assert theirs.claim is not None
            assert theirs.claim.state == IntentState.CONFIRMED
        restarted_store = InMemoryIntentStore()
        for intent in (*(a.intent for a in answered), recorded):
            await restarted_store.put(intent)
        before = anvil.balance(OURS)
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=restarted_store) as manager:
            contract = RealityETH(manager.pool, reality)
            restarted = RealityAnswerer(manager, contract)  # its pre-send checks registered
            assert await contract.balance_of(OURS) == BOUNTY + BOND  # credited by their claim
            async with mining(anvil):
                (recovered,) = await manager.recover()
            assert recovered.key == recorded.key
            assert recovered.state == IntentState.SKIPPED
            batch = await restarted.claim_many([(q, 0) for q in qids])
            (sent,) = batch.intents
            assert sent.key != recorded.key
            assert batch.claimed == ("0x" + qids[1].hex(),)
            assert batch.withdrawn == 2 * (BOUNTY + BOND)
            assert anvil.balance(OURS) == before + 2 * (BOUNTY + BOND) - gas_cost(sent)
        assert reverted(anvil) == []

    asyncio.run(run())


def test_erc20_commit_reveal_approves_the_commitments_bond_exactly(
    anvil_factory: AnvilFactory,
) -> None:
    """`submitAnswerCommitmentERC20` after an approval of exactly its bond, then the reveal
    (no tokens), finalized and claimed in tokens to the wei."""
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as deployer:
            token = await deploy_token(deployer, [OURS], 10 * ETHER)
            reality = await deploy_reality(deployer, run="cr", bond_token=token)
            qid = await ask_question(
                deployer,
                reality,
                template_id=0,
                text=BOOL_TEXT,
                arbitrator=deployer.address,
                timeout=TIMEOUT,
                min_bond=BOND,
                contract=reality_contract(deployer.pool, reality, bond_token=token),
            )
        yes = (1).to_bytes(32, "big")
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            contract = reality_contract(manager.pool, reality, bond_token=token)
            ours = RealityAnswerer(manager, contract, signer=LocalSigner(DEV_KEYS[2]))
            erc20 = Erc20(manager.pool, token)
            committed = await ours.commit(qid, yes)
            assert committed.answered
            assert committed.bond == BOND
            assert contract.decode_call(committed.intent.data)[0] == "submitAnswerCommitmentERC20"
            approval = await manager.intent(ours.approve_key(qid, 0))
            assert approval is not None
            assert list(erc20.decode_call(approval.data)[1].values()) == [reality, BOND]
            revealed = await ours.reveal(qid, yes, BOND)
            assert revealed.state == IntentState.CONFIRMED
            assert await erc20.allowance(OURS, reality) == 0
            assert await erc20.balance_of(OURS) == 10 * ETHER - BOND
            elapse(anvil, TIMEOUT + 1)
            assert await contract.get_final_answer(qid) == yes
            claimed = await ours.claim(qid)
            assert claimed is not None
            assert claimed.withdrawn == BOND
            assert await erc20.balance_of(OURS) == 10 * ETHER
        assert reverted(anvil) == []

    asyncio.run(run())


class _DiesBeforeBroadcastingAnApproval(InMemoryIntentStore):
    async def put(self, intent: Intent) -> None:
        await super().put(intent)
        if intent.state == IntentState.SIGNED and intent.key.startswith(APPROVE_PREFIX):
            raise _Died


def test_an_approval_whose_round_was_taken_meanwhile_is_skipped_after_a_restart(
    anvil_factory: AnvilFactory,
) -> None:
    """Our approval of a bond was recorded, then the process died; meanwhile someone else
    answered that round. After the restart the approval is skipped, not sent: no
    allowance is left for a bond that will never be posted."""
    anvil = anvil_factory()

    async def run() -> None:
        async with manager_for(anvil.url) as deployer:
            token = await deploy_token(deployer, [OURS, OTHER], 10 * ETHER)
            reality = await deploy_reality(deployer, run="approve", bond_token=token)
            qid = await ask_question(
                deployer,
                reality,
                template_id=0,
                text=BOOL_TEXT,
                arbitrator=deployer.address,
                timeout=TIMEOUT,
                min_bond=BOND,
                contract=reality_contract(deployer.pool, reality, bond_token=token),
            )
        yes, no = (1).to_bytes(32, "big"), bytes(32)
        store = _DiesBeforeBroadcastingAnApproval()
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=store) as dying:
            answerer = RealityAnswerer(
                dying, reality_contract(dying.pool, reality, bond_token=token)
            )
            with pytest.raises(_Died):
                await answerer.answer(qid, yes)
            recorded = await store.get(answerer.approve_key(qid, 0))
            assert recorded is not None
            assert recorded.state == IntentState.SIGNED
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as other:
            theirs = RealityAnswerer(other, reality_contract(other.pool, reality, bond_token=token))
            assert (await theirs.answer(qid, no)).answered
        restarted_store = InMemoryIntentStore()
        await restarted_store.put(recorded)
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=restarted_store) as manager:
            RealityAnswerer(manager, reality_contract(manager.pool, reality, bond_token=token))
            async with mining(anvil):
                (recovered,) = await manager.recover()
            assert recovered.state == IntentState.SKIPPED
            assert await Erc20(manager.pool, token).allowance(OURS, reality) == 0
        assert sender_txs(anvil, OURS) == []

    asyncio.run(run())
