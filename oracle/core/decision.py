"""The decision policy: may this verdict go on-chain without a person having seen it?

Separate from agreement on purpose. A strategy decides whether its quorum agreed
(`reached`); this policy lists every reason a person must look first. It applies to
every strategy, so no strategy can auto-submit an answer that a BFT quorum of agents
did not vote for.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from typing import Any

from oracle.core.models import INVALID, UNDETERMINED, Action, ConsensusResult
from oracle.core.outcomes import InvalidPolicy
from oracle.core.params import ConsensusParams
from oracle.core.text import confusable, visible
from oracle.core.timing import Timed


@dataclass(frozen=True)
class Tally:
    """The figures the policy judges, computed by the engine."""

    reached: bool
    outcome: str
    leading_outcome: str | None
    agreeing_agents: int
    valid_agents: int
    confidence: float
    weighted_ratio: float
    average_overlap: float
    invalid_reason: str | None = None
    # Distinct model families among the agreeing agents; None when not counted.
    agreeing_families: int | None = None


# Every code `review_reasons` can produce; metrics create a series for each up front.
REVIEW_CODES = (
    "invalid",
    "invalid_answer",
    "no_consensus",
    "minority_outcome",
    "weighted_agreement",
    "low_confidence",
    "model_families",
    "source_overlap",
    "confusable_outcomes",
)


@dataclass(frozen=True)
class ReviewReason:
    """Why a person must look: a stable code (for metrics) and a sentence (for people)."""

    code: str
    message: str


def review_reasons(tally: Tally, params: ConsensusParams) -> list[ReviewReason]:
    """Every reason a person must review this verdict; empty when it may be submitted."""
    required = params.required_agreement
    if tally.invalid_reason is not None:
        return [ReviewReason("invalid", tally.invalid_reason)]
    reasons = []
    count_ratio = (
        Fraction(tally.agreeing_agents, tally.valid_agents) if tally.valid_agents else Fraction(0)
    )
    share = f"{tally.agreeing_agents} of {tally.valid_agents} agents"
    if not tally.reached:
        reasons.append(
            ReviewReason(
                "no_consensus",
                f"no consensus: the leading outcome {tally.leading_outcome} has {share}, "
                f"the quorum needs {required}",
            )
        )
    elif count_ratio < required:
        reasons.append(
            ReviewReason(
                "minority_outcome",
                f"{tally.outcome} is backed by only {share}, below the {required} quorum of agents",
            )
        )
    if (
        tally.reached
        and params.use_weighted_voting
        and tally.weighted_ratio < float(required) - 1e-9
    ):
        reasons.append(
            ReviewReason(
                "weighted_agreement",
                f"weighted agreement {tally.weighted_ratio:.1%} is below the {required} quorum",
            )
        )
    if tally.reached and tally.confidence < params.min_confidence:
        reasons.append(
            ReviewReason(
                "low_confidence",
                f"confidence {tally.confidence:.2f} is below consensus.min_confidence "
                f"{params.min_confidence:.2f}",
            )
        )
    if (
        tally.reached
        and tally.outcome != UNDETERMINED
        and tally.agreeing_families is not None
        and tally.agreeing_families < params.min_model_families
    ):
        reasons.append(
            ReviewReason(
                "model_families",
                f"the agreeing agents come from {tally.agreeing_families} model "
                f"{'family' if tally.agreeing_families == 1 else 'families'}, "
                f"consensus.min_model_families needs {params.min_model_families}: "
                "errors of one model family are correlated",
            )
        )
    if tally.average_overlap > params.max_source_overlap:
        reasons.append(
            ReviewReason(
                "source_overlap",
                f"average source overlap {tally.average_overlap:.2f} exceeds "
                f"consensus.max_source_overlap {params.max_source_overlap:.2f}: "
                "the agents' evidence is not independent",
            )
        )
    return reasons


def invalid_reasons(
    outcome: str, invalid_reason: str | None, policy: InvalidPolicy | None
) -> list[ReviewReason]:
    """The venue's word on an INVALID the agents agreed on (`invalid_reason` None: not the
    consensus's own INVALID, which `review_reasons` already sends to a person): with
    `invalid: review` it goes to a person first; with `propose` it goes as any verdict the
    policy lets through; where the venue takes no INVALID (`policy` None) it can only
    come from recorded answers that named it, and a person looks."""
    if outcome != INVALID or invalid_reason is not None or policy == "propose":
        return []
    if policy == "review":
        return [
            ReviewReason(
                "invalid_answer",
                "the agents agree the question is INVALID (canceled, postponed beyond the "
                "market's rules, or unresolvable by its terms); this venue's setting "
                "invalid: review hands that to a person",
            )
        ]
    return [ReviewReason("invalid_answer", "INVALID is not an answer this venue takes")]


def outcome_reasons(outcomes: Sequence[str]) -> list[ReviewReason]:
    """Reasons in the market's own labels for a person to look, whatever the agents say:
    labels a reader cannot tell apart (equal once cleaned and case-folded,
    `oracle.core.text.confusable`: `Yes` and `Ye\\u200bs`), since a verdict naming one
    could be read as the other, by the venue or by whoever checks it."""
    return list(_label_reasons(tuple(outcomes)))


@lru_cache(maxsize=256)
def _label_reasons(outcomes: tuple[str, ...]) -> tuple[ReviewReason, ...]:
    # Worked out once per set of labels: every verdict on a market asks again, and most
    # markets share `YES`/`NO`.
    return tuple(
        ReviewReason(
            "confusable_outcomes",
            "outcome labels a reader cannot tell apart: "
            + " and ".join(f'"{visible(label)}"' for label in group),
        )
        for group in confusable(outcomes)
    )


def with_venue_reasons(result: ConsensusResult, reasons: Sequence[ReviewReason]) -> ConsensusResult:
    """`result` with the reasons the market's venue gives for a person to look (a
    clarification board that could not be read) added to the policy's own, and its action
    chosen again as for any reason: such a verdict is never submitted on the daemon's own."""
    if not reasons:
        return result
    codes = (*result.review_codes, *(r.code for r in reasons))
    messages = (*result.review_reasons, *(r.message for r in reasons))
    every = [ReviewReason(code, message) for code, message in zip(codes, messages, strict=True)]
    return result.model_copy(
        update={
            "requires_human_review": True,
            "review_reasons": messages,
            "review_codes": codes,
            "action": choose_action(every, result.outcome),
        }
    )


