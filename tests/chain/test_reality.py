"""Reality.eth v3's real contract (RealityETH_v3_0, compiled from @reality.eth/contracts) on
anvil: questions discovered and read, answered through the TxManager exactly once, a
counter-answer and our defence at double the bond, arbitration by a small arbitrator
contract, finalization by timeout, claim and withdraw with exact balances, a concurrent
answer caught before sending, a question not yet open refused, a restart before the
broadcast."""

from __future__ import annotations

import asyncio
import contextlib
import random
import secrets
from pathlib import Path
from typing import Any

import pytest
from eth_abi.abi import encode as abi_encode
from eth_utils.crypto import keccak

from oracle.chain.checkpoint import InMemoryCheckpointStore
from oracle.chain.contracts import encode_call
from oracle.chain.intents import FileIntentStore, InMemoryIntentStore, Intent, IntentState
from oracle.chain.keys import LocalSigner
from oracle.chain.settings import ScannerSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import AnswerRefused, RealityQuestionError, RevealMissed, TxError
from oracle.venues.reality.binding import (
    ANSWER_PREFIX,
    CLAIM_PREFIX,
    REALITY_ARBITRATOR,
    REALITY_ETH,
    AnswerSource,
    ClaimOutcome,
    NewQuestion,
    QuestionSource,
    RealityAnswerer,
    RealityETH,
    ask_question,
    deploy_arbitrator,
    deploy_reality,
)
from oracle.venues.reality.rules import (
    INVALID_ANSWER,
    NULL_HASH,
    TEMPLATES,
    Phase,
    QuestionKind,
    answer_hash,
    claim_payouts,
    commitment_id,
    decode_answer,
    encode_answer,
    encode_question_text,
)
from tests.anvil import DEV_ADDRESSES, DEV_KEYS, Anvil, AnvilFactory
from tests.chain.helpers import manager_for, mining, sender_txs, wait_for_state
from tests.chain.test_crash import run_worker

ETHER = 10**18
MIN_BOND = ETHER // 10
BOUNTY = ETHER // 4
TIMEOUT = 3600
FEE = ETHER // 100  # the arbitrator's
ASKER, OURS, OTHER = DEV_ADDRESSES[1], DEV_ADDRESSES[2], DEV_ADDRESSES[3]
BOOL_TEXT = encode_question_text(
    QuestionKind.BOOL, 'Will "it" rain in Paris on 1 June?', category="weather"
)
SELECT_TEXT = encode_question_text(
    QuestionKind.SINGLE_SELECT,
    "Who wins the final?",
    outcomes=["Team A", "Team B", "Draw"],
    category="sports",
)


async def call(
    manager: TxManager, key: str, name: str, to: str, function: str, *args: Any, value: int = 0
) -> Intent:
    intent = await manager.submit(
        TxRequest(key=key, to=to, data=encode_call(name, function, *args), value=value)
    )
    assert intent.state == IntentState.CONFIRMED, intent.error
    return intent


def gas_cost(*intents: Intent | None) -> int:
    """What the intents' mined transactions paid in fees, from their receipts."""
    total = 0
    for intent in intents:
        if intent is not None and intent.inclusion is not None:
            total += intent.inclusion.gas_used * intent.inclusion.effective_gas_price
    return total


def reverted(anvil: Anvil) -> list[dict[str, Any]]:
    return [r for r in anvil.receipts_in_chain() if int(r["status"], 16) != 1]


async def setup(anvil: Anvil) -> tuple[str, str]:
    """RealityETH_v3_0 and an arbitrator for it (owned by the deployer)."""
    async with manager_for(anvil.url) as deployer:
        reality = await deploy_reality(deployer, run="t")
        arbitrator = await deploy_arbitrator(deployer, reality, FEE, run="t")
    return reality, arbitrator


async def ask(
    asker: TxManager,
    reality: str,
    template: int,
    text: str,
    *,
    arbitrator: str,
    opening_ts: int = 0,
    nonce: int = 0,
    min_bond: int = MIN_BOND,
    bounty: int = BOUNTY,
) -> bytes:
    """askQuestionWithMinBond with a bounty, through `ask_question`."""
    return await ask_question(
        asker,
        reality,
        template_id=template,
        text=text,
        arbitrator=arbitrator,
        timeout=TIMEOUT,
        opening_ts=opening_ts,
        nonce=nonce,
        min_bond=min_bond,
        bounty=bounty,
    )


def elapse(anvil: Anvil, seconds: int) -> None:
    anvil.rpc("evm_increaseTime", seconds)
    anvil.mine()


