"""The bond policy on Reality.eth (oracle.venues.reality.policy): first bonds, caps, and what
a superseded answer leads to."""

from __future__ import annotations

import pytest

from oracle.venues.reality.policy import (
    BondPolicy,
    after_superseded,
    cap_refusal,
    first_bond,
    superseded,
)

OURS, THEIRS = (1).to_bytes(32, "big"), bytes(32)


def test_a_first_bond_is_the_policys_raised_to_the_questions_minimum() -> None:
    policy = BondPolicy(initial=100)
    assert first_bond(policy, 0) == 100
    assert first_bond(policy, 40) == 100
    assert first_bond(policy, 250) == 250


@pytest.mark.parametrize(
    ("bond", "ours", "at_risk", "reason"),
    [
        (400, 100, 100, None),
        (400, 200, 100, "per_question_cap"),  # 600 > 500 on the question
        (400, 100, 700, "total_cap"),  # 1100 > 1000 over the venue
        (500, 0, 0, None),  # exactly at both caps
    ],
)
def test_caps_count_what_is_at_stake_with_the_next_bond(
    bond: int, ours: int, at_risk: int, reason: str | None
) -> None:
    policy = BondPolicy(initial=100, defend=True, max_per_question=500, max_total=1000)
    refusal = cap_refusal(policy, bond=bond, ours_on_question=ours, at_risk=at_risk)
    assert (refusal.reason if refusal else None) == reason
    if refusal is not None:
        assert str(bond) in refusal.detail


def test_no_caps_refuse_nothing_and_negative_amounts_are_errors() -> None:
    assert cap_refusal(BondPolicy(initial=1), bond=10**30, ours_on_question=0, at_risk=0) is None
    with pytest.raises(ValueError, match="at_risk: expected a non-negative amount"):
        cap_refusal(BondPolicy(initial=1), bond=1, ours_on_question=0, at_risk=-1)
    with pytest.raises(ValueError, match="initial: a positive bond"):
        BondPolicy(initial=0)
    with pytest.raises(ValueError, match="max_total: a positive amount"):
        BondPolicy(initial=1, max_total=0)


@pytest.mark.parametrize(
    ("ours_on_question", "seen_bond", "bond", "best", "expected"),
    [
        (100, 100, 200, THEIRS, True),  # countered since we looked
        (100, 100, 100, OURS, False),  # nothing changed
        (100, 100, 400, OURS, False),  # grown, but our answer stands (someone agreed)
        (0, 100, 200, THEIRS, False),  # nothing of ours on it: never "superseded"
    ],
)
def test_superseded_only_when_the_bond_grew_over_our_answer(
    ours_on_question: int, seen_bond: int, bond: int, best: bytes, expected: bool
) -> None:
    assert (
        superseded(
            our_answer=OURS,
            ours_on_question=ours_on_question,
            seen_bond=seen_bond,
            bond=bond,
            best_answer=best,
        )
        is expected
    )


def test_a_superseded_answer_is_defended_within_the_caps_else_reviewed() -> None:
    defending = BondPolicy(initial=100, defend=True, max_per_question=700, max_total=2000)
    decision, why = after_superseded(defending, current_bond=200, ours_on_question=100, at_risk=100)
    assert (decision, why) == ("defend", "defending at 400 wei, within the caps")
    decision, why = after_superseded(defending, current_bond=800, ours_on_question=500, at_risk=500)
    assert decision == "review"
    assert "a defence at 1600 wei is past a cap" in why
    assert "per-question cap 700" in why
    decision, why = after_superseded(
        defending, current_bond=200, ours_on_question=100, at_risk=1700
    )
    assert (decision, "total cap 2000" in why) == ("review", True)
    decision, why = after_superseded(
        BondPolicy(initial=100), current_bond=200, ours_on_question=100, at_risk=100
    )
    assert decision == "review"
    assert "defend: false" in why
