"""Who may do what in the review console, and when a decision needs a second person.

Roles are ordered: each can do everything the one before it can.

    viewer    reads the queue, the evidence and the audit log
    reviewer  also claims items, decides, reopens a decision, sends a market back
    approver  also approves another person's decision (four-eyes)
    admin     also manages accounts and tokens
"""

from __future__ import annotations

from enum import StrEnum


class Role(StrEnum):
    VIEWER = "viewer"
    REVIEWER = "reviewer"
    APPROVER = "approver"
    ADMIN = "admin"


_RANK = {Role.VIEWER: 0, Role.REVIEWER: 1, Role.APPROVER: 2, Role.ADMIN: 3}


class Action(StrEnum):
    VIEW = "view"
    DECIDE = "decide"  # also claim, unassign, reopen, send back for research
    APPROVE = "approve"
    ADMINISTER = "administer"


_NEEDS = {
    Action.VIEW: Role.VIEWER,
    Action.DECIDE: Role.REVIEWER,
    Action.APPROVE: Role.APPROVER,
    Action.ADMINISTER: Role.ADMIN,
}


def parse_role(value: str) -> Role:
    """A role by name, or ValueError listing the roles."""
    try:
        return Role(value)
    except ValueError:
        raise ValueError(
            f"role {value!r} is not one of {', '.join(r.value for r in Role)}"
        ) from None


def may(role: Role | str, action: Action) -> bool:
    """Whether `role` may do `action`."""
    return _RANK[Role(role)] >= _RANK[_NEEDS[action]]


def approval_reason(
    outcome: str,
    consensus_reached: bool | None,
    consensus_outcome: str | None,
    moves_money: str | None = None,
) -> str | None:
    """Why a decision needs a second person's approval before delivery (four-eyes), or
    None: an INVALID answer, one that overrides a consensus that reached quorum, or one
    that moves money (`moves_money`: the offer it confirms, e.g. "dispute", where the
    venue's rule is four-eyes)."""
    if outcome == "INVALID":
        return "INVALID is decided"
    if consensus_reached and consensus_outcome is not None and outcome != consensus_outcome:
        return f"overrides the consensus {consensus_outcome}, which reached quorum"
    if moves_money is not None:
        return f"moves money: confirms {confirming(moves_money)}"
    return None


# What confirming a venue's offer to answer back does, as a review item, `review show`
# and the console say it (the offer is a receipt's `challenge`).
_CONFIRMING = {
    "dispute": "a dispute against their answer",
    "counter_answer": "a counter-answer against their answer",
    "arbitrate": (
        "a request for arbitration: the question's arbitrator is paid its fee (read from "
        "the arbitrator when sent, within arbitration.max_fee_wei) to rule, once; the "
        "question is frozen until it rules, then claimed"
    ),
    "defend": (
        "a defence of our superseded answer: the decided outcome answered again at double "
        "their bond (within the bond caps; a refusal is recorded, not sent), once, then "
        "followed as our answer"
    ),
}


# Offers whose confirmation needs a second person (four-eyes) whatever the outcome: they
# pay what is not returned.
_APPROVED_OFFERS = {
    "arbitrate": "an arbitration request pays the arbitrator's fee, which is never returned",
}


def offer_approval_reason(action: str) -> str | None:
    """Why confirming the offer `action` needs a second person's approval, or None."""
    return _APPROVED_OFFERS.get(action)


def confirming(action: str) -> str:
    """What confirming the offer `action` sends (a description for people)."""
    return _CONFIRMING.get(action, f"a {action.replace('_', '-')} against their answer")