def test_questions_are_discovered_filtered_and_read(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        elsewhere = "0x000000000000000000000000000000000000dEaD"
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            contract = RealityETH(asker.pool, reality)
            # The built-in templates are the contract's: their hashes match ours.
            for template_id, content in TEMPLATES.items():
                stored = await contract.read("template_hashes", template_id)
                assert bytes(stored) == keccak(content.encode()), template_id
            yes_no = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator)
            select = await ask(asker, reality, 2, SELECT_TEXT, arbitrator=arbitrator)
            asked = len(sender_txs(anvil, ASKER))
            assert await ask(asker, reality, 2, SELECT_TEXT, arbitrator=arbitrator) == select
            assert len(sender_txs(anvil, ASKER)) == asked  # asked once
            await ask(asker, reality, 1, "How many?␟x␟en", arbitrator=arbitrator)  # uint: off
            await ask(asker, reality, 0, BOOL_TEXT, arbitrator=elsewhere, nonce=1)
            # Text that is not UTF-8: the ABI's `string` is bytes to the contract.
            selector = keccak(text="askQuestion(uint256,string,address,uint32,uint32,uint256)")[:4]
            raw = b"Bad \xff\xfe\xe2\x90\x9fx\xe2\x90\x9fen"
            data = selector + abi_encode(
                ["uint256", "bytes", "address", "uint32", "uint32", "uint256"],
                [0, raw, arbitrator, TIMEOUT, 0, 7],
            )
            intent = await asker.submit(TxRequest(key="ask:bad", to=reality, data=data))
            assert intent.state == IntentState.CONFIRMED

            source = QuestionSource(
                asker.pool,
                reality,
                InMemoryCheckpointStore(),
                ScannerSettings(confirmations=0),
                arbitrators=[arbitrator],
                askers=[ASKER],
            )
            handled: list[NewQuestion] = []

            async def handler(questions: list[NewQuestion]) -> None:
                handled.extend(questions)

            found = await source.poll(handler)
            assert handled == found
            assert [q.question_id for q in found[:2]] == [yes_no, select]
            assert len(found) == 3  # not the uint question, not the other arbitrator's
            assert await source.poll() == []  # delivered once
            question = found[0].question()
            assert question.title == 'Will "it" rain in Paris on 1 June?'
            assert question.category == "weather"
            assert found[1].question().outcomes == ("Team A", "Team B", "Draw")
            assert (found[0].timeout, found[0].arbitrator, found[0].asker) == (
                TIMEOUT,
                arbitrator,
                ASKER,
            )
            with pytest.raises(RealityQuestionError, match="text: not UTF-8"):
                found[2].question()
            nobody = QuestionSource(
                asker.pool,
                reality,
                InMemoryCheckpointStore(),
                ScannerSettings(confirmations=0),
                askers=[OTHER],
            )
            assert await nobody.poll() == []

            view = await contract.get_question(yes_no)
            assert view.phase == Phase.OPEN
            assert (view.bond, view.min_bond, view.bounty) == (0, MIN_BOND, BOUNTY)
            assert view.arbitrator == arbitrator
            assert view.next_bond == MIN_BOND
            assert view.history_hash == NULL_HASH
            assert await contract.get_final_answer(yes_no) is None
            unasked = await contract.get_question(b"\x01" * 32)
            assert unasked.phase == Phase.NOT_ASKED

    asyncio.run(run())


async def asked_again_sends_nothing(
    answerer: RealityAnswerer, qid: bytes, answer: bytes, first: Intent
) -> None:
    """The same round again: the confirmed intent. Asked again without a plan: never over
    our own standing answer, the round we answered. Named: refused."""
    assert (await answerer.answer(qid, answer, planned_bond=0)).intent == first
    again = await answerer.answer(qid, answer)
    assert again.intent == first
    assert again.standing_ours
    assert not again.superseded
    with pytest.raises(AnswerRefused, match="the standing answer is ours"):
        await answerer.answer(qid, answer, planned_bond=MIN_BOND)


