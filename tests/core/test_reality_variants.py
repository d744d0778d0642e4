"""The pure parts of Reality.eth's other contracts and batched claims: v2.1's question id,
a batch's lists, v2.1's claim rule, and the cap a defence would break."""

from __future__ import annotations

import pytest
from eth_utils.crypto import keccak

from oracle.venues.reality.policy import BondPolicy, after_superseded, defence_refusal
from oracle.venues.reality.rules import (
    NULL_HASH,
    TOO_SOON_ANSWER,
    HistoryEntry,
    batch_claim_arguments,
    claim_arguments,
    claim_payouts,
    content_hash,
    history_hashes,
    question_id,
    question_id_v2_1,
)

A, B = "0x" + "aa" * 20, "0x" + "bb" * 20
YES, NO = (1).to_bytes(32, "big"), bytes(32)


def test_v2_1_question_ids_leave_out_the_minimum_bond_and_the_contract() -> None:
    fields = {
        "template_id": 2,
        "opening_ts": 1_700_000_000,
        "question": 'Will it?␟"Yes","No"␟x␟en',
        "arbitrator": A,
        "timeout": 86400,
        "asker": B,
        "nonce": 3,
    }
    packed = (
        content_hash(2, 1_700_000_000, fields["question"])  # type: ignore[arg-type]
        + bytes.fromhex("aa" * 20)
        + (86400).to_bytes(4, "big")
        + bytes.fromhex("bb" * 20)
        + (3).to_bytes(32, "big")
    )
    assert question_id_v2_1(**fields) == keccak(packed)  # type: ignore[arg-type]
    v3 = question_id(**fields, min_bond=0, contract="0x" + "cc" * 20)  # type: ignore[arg-type]
    assert v3 != question_id_v2_1(**fields)  # type: ignore[arg-type]


def test_a_batch_puts_each_walk_after_the_other() -> None:
    one = [HistoryEntry(YES, 10, A), HistoryEntry(NO, 20, B), HistoryEntry(YES, 40, A)]
    two = [HistoryEntry(NO, 5, B)]
    first = claim_arguments(one, history_hashes(one)[-1])
    second = claim_arguments(two, history_hashes(two)[-1])
    q1, q2 = b"\x01" * 32, b"\x02" * 32
    batch = batch_claim_arguments([(q1, first), (q2, second)])
    assert batch.question_ids == (q1, q2)
    assert batch.lengths == (3, 1)
    assert batch.bonds == (40, 20, 10, 5)
    assert batch.addrs == (A, B, A, B)
    assert batch.answers == (YES, NO, YES, NO)
    hashes = history_hashes(one)
    assert batch.history_hashes == (hashes[1], hashes[0], NULL_HASH, NULL_HASH)
    assert batch.args()[1] == [3, 1]
    with pytest.raises(ValueError, match="no question"):
        batch_claim_arguments([])
    with pytest.raises(ValueError, match="twice"):
        batch_claim_arguments([(q1, first), (q1, second)])


def test_v2_1_pays_the_bounty_on_answered_too_soon_and_v3_does_not() -> None:
    history = [HistoryEntry(TOO_SOON_ANSWER, 10, A)]
    rule = {"best_answer": TOO_SOON_ANSWER, "final_bond": 10, "bounty": 7}
    assert claim_payouts(history, **rule) == {A: 10}  # type: ignore[arg-type]
    assert claim_payouts(history, **rule, bounty_queued=True) == {A: 17}  # type: ignore[arg-type]
    # Otherwise the same credits: the bounty queued reaches the same payee.
    takeover = [HistoryEntry(YES, 10, A), HistoryEntry(NO, 20, B), HistoryEntry(YES, 40, B)]
    normal = {"best_answer": YES, "final_bond": 40, "bounty": 7}
    assert claim_payouts(takeover, **normal) == claim_payouts(  # type: ignore[arg-type]
        takeover,
        **normal,  # type: ignore[arg-type]
        bounty_queued=True,
    )


def test_the_cap_a_defence_breaks_is_named() -> None:
    policy = BondPolicy(initial=10, defend=True, max_per_question=100, max_total=1000)
    assert defence_refusal(policy, current_bond=20, ours_on_question=10, at_risk=10) is None
    refusal = defence_refusal(policy, current_bond=40, ours_on_question=30, at_risk=30)
    assert refusal is not None
    assert refusal.reason == "per_question_cap"
    total = defence_refusal(policy, current_bond=20, ours_on_question=10, at_risk=990)
    assert total is not None
    assert total.reason == "total_cap"
    decision, why = after_superseded(policy, current_bond=40, ours_on_question=30, at_risk=30)
    assert decision == "review"
    assert refusal.detail in why
    # A policy that never defends refuses nothing: there is no defence to refuse.
    quiet = BondPolicy(initial=10, max_per_question=100)
    assert defence_refusal(quiet, current_bond=40, ours_on_question=30, at_risk=30) is None