def with_timing(result: ConsensusResult, timed: Timed) -> ConsensusResult:
    """`result` with time applied (`oracle.core.timing.timed_action`): a verdict that must
    wait is researched again, whatever the policy said (its reasons are kept in the
    proof's timing record); one the schedule gives up on goes to a person."""
    if timed.kind == "wait":
        return result.model_copy(
            update={
                "action": "research_again",
                "requires_human_review": False,
                "review_reasons": (),
                "review_codes": (),
            }
        )
    if timed.kind == "person" or (timed.kind == "review" and timed.code == "window_unknown"):
        return result.model_copy(
            update={
                "action": "review",
                "requires_human_review": True,
                "review_reasons": (*result.review_reasons, timed.reason),
                "review_codes": (*result.review_codes, timed.code),
            }
        )
    return result


def timing_record(timed: Timed) -> dict[str, Any]:
    """What the proof says of the verdict's timing: the decision, its reason, and the next
    research when it waits."""
    record: dict[str, Any] = {"decision": timed.kind, "code": timed.code, "reason": timed.reason}
    if timed.plan is not None:
        record["next_research_at"] = timed.plan.at
        record["schedule_step"] = timed.plan.step.value
    return record


def choose_action(reasons: list[ReviewReason], outcome: str) -> Action:
    if reasons:
        return "review"
    if outcome == UNDETERMINED:
        return "research_again"  # the agents agree it cannot be decided yet
    return "submit"