def test_answer_counter_answer_defend_finalize_claim(anvil_factory: AnvilFactory) -> None:
    """We answer, another account answers otherwise at double the bond, we defend at double
    again; the timeout passes; claim and withdraw pay us the bounty and every bond (less
    the 1/40 withheld from the bonds below the last), to the wei."""
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            qid = await ask(asker, reality, 2, SELECT_TEXT, arbitrator=arbitrator)
        question = (await _one_question(anvil, reality)).question()
        team_a = encode_answer(question, "Team A")
        ours_start, other_start = anvil.balance(OURS), anvil.balance(OTHER)
        async with (
            manager_for(anvil.url, key=DEV_KEYS[2]) as manager,
            manager_for(anvil.url, key=DEV_KEYS[3]) as other_manager,
        ):
            contract = RealityETH(manager.pool, reality)
            answerer = RealityAnswerer(manager, contract)
            other = RealityAnswerer(other_manager, RealityETH(other_manager.pool, reality))

            first = await answerer.answer(qid, team_a)
            assert first.answered
            assert first.intent.value == MIN_BOND
            assert first.intent.subjects == (answerer.round_subject(qid, 0),)
            assert first.question.bond == MIN_BOND
            await asked_again_sends_nothing(answerer, qid, team_a, first.intent)
            assert len(sender_txs(anvil, OURS)) == 1

            watch = AnswerSource(
                manager.pool,
                reality,
                InMemoryCheckpointStore(),
                ScannerSettings(confirmations=0),
                questions=[qid],
            )
            assert [a.entry.answerer for a in await watch.poll()] == [OURS]
            draw = encode_answer(question, "Draw")
            counter = await other.answer(qid, draw)
            assert counter.answered
            (seen,) = await watch.poll()  # the counter-answer, once
            assert (seen.question_id, seen.entry.answerer) == (qid, OTHER)
            assert (seen.entry.answer, seen.entry.bond) == (draw, 2 * MIN_BOND)
            assert counter.intent.value == 2 * MIN_BOND
            assert decode_answer(question, await contract.get_best_answer(qid)).outcome == "Draw"

            defence = await answerer.answer(qid, team_a)
            assert defence.answered
            assert defence.intent.value == 4 * MIN_BOND
            assert defence.planned_bond == 2 * MIN_BOND
            assert await contract.get_bond(qid) == 4 * MIN_BOND

            history = await contract.history(qid)
            assert [(h.entry.answerer, h.entry.bond) for h in history] == [
                (OURS, MIN_BOND),
                (OTHER, 2 * MIN_BOND),
                (OURS, 4 * MIN_BOND),
            ]
            assert history[-1].history_hash == await contract.get_history_hash(qid)

            assert await answerer.claim(qid) is None  # not finalized yet
            elapse(anvil, TIMEOUT + 1)
            with pytest.raises(AnswerRefused, match="the question is finalized"):
                await answerer.answer(qid, draw)
            claimed, expected = await claim_exactly(answerer, qid, team_a)
            ours_intents = [first.intent, defence.intent, claimed.claim, claimed.withdraw]
            assert len(sender_txs(anvil, OURS)) == 4
            assert anvil.balance(OURS) == (
                ours_start - MIN_BOND - 4 * MIN_BOND + expected - gas_cost(*ours_intents)
            )
            assert anvil.balance(OTHER) == other_start - 2 * MIN_BOND - gas_cost(counter.intent)
        assert reverted(anvil) == []

    asyncio.run(run())


