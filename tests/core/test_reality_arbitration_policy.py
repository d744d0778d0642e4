"""When a bond war on our superseded Reality.eth answer goes to the question's arbitrator
(oracle.venues.reality.policy.arbitration_due), and the four-eyes rule on confirming it
(oracle.core.review_rules.offer_approval_reason)."""

from __future__ import annotations

import pytest

from oracle.core.review_rules import confirming, offer_approval_reason
from oracle.venues.reality.policy import ArbitrationPolicy, arbitration_due

POLICY = ArbitrationPolicy(max_fee=100, bond_threshold=1_000)


@pytest.mark.parametrize(
    "case",
    [
        (999, False, 10, 5_000, False, "below the arbitration threshold and within the caps"),
        (1_000, False, 10, 5_000, True, "reaches the arbitration threshold 1000"),
        (10, True, 10, 5_000, True, "past a bond cap"),
        (1_000, False, 0, 5_000, False, "does not arbitrate it (fee 0)"),
        (1_000, False, 101, 5_000, False, "fee 101 wei is above 100"),
        (1_000, False, 100, 100, False, "not below the 100 wei at stake"),
        (1_000, False, 99, 100, True, "below the 100 wei at stake"),
    ],
)
def test_arbitration_is_due_past_the_threshold_or_a_cap_when_the_fee_is_worth_it(
    case: tuple[int, bool, int, int, bool, str],
) -> None:
    next_bond, past_cap, fee, at_stake, due, why = case
    decided, reason = arbitration_due(
        POLICY, next_bond=next_bond, past_cap=past_cap, fee=fee, at_stake=at_stake
    )
    assert decided is due
    assert why in reason


def test_without_a_threshold_only_a_cap_calls_the_arbitrator() -> None:
    policy = ArbitrationPolicy(max_fee=100)
    assert not arbitration_due(policy, next_bond=10**30, past_cap=False, fee=1, at_stake=10)[0]
    assert arbitration_due(policy, next_bond=10, past_cap=True, fee=1, at_stake=10)[0]


def test_the_policy_refuses_nonsense() -> None:
    with pytest.raises(ValueError, match="max_fee"):
        ArbitrationPolicy(max_fee=0)
    with pytest.raises(ValueError, match="bond_threshold"):
        ArbitrationPolicy(max_fee=1, bond_threshold=0)
    with pytest.raises(ValueError, match="fee"):
        arbitration_due(POLICY, next_bond=1, past_cap=True, fee=-1, at_stake=1)


def test_confirming_arbitration_needs_a_second_person() -> None:
    assert offer_approval_reason("arbitrate") is not None
    assert offer_approval_reason("defend") is None
    assert offer_approval_reason("counter_answer") is None
    assert "arbitrator is paid its fee" in confirming("arbitrate")
