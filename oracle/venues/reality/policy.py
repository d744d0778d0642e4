"""The daemon's bond policy on Reality.eth: pure, no I/O.

Amounts are wei of the chain's native token. `BondPolicy` is a venue's settings as
numbers: the first answer's bond (`first_bond`: the policy's, or the question's
`min_bond` when higher), whether a superseded answer is defended, and two caps:

* per question: all our bonds on one question (earlier answers stay at stake until the
  question is claimed), the next one included;
* in total: our bonds on questions not finalized yet, over the venue, the next included.

`cap_refusal` says whether a bond may be posted (None) or which cap it breaks (a
`Refusal` whose reason is a metric label). `superseded` says whether the standing answer
replaced ours since we last looked, and `after_superseded` what the policy does then:
`defend` (research again, then answer at the doubled bond) or `review` (a person);
`defence_refusal` the cap a defence would break (a person is told, in a review item).

`arbitration_due` says whether a bond war on our superseded answer should go to the
question's arbitrator instead (`ArbitrationPolicy`): when the bond the next answer needs
reaches the threshold, or a defence would pass a cap (the rival outbid what we may post),
and the arbitrator's fee (read from the question's arbitrator) is not 0, not above the fee
cap and below what is at stake (our bonds on the question and the rival's bond, which the
ruling moves).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from oracle.core.bonds import Refusal
from oracle.venues.reality.rules import minimum_next_bond

CAP_REASONS = ("per_question_cap", "total_cap")
Decision = Literal["defend", "review"]


@dataclass(frozen=True)
class BondPolicy:
    initial: int
    defend: bool = False
    max_per_question: int | None = None
    max_total: int | None = None

    def __post_init__(self) -> None:
        if self.initial <= 0:
            raise ValueError(f"initial: a positive bond in wei, got {self.initial}")
        for name in ("max_per_question", "max_total"):
            cap = getattr(self, name)
            if cap is not None and cap <= 0:
                raise ValueError(f"{name}: a positive amount in wei, or None, got {cap}")


def first_bond(policy: BondPolicy, min_bond: int) -> int:
    """The bond of a first answer: the policy's, raised to the question's minimum."""
    return max(policy.initial, minimum_next_bond(0, min_bond))


def cap_refusal(
    policy: BondPolicy, *, bond: int, ours_on_question: int, at_risk: int
) -> Refusal | None:
    """None when `bond` may be posted on a question where we already have
    `ours_on_question` at stake, with `at_risk` at stake over the venue; else why not."""
    for name, value in (
        ("bond", bond),
        ("ours_on_question", ours_on_question),
        ("at_risk", at_risk),
    ):
        if value < 0:
            raise ValueError(f"{name}: expected a non-negative amount, got {value}")
    on_question = ours_on_question + bond
    if policy.max_per_question is not None and on_question > policy.max_per_question:
        return Refusal(
            "per_question_cap",
            f"{ours_on_question} wei already on the question + a bond of {bond} would be "
            f"above the per-question cap {policy.max_per_question}",
        )
    if policy.max_total is not None and at_risk + bond > policy.max_total:
        return Refusal(
            "total_cap",
            f"{at_risk} wei at risk + a bond of {bond} would be above the total cap "
            f"{policy.max_total}",
        )
    return None


def superseded(
    *, our_answer: bytes, ours_on_question: int, seen_bond: int, bond: int, best_answer: bytes
) -> bool:
    """Whether another answer replaced ours since we recorded the question at `seen_bond`:
    we have a bond on it, the bond has grown since, and the standing answer is not ours.
    (A question someone else answered first, with nothing of ours on it, is never
    superseded: that disagreement went to a person when it was recorded.)"""
    return ours_on_question > 0 and bond > seen_bond and best_answer != our_answer


def defence_refusal(
    policy: BondPolicy, *, current_bond: int, ours_on_question: int, at_risk: int
) -> Refusal | None:
    """The cap a defence at double `current_bond` would break (None: within both caps, or
    the policy does not defend): the defence a person must then be told of."""
    if not policy.defend:
        return None
    return cap_refusal(
        policy,
        bond=minimum_next_bond(current_bond, 0),
        ours_on_question=ours_on_question,
        at_risk=at_risk,
    )


def after_superseded(
    policy: BondPolicy, *, current_bond: int, ours_on_question: int, at_risk: int
) -> tuple[Decision, str]:
    """What to do when our answer was superseded at `current_bond`, and why."""
    if not policy.defend:
        return "review", "the bond policy sends superseded answers to a person (defend: false)"
    next_bond = minimum_next_bond(current_bond, 0)
    refusal = defence_refusal(
        policy, current_bond=current_bond, ours_on_question=ours_on_question, at_risk=at_risk
    )
    if refusal is not None:
        return "review", f"a defence at {next_bond} wei is past a cap: {refusal.detail}"
    return "defend", f"defending at {next_bond} wei, within the caps"


@dataclass(frozen=True)
class ArbitrationPolicy:
    """`bond_threshold`: the next bond at or above which arbitration is asked (None: only
    when a defence is past a cap); `max_fee`: the largest fee ever paid."""

    max_fee: int
    bond_threshold: int | None = None

    def __post_init__(self) -> None:
        if self.max_fee <= 0:
            raise ValueError(f"max_fee: a positive amount in wei, got {self.max_fee}")
        if self.bond_threshold is not None and self.bond_threshold <= 0:
            raise ValueError(f"bond_threshold: a positive amount in wei, got {self.bond_threshold}")


def arbitration_due(
    policy: ArbitrationPolicy, *, next_bond: int, past_cap: bool, fee: int, at_stake: int
) -> tuple[bool, str]:
    """Whether to ask the question's arbitrator to rule (see the module docstring), and
    why (or why not)."""
    for name, value in (("next_bond", next_bond), ("fee", fee), ("at_stake", at_stake)):
        if value < 0:
            raise ValueError(f"{name}: expected a non-negative amount, got {value}")
    threshold = policy.bond_threshold
    if past_cap:
        trigger = f"a defence at {next_bond} wei is past a bond cap"
    elif threshold is not None and next_bond >= threshold:
        trigger = f"the next bond {next_bond} wei reaches the arbitration threshold {threshold}"
    else:
        return False, "the bond war is below the arbitration threshold and within the caps"
    if fee == 0:
        return False, f"{trigger}, but the question's arbitrator does not arbitrate it (fee 0)"
    if fee > policy.max_fee:
        return False, f"{trigger}, but the arbitrator's fee {fee} wei is above {policy.max_fee}"
    if fee >= at_stake:
        return (
            False,
            f"{trigger}, but the arbitrator's fee {fee} wei is not below the {at_stake} wei "
            "at stake",
        )
    return True, f"{trigger}; the arbitrator's fee {fee} wei is below the {at_stake} wei at stake"