async def claim_exactly(
    answerer: RealityAnswerer, qid: bytes, team_a: bytes
) -> tuple[ClaimOutcome, int]:
    """Finalized on our answer: claim and withdraw pay what `claim_payouts` computes from
    the logged history (the bounty and every bond, less 1/40 of those below the last);
    a second claim sends nothing."""
    contract = answerer.reality
    view = await contract.get_question(qid)
    assert view.phase == Phase.FINALIZED
    assert await contract.is_finalized(qid)
    assert await contract.get_final_answer(qid) == team_a
    history = await contract.history(qid)
    expected = claim_payouts(
        [h.entry for h in history], best_answer=team_a, final_bond=4 * MIN_BOND, bounty=BOUNTY
    )
    ours = BOUNTY + 4 * MIN_BOND + (2 * MIN_BOND - 2 * MIN_BOND // 40) + MIN_BOND - MIN_BOND // 40
    assert expected == {OURS.lower(): ours}
    claimed = await answerer.claim(qid)
    assert claimed is not None
    assert claimed.claim is not None
    assert claimed.claim.state == IntentState.CONFIRMED
    assert claimed.withdraw is not None
    assert claimed.withdraw.state == IntentState.CONFIRMED
    assert claimed.withdrawn == ours
    assert await contract.balance_of(OURS) == 0
    assert await contract.get_history_hash(qid) == NULL_HASH
    again = await answerer.claim(qid)
    assert again is not None
    assert (again.claim, again.withdraw, again.withdrawn) == (None, None, 0)
    return claimed, ours


async def _one_question(anvil: Anvil, reality: str) -> NewQuestion:
    async with manager_for(anvil.url) as reader:
        source = QuestionSource(
            reader.pool, reality, InMemoryCheckpointStore(), ScannerSettings(confirmations=0)
        )
        found = await source.poll()
    return found[-1]


def test_arbitration_requested_and_ruled(anvil_factory: AnvilFactory) -> None:
    """Our Yes is countered with No; we pay the arbitrator, which freezes the question;
    answering is then refused before sending; the arbitrator rules Yes, crediting the one
    who paid it; claim and withdraw pay us both bonds (the lower less 1/40)."""
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            qid = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator, bounty=0)
        question = (await _one_question(anvil, reality)).question()
        yes, no = encode_answer(question, "YES"), encode_answer(question, "NO")
        ours_start = anvil.balance(OURS)
        async with (
            manager_for(anvil.url, key=DEV_KEYS[2]) as manager,
            manager_for(anvil.url, key=DEV_KEYS[3]) as other_manager,
        ):
            contract = RealityETH(manager.pool, reality)
            answerer = RealityAnswerer(manager, contract)
            other = RealityAnswerer(other_manager, RealityETH(other_manager.pool, reality))
            first = await answerer.answer(qid, yes)
            counter = await other.answer(qid, no)
            assert counter.answered

            request = await call(
                manager,
                "arbitrate",
                REALITY_ARBITRATOR,
                arbitrator,
                "requestArbitration",
                qid,
                2 * MIN_BOND,  # max_previous: refuses if a higher bond came meanwhile
                value=FEE,
            )
            assert await contract.arbitration_requests(qid) == [OURS]
            view = await contract.get_question(qid)
            assert view.phase == Phase.PENDING_ARBITRATION
            sent = len(sender_txs(anvil, OURS))
            with pytest.raises(AnswerRefused, match="pending arbitration"):
                await answerer.answer(qid, yes)
            assert len(sender_txs(anvil, OURS)) == sent
            assert await manager.intent(answerer.answer_key(qid, 2 * MIN_BOND)) is None

            history = await contract.history(qid)
            async with manager_for(anvil.url) as owner:
                await call(
                    owner,
                    "rule",
                    REALITY_ARBITRATOR,
                    arbitrator,
                    "rule",
                    qid,
                    yes,
                    history[-2].history_hash,
                    history[-1].entry.answer,
                    history[-1].entry.answerer,
                )
            assert await contract.finalizations(qid) == [yes]
            assert await contract.get_final_answer(qid) == yes
            history = await contract.history(qid)
            assert (history[-1].entry.answerer, history[-1].entry.bond) == (OURS, 0)

            expected = claim_payouts(
                [h.entry for h in history], best_answer=yes, final_bond=2 * MIN_BOND
            )
            assert expected == {OURS.lower(): 2 * MIN_BOND + MIN_BOND - MIN_BOND // 40}
            claimed = await answerer.claim(qid)
            assert claimed is not None
            assert claimed.withdrawn == expected[OURS.lower()]
            assert anvil.balance(OURS) == (
                ours_start
                - MIN_BOND
                - FEE
                + expected[OURS.lower()]
                - gas_cost(first.intent, request, claimed.claim, claimed.withdraw)
            )
        assert reverted(anvil) == []

    asyncio.run(run())


def test_a_concurrent_answer_is_caught_before_sending(anvil_factory: AnvilFactory) -> None:
    """Someone answers between our decision and our send: with the bond we planned on
    given, the round is recorded SKIPPED before anything is signed; and when their answer
    lands between our read and our send, the gas estimate sees it, and it is SKIPPED too.
    Nothing of ours is sent, nothing reverts."""
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            planned = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator)
            racing = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator, nonce=1)
        async with (
            manager_for(anvil.url, key=DEV_KEYS[2]) as manager,
            manager_for(anvil.url, key=DEV_KEYS[3]) as other_manager,
        ):
            other = RealityAnswerer(other_manager, RealityETH(other_manager.pool, reality))
            answerer = RealityAnswerer(manager, RealityETH(manager.pool, reality))
            no, yes = b"\x00" * 32, b"\x00" * 31 + b"\x01"

            await other.answer(planned, no)
            outcome = await answerer.answer(planned, yes, planned_bond=0)
            assert outcome.intent.state == IntentState.SKIPPED
            assert outcome.superseded
            assert not outcome.answered
            assert outcome.question.bond == MIN_BOND
            assert (await answerer.answer(planned, yes, planned_bond=0)).intent == outcome.intent

            class RacedReality(RealityETH):
                """Their answer is mined right after our first read of the question."""

                raced = False

                async def get_question(self, qid: bytes | str) -> Any:
                    view = await super().get_question(qid)
                    if not self.raced:
                        self.raced = True
                        await other.answer(racing, no)
                    return view

            raced = RealityAnswerer(manager, RacedReality(manager.pool, reality))
            outcome = await raced.answer(racing, yes)
            assert outcome.intent.state == IntentState.SKIPPED
            assert outcome.superseded
            assert outcome.question.bond == MIN_BOND
        assert sender_txs(anvil, OURS) == []
        assert reverted(anvil) == []

    asyncio.run(run())


def test_not_open_yet_too_early_bond_and_cap_are_refused(anvil_factory: AnvilFactory) -> None:
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        now = int(anvil.block()["timestamp"], 16)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            later = await ask(
                asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator, opening_ts=now + 1000
            )
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            contract = RealityETH(manager.pool, reality)
            answerer = RealityAnswerer(manager, contract, max_bond=MIN_BOND)
            with pytest.raises(AnswerRefused, match=r"not open yet \(opens at \d+, now \d+\)"):
                await answerer.answer(later, INVALID_ANSWER)
            assert await manager.intent(answerer.answer_key(later, 0)) is None
            with pytest.raises(ValueError, match=r"planned_bond 5 is above .* bond 0"):
                await answerer.answer(later, INVALID_ANSWER, planned_bond=5)
            elapse(anvil, 1000)
            with pytest.raises(AnswerRefused, match="below the"):
                await answerer.answer(later, INVALID_ANSWER, bond=MIN_BOND - 1)
            with pytest.raises(AnswerRefused, match="above the cap"):
                await answerer.answer(later, INVALID_ANSWER, bond=2 * MIN_BOND)
            assert sender_txs(anvil, OURS) == []
            outcome = await answerer.answer(later, INVALID_ANSWER)
            assert outcome.answered
            assert await contract.get_best_answer(later) == INVALID_ANSWER
            elapse(anvil, TIMEOUT - 10)
            closing = RealityAnswerer(manager, contract, min_time_left=60)
            with pytest.raises(AnswerRefused, match=r"finalizes in \d+s"):
                await closing.answer(later, b"\x00" * 32)
        assert reverted(anvil) == []

    asyncio.run(run())


class _DiesBeforeBroadcastingAnAnswer(InMemoryIntentStore):
    """Records a signed answer, then the process "dies" before broadcasting it."""

    async def put(self, intent: Intent) -> None:
        await super().put(intent)
        if intent.state == IntentState.SIGNED and intent.key.startswith(ANSWER_PREFIX):
            raise _Died


class _Died(Exception):
    pass


def test_a_restart_checks_recorded_answers_before_sending_them(
    anvil_factory: AnvilFactory,
) -> None:
    """Recorded, not broadcast, then the process died: after a restart the answer whose
    round someone else answered meanwhile is skipped, the other one is sent; one answer
    each, nothing reverted."""
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            taken = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator)
            open_ = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator, nonce=1)
        yes = b"\x00" * 31 + b"\x01"
        store = _DiesBeforeBroadcastingAnAnswer()
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=store) as dying:
            answerer = RealityAnswerer(dying, RealityETH(dying.pool, reality))
            for qid in (taken, open_):
                with pytest.raises(_Died):
                    await answerer.answer(qid, yes)
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as other_manager:
            other = RealityAnswerer(other_manager, RealityETH(other_manager.pool, reality))
            await other.answer(taken, b"\x00" * 32)
        restarted_store = InMemoryIntentStore()
        for qid in (taken, open_):
            recorded = await store.get(answerer.answer_key(qid, 0))
            assert recorded is not None
            assert recorded.state == IntentState.SIGNED
            await restarted_store.put(recorded)
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=restarted_store) as manager:
            contract = RealityETH(manager.pool, reality)
            restarted = RealityAnswerer(manager, contract)  # registers the pre-send checks
            async with mining(anvil):
                recovered = {i.key: i for i in await manager.recover()}
            assert recovered[restarted.answer_key(taken, 0)].state == IntentState.SKIPPED
            assert recovered[restarted.answer_key(open_, 0)].state == IntentState.CONFIRMED
            assert [h.entry.answerer for h in await contract.history(taken)] == [OTHER]
            assert [h.entry.answerer for h in await contract.history(open_)] == [OURS]
        calls = [r for r in sender_txs(anvil, OURS) if r["to"].lower() != OURS.lower()]
        assert len(calls) == 1  # one answer (and a self-transfer filling the skipped nonce)
        assert reverted(anvil) == []

    asyncio.run(run())


def test_a_race_lost_after_sending_costs_only_gas(anvil_factory: AnvilFactory) -> None:
    """Our defence, with a large bond, and another account's answer are in the same block,
    theirs first: `max_previous` (the bond we replied to) makes ours revert instead of
    answering over a bond we never weighed. The bond comes back; only gas is spent, and
    the outcome says someone else answered the round."""
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            qid = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator)
            await RealityAnswerer(asker, RealityETH(asker.pool, reality)).answer(qid, b"\x00" * 32)
        yes = b"\x00" * 31 + b"\x01"
        store = InMemoryIntentStore()
        async with (
            manager_for(anvil.url, key=DEV_KEYS[2], store=store) as manager,
            manager_for(
                anvil.url, key=DEV_KEYS[3], min_priority_fee_gwei=5, max_priority_fee_gwei=10
            ) as other_manager,
        ):
            contract = RealityETH(manager.pool, reality)
            answerer = RealityAnswerer(manager, contract)
            start = anvil.balance(OURS)
            anvil.rpc("evm_setAutomine", False)
            ours = asyncio.create_task(answerer.answer(qid, yes, bond=8 * MIN_BOND))
            key = answerer.answer_key(qid, MIN_BOND)
            await wait_for_state(store, key, IntentState.BROADCAST)
            theirs = await other_manager.send(
                TxRequest(
                    key="their-answer",
                    to=reality,
                    data=contract.encode("submitAnswer", qid, b"\x00" * 32, MIN_BOND),
                    value=2 * MIN_BOND,
                )
            )
            assert theirs.state == IntentState.BROADCAST
            anvil.mine()
            async with mining(anvil):
                outcome = await ours
            assert outcome.intent.state == IntentState.REVERTED
            assert outcome.superseded
            assert not outcome.answered
            assert outcome.question.bond == 2 * MIN_BOND
            assert "max_previous" in (outcome.intent.error or "")
            assert anvil.balance(OURS) == start - gas_cost(outcome.intent)
            assert [h.entry.answerer for h in await contract.history(qid)] == [ASKER, OTHER]

    asyncio.run(run())


class _DiesRightAfterBroadcastingAnAnswer(InMemoryIntentStore):
    """The answer is broadcast, then the process "dies" before seeing it confirmed."""

    async def put(self, intent: Intent) -> None:
        await super().put(intent)
        if intent.state == IntentState.BROADCAST and intent.key.startswith(ANSWER_PREFIX):
            raise _Died


def test_killed_between_broadcast_and_confirmation_leaves_one_answer(
    anvil_factory: AnvilFactory,
) -> None:
    """Broadcast, then the process died: after a restart the recorded intent is followed
    to its receipt (CONFIRMED), asking again returns it, and the chain holds one answer."""
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            qid = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator)
        yes = b"\x00" * 31 + b"\x01"
        store = _DiesRightAfterBroadcastingAnAnswer()
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=store) as dying:
            answerer = RealityAnswerer(dying, RealityETH(dying.pool, reality))
            with pytest.raises(_Died):
                await answerer.answer(qid, yes)
        recorded = await store.get(answerer.answer_key(qid, 0))
        assert recorded is not None
        assert recorded.state == IntentState.BROADCAST
        restarted_store = InMemoryIntentStore()
        await restarted_store.put(recorded)
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=restarted_store) as manager:
            contract = RealityETH(manager.pool, reality)
            restarted = RealityAnswerer(manager, contract)
            async with mining(anvil):
                (recovered,) = await manager.recover()
                assert recovered.state == IntentState.CONFIRMED
                again = await restarted.answer(qid, yes, planned_bond=0)
            assert again.intent == recovered
            assert again.answered
            assert [h.entry.answerer for h in await contract.history(qid)] == [OURS]
        assert len(sender_txs(anvil, OURS)) == 1
        assert reverted(anvil) == []

    asyncio.run(run())


class _DiesBeforeBroadcastingAClaim(InMemoryIntentStore):
    async def put(self, intent: Intent) -> None:
        await super().put(intent)
        if intent.state == IntentState.SIGNED and intent.key.startswith(CLAIM_PREFIX):
            raise _Died


def test_a_claim_someone_else_made_meanwhile_is_skipped_after_a_restart(
    anvil_factory: AnvilFactory,
) -> None:
    """Our claim was recorded, then the process died; someone else sent the same
    `claimWinnings` (anyone may). After the restart the recorded claim is skipped, not
    sent (it would revert), and `claim` withdraws what the contract credited us."""
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            qid = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator)
        yes = b"\x00" * 31 + b"\x01"
        store = _DiesBeforeBroadcastingAClaim()
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=store) as dying:
            answerer = RealityAnswerer(dying, RealityETH(dying.pool, reality))
            answered = await answerer.answer(qid, yes)
            elapse(anvil, TIMEOUT + 1)
            with pytest.raises(_Died):
                await answerer.claim(qid)
        recorded = await store.get(answerer.claim_key(qid))
        assert recorded is not None
        assert recorded.state == IntentState.SIGNED
        async with manager_for(anvil.url, key=DEV_KEYS[3]) as helper:
            # The same call, from another account.
            theirs = await helper.submit(
                TxRequest(key="their-claim", to=reality, data=recorded.data)
            )
            assert theirs.state == IntentState.CONFIRMED
        restarted_store = InMemoryIntentStore()
        await restarted_store.put(answered.intent)
        await restarted_store.put(recorded)
        async with manager_for(anvil.url, key=DEV_KEYS[2], store=restarted_store) as manager:
            contract = RealityETH(manager.pool, reality)
            restarted = RealityAnswerer(manager, contract)
            credited = await contract.balance_of(OURS)
            assert credited == BOUNTY + MIN_BOND
            async with mining(anvil):
                (recovered,) = await manager.recover()
            assert recovered.state == IntentState.SKIPPED
            claimed = await restarted.claim(qid)
            assert claimed is not None
            assert claimed.claim is None  # the history is claimed: nothing to send
            assert claimed.withdrawn == credited
            assert await contract.balance_of(OURS) == 0
        assert reverted(anvil) == []

    asyncio.run(run())


class _VaryingSigner:
    """Signs typed data differently each time (as some remote signers may)."""

    def __init__(self, address: str) -> None:
        self.address = address

    async def sign_typed_data(self, typed_data: Any) -> bytes:
        return secrets.token_bytes(65)


async def commit_needs_a_deterministic_signer(
    manager: TxManager, contract: RealityETH, qid: bytes
) -> None:
    yes = b"\x00" * 31 + b"\x01"
    with pytest.raises(TxError, match="needs the manager's own signer"):
        await RealityAnswerer(manager, contract).commit(qid, yes)
    varying = RealityAnswerer(manager, contract, signer=_VaryingSigner(OURS))  # type: ignore[arg-type]
    with pytest.raises(TxError, match="not deterministic"):
        await varying.commit(qid, yes)


def test_commit_reveal_finalize_claim(anvil_factory: AnvilFactory) -> None:
    """A commitment holds the round (the best answer does not change), its reveal makes
    our answer the best one, and the claim pays us through the commitment, to the wei.
    A nonce the signer cannot reproduce, or a reveal after its deadline, is refused."""
    anvil = anvil_factory()

    async def run() -> None:
        reality, arbitrator = await setup(anvil)
        async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
            qid = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator)
            late = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=arbitrator, nonce=1)
        yes = b"\x00" * 31 + b"\x01"
        start = anvil.balance(OURS)
        async with manager_for(anvil.url, key=DEV_KEYS[2]) as manager:
            contract = RealityETH(manager.pool, reality)
            await commit_needs_a_deterministic_signer(manager, contract, qid)
            assert sender_txs(anvil, OURS) == []

            answerer = RealityAnswerer(manager, contract, signer=LocalSigner(DEV_KEYS[2]))
            committed = await answerer.commit(qid, yes)
            assert committed.answered
            assert committed.intent.key == answerer.commit_key(qid, 0)
            (entry,) = [h.entry for h in await contract.history(qid)]
            assert entry.is_commitment
            nonce = await answerer.commitment_nonce(qid, yes, MIN_BOND)
            assert entry.answer == commitment_id(qid, answer_hash(yes, nonce), MIN_BOND)
            view = await contract.get_question(qid)
            assert (view.bond, view.best_answer, view.finalize_ts) == (MIN_BOND, NULL_HASH, 0)
            # The round holds one commitment: a plain answer over the same bond is not
            # sent, the round's intent is the commitment.
            sent = len(sender_txs(anvil, OURS))
            again = await answerer.answer(qid, yes, planned_bond=0)
            assert again.intent == committed.intent
            assert len(sender_txs(anvil, OURS)) == sent

            revealed = await answerer.reveal(qid, yes, MIN_BOND)
            assert revealed.state == IntentState.CONFIRMED
            assert await contract.get_best_answer(qid) == yes
            assert await answerer.reveal(qid, yes, MIN_BOND) == revealed  # once

            elapse(anvil, TIMEOUT + 1)
            history = [h.entry for h in await contract.history(qid)]
            expected = claim_payouts(
                history,
                best_answer=yes,
                final_bond=MIN_BOND,
                bounty=BOUNTY,
                revealed={entry.answer: yes},
            )
            assert expected == {OURS.lower(): BOUNTY + MIN_BOND}
            claimed = await answerer.claim(qid)
            assert claimed is not None
            assert claimed.withdrawn == BOUNTY + MIN_BOND
            spent = gas_cost(committed.intent, revealed, claimed.claim, claimed.withdraw)
            assert anvil.balance(OURS) == start + BOUNTY - spent

            await answerer.commit(late, yes)
            elapse(anvil, TIMEOUT // 8 + 1)
            await _a_late_reveal_is_missed(answerer, contract, late, yes)
        assert reverted(anvil) == []

    asyncio.run(run())


async def _a_late_reveal_is_missed(
    answerer: RealityAnswerer, contract: RealityETH, late: bytes, yes: bytes
) -> None:
    with pytest.raises(RevealMissed, match=r"reveal deadline .* has passed"):
        await answerer.reveal(late, yes, MIN_BOND)
    with pytest.raises(AnswerRefused, match="no commitment of ours") as refused:
        await answerer.reveal(late, yes, 2 * MIN_BOND)
    assert not isinstance(refused.value, RevealMissed)  # not lost: never ours
    # The lost commitment stands for nothing: a new one answers over it, at double its
    # bond (the contract counts it), not refused as "our own standing answer".
    over = await answerer.commit(late, yes, planned_bond=MIN_BOND)
    assert over.answered
    assert [h.entry.bond for h in await contract.history(late)] == [MIN_BOND, 2 * MIN_BOND]


def test_claim_payouts_match_the_contract_on_random_histories(
    anvil_factory: AnvilFactory,
) -> None:
    """Histories of up to six answers by three accounts, with answers and bonds drawn at
    random (fixed seed): after one `claimWinnings` per question, each account's balance in
    the contract is what `claim_payouts` computes, to the wei."""
    anvil = anvil_factory()
    draw = random.Random(20261123)

    async def run() -> None:
        reality, _ = await setup(anvil)
        async with contextlib.AsyncExitStack() as stack:
            managers = [
                await stack.enter_async_context(manager_for(anvil.url, key=DEV_KEYS[i]))
                for i in range(4)
            ]
            answerers = [RealityAnswerer(m, RealityETH(m.pool, reality)) for m in managers]
            claimer, accounts = answerers[0], answerers[1:]
            expected: dict[str, int] = {}
            for number in range(8):
                qid = await ask(
                    managers[0], reality, 0, BOOL_TEXT, arbitrator=managers[0].address, nonce=number
                )
                for _ in range(draw.randint(1, 6)):
                    answerer = draw.choice(accounts)
                    view = await answerer.reality.get_question(qid)
                    bond = view.next_bond * draw.choice((1, 1, 2, 3))
                    answer = (b"\x00" * 31) + bytes([draw.randint(0, 1)])
                    outcome = await answerer.answer(qid, answer, bond=bond)
                    assert outcome.answered
                elapse(anvil, TIMEOUT + 1)
                contract = claimer.reality
                view = await contract.get_question(qid)
                history = [h.entry for h in await contract.history(qid)]
                payouts = claim_payouts(
                    history, best_answer=view.best_answer, final_bond=view.bond, bounty=BOUNTY
                )
                for who, amount in payouts.items():
                    expected[who] = expected.get(who, 0) + amount
                claimed = await claimer.claim(qid)
                assert claimed is not None
                assert claimed.claim is not None
                assert claimed.claim.state == IntentState.CONFIRMED
            for answerer in accounts:
                address = answerer.manager.address
                held = await claimer.reality.balance_of(address)
                assert held == expected.get(address.lower(), 0), address
            assert sum(expected.values()) > 0
        assert reverted(anvil) == []

    asyncio.run(run())


def test_sigkilled_between_broadcast_and_confirmation_answers_once(
    anvil_factory: AnvilFactory, tmp_path: Path
) -> None:
    """A process broadcasts our answer (the answerer's key, calldata and bond) and is
    SIGKILLed before it is mined; it is mined while nobody watches. The restarted answerer
    asked to answer the same round resumes that intent and sends nothing; with the intents
    lost, the pre-send check sees the round answered. One answer, nothing reverted."""
    anvil = anvil_factory("--no-mining")
    store_file = tmp_path / "intents.json"
    yes = b"\x00" * 31 + b"\x01"

    async def prepare() -> tuple[str, bytes, str]:
        async with manager_for(anvil.url) as deployer, mining(anvil, 0.05):
            reality = await deploy_reality(deployer, run="crash")
            async with manager_for(anvil.url, key=DEV_KEYS[1]) as asker:
                qid = await ask(asker, reality, 0, BOOL_TEXT, arbitrator=deployer.address)
            answerer = RealityAnswerer(deployer, RealityETH(deployer.pool, reality))
            return reality, qid, answerer.answer_key(qid, 0)

    reality, qid, key = asyncio.run(prepare())
    data = encode_call(REALITY_ETH, "submitAnswer", qid, yes, 0)
    tx_hash = run_worker(
        anvil.url,
        store_file,
        key=key,
        to=reality,
        value=MIN_BOND,
        data=data,
        mode="after-broadcast",
    )
    anvil.mine(1)  # the answer lands while the process is dead

    async def restart() -> None:
        store = FileIntentStore(store_file)
        async with manager_for(anvil.url, store=store, confirmations=3) as manager, mining(anvil):
            await manager.resume()
            answerer = RealityAnswerer(manager, RealityETH(manager.pool, reality))
            outcome = await answerer.answer(qid, yes)
            assert outcome.answered
            assert outcome.intent.hashes == (tx_hash,)
        async with manager_for(anvil.url, store=InMemoryIntentStore()) as manager:
            amnesiac = RealityAnswerer(manager, RealityETH(manager.pool, reality))
            lost = await amnesiac.answer(qid, yes)
            assert lost.intent.state == IntentState.SKIPPED
            assert lost.intent.key == amnesiac.answer_key(qid, 0)
            assert lost.standing_ours
            assert not lost.superseded
            history = await amnesiac.reality.history(qid)
            assert [(h.entry.answerer, h.tx_hash) for h in history] == [(DEV_ADDRESSES[0], tx_hash)]

    asyncio.run(restart())
    assert all(r["status"] == "0x1" for r in anvil.receipts_in_chain())
