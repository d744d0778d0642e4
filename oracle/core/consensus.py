"""The consensus engine: agent answers in, verdict out. Pure; no I/O.

Steps: de-duplicate each agent's sources; exclude agents whose evidence falls short
(with every reason); weigh the rest; stop at INVALID when too few remain; otherwise let
the configured strategy find the leading outcome; then apply the decision policy.

Where the venue takes INVALID (`Market.invalid`), it is an outcome the agents may vote
for like any other, needing the same evidence and the same quorum; an agreed INVALID
then goes as the venue's setting says (`oracle.core.decision.invalid_reasons`).

When every agent (at least `consensus.min_agents` of them) says the event cannot be
decided yet, that is the verdict, UNDETERMINED, whatever their sources: "not yet" needs
no evidence (there is none to cite for an event still to come), so no answer is excluded
for want of it, and the market is researched again rather than sent to a person.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

from oracle.core import decision
from oracle.core.models import (
    INVALID,
    UNDETERMINED,
    AgentResult,
    AgreementLevel,
    ConsensusInput,
    ConsensusResult,
    Dissent,
    ExcludedAgent,
    SourceOverlap,
    Tension,
    Vote,
)
from oracle.core.params import ConsensusParams, SourceThresholds

if TYPE_CHECKING:
    from oracle.core.inputs import ConsensusSources
from oracle.core.sources import (
    Evidence,
    SourceFields,
    evidence,
    merged,
    overlap,
    source_quality,
    vote_weight,
)
from oracle.core.strategies import Ballot, get_strategy
from oracle.core.urls import normalize_url
from oracle.core.validation import category_shortfalls

HIGH_SEVERITY_DISSENT = 0.7  # the proof document's blind-spot bar for a dissent
LOW_AGREEMENT = 0.6


def fault_tolerance(valid_agents: int) -> int:
    """f = floor((n - 1) / 3): faulty agents an n-agent BFT quorum survives."""
    return max(valid_agents - 1, 0) // 3


def agreement_level(ratio: float) -> AgreementLevel:
    if ratio >= 0.9:
        return "unanimous"
    if ratio >= LOW_AGREEMENT:
        return "majority"
    return "contested"


def model_families(results: Sequence[AgentResult]) -> int:
    """Distinct model families; an agent with no recorded family is a family of its own."""
    return len({r.model_family or f"\x00unknown:{r.agent_id}" for r in results})


def final_confidence(agreeing: Sequence[AgentResult]) -> float:
    """Agreeing agents' confidence averaged with weight source_quality x source count."""
    return _final_confidence(
        agreeing, [source_quality(r.sources) * len(r.sources) for r in agreeing]
    )


def _final_confidence(agreeing: Sequence[AgentResult], weights: Sequence[float]) -> float:
    """`final_confidence`, each agent's weight given."""
    total = math.fsum(weights)
    if total <= 0:
        return 0.0
    return math.fsum(r.confidence * w for r, w in zip(agreeing, weights, strict=True)) / total


def evaluate(
    consensus_input: ConsensusInput,
    params: ConsensusParams,
    thresholds: SourceThresholds,
    reputation: Mapping[str, float] | None = None,
    *,
    sources: ConsensusSources | None = None,
) -> ConsensusResult:
    """The verdict on one market; deterministic and independent of agent order.

    `reputation`: a weight multiplier per agent (`oracle.core.reputation`; an agent not
    in it, 1.0); the votes' weights, and so the proof, carry it. `sources`: the agents'
    sources as `oracle.core.inputs.read_consensus_input` read them, with `consensus_input`
    its `answers` (whose results hold none): the same verdict as from the input read by
    `parse_consensus_input`."""
    reputation = reputation or {}
    market = consensus_input.market
    held = _evidence(consensus_input, sources)
    results = sorted(consensus_input.results, key=lambda r: r.agent_id)
    not_yet = len(results) >= params.min_agents and all(r.outcome == UNDETERMINED for r in results)
    votes, valid, excluded = _votes(
        results, held, thresholds, reputation, need_evidence=not not_yet
    )
    weight_of = {v.agent_id: v.weight for v in votes}
    source_overlap = overlap((r.agent_id, held[r.agent_id].url_set) for r in valid)
    n = len(valid)
    required = params.required_agreement
    strategy = get_strategy(params.strategy)

    invalid_reason = None
    if n == 1:
        invalid_reason = "insufficient data: a single valid agent is not a consensus"
    elif n < params.min_agents:
        invalid_reason = f"only {n} valid agents, consensus.min_agents needs {params.min_agents}"

    if invalid_reason is not None:
        leader, reached, score = None, False, 0.0
        explanation = invalid_reason
    elif not_yet:
        leader, reached, score = UNDETERMINED, True, 1.0
        explanation = (
            f"every agent ({n}) found the event cannot be decided yet; "
            "no evidence is needed to say so"
        )
    elif all(r.outcome == UNDETERMINED for r in valid):
        leader, reached, score = UNDETERMINED, True, 1.0
        explanation = "all valid agents found the event undetermined; that is a consensus"
    else:
        verdict = strategy.evaluate(
            [Ballot(r.agent_id, r.outcome, r.confidence, weight_of[r.agent_id]) for r in valid],
            market.candidates([r.outcome for r in valid]),
            required,
        )
        leader, reached, score = verdict.leader, verdict.reached, verdict.score
        explanation = verdict.explanation

    agreeing = [r for r in valid if r.outcome == leader]
    total_weight = math.fsum(weight_of[r.agent_id] for r in valid)
    agreeing_weight = math.fsum(weight_of[r.agent_id] for r in agreeing)
    agreement_ratio = len(agreeing) / n if n else 0.0
    # "Not yet" may come with no evidence, so with no weight: every agent agrees all the same.
    weighted_ratio = 1.0 if not_yet else _share(agreeing_weight, total_weight)
    if invalid_reason is not None:
        outcome = INVALID
    else:
        outcome = leader if reached and leader is not None else UNDETERMINED
    if not_yet and not any(held[r.agent_id].sources for r in agreeing):
        # Weighed by evidence where any is cited; with none, the agents' own confidence.
        confidence = math.fsum(r.confidence for r in agreeing) / n
    elif reached:
        confidence = _final_confidence(
            agreeing,
            [held[r.agent_id].quality * len(held[r.agent_id].sources) for r in agreeing],
        )
    else:
        confidence = 0.0

    tally = decision.Tally(
        reached=reached,
        outcome=outcome,
        leading_outcome=leader,
        agreeing_agents=len(agreeing),
        valid_agents=n,
        confidence=confidence,
        weighted_ratio=weighted_ratio,
        average_overlap=source_overlap.average,
        invalid_reason=invalid_reason,
        agreeing_families=model_families(agreeing),
    )
    reasons = (
        decision.review_reasons(tally, params)
        + decision.invalid_reasons(outcome, invalid_reason, market.invalid)
        + decision.outcome_reasons(market.outcomes)
    )
    dissent = _dissent(valid, leader)
    return ConsensusResult(
        market_id=market.id,
        strategy=strategy.name,
        reached=reached,
        outcome=outcome,
        leading_outcome=leader,
        confidence=confidence,
        agreement_ratio=agreement_ratio,
        weighted_ratio=weighted_ratio,
        strategy_score=score,
        required_agreement=float(required),
        required_agreement_fraction=str(required),
        valid_agents=n,
        fault_tolerance=fault_tolerance(n),
        agreement_level=agreement_level(agreement_ratio),
        requires_human_review=bool(reasons),
        review_reasons=tuple(r.message for r in reasons),
        review_codes=tuple(r.code for r in reasons),
        action=decision.choose_action(reasons, outcome),
        explanation=explanation,
        votes=tuple(votes),
        excluded=tuple(excluded),
        failures=tuple(sorted(consensus_input.failures, key=lambda f: f.agent_id)),
        dissent=dissent,
        tensions=_tensions(dissent, agreeing, leader),
        blind_spots=_blind_spots(
            dissent=dissent,
            agreement_ratio=agreement_ratio,
            excluded=excluded,
            consensus_input=consensus_input,
            overlap=source_overlap,
            params=params,
            valid_agents=n,
        ),
        overlap=source_overlap,
        # Reviewers of a failed consensus need every side's evidence, not just the leader's.
        sources=tuple(
            merged(
                (r.agent_id, held[r.agent_id].sources, held[r.agent_id].urls)
                for r in (agreeing if reached else valid)
            )
        ),
    )


def _evidence(
    consensus_input: ConsensusInput, sources: ConsensusSources | None
) -> dict[str, Evidence]:
    """Each agent's evidence by its id: from its models, or as `sources` read it. Only
    sources read count (`oracle.core.evidence`); those seen, not read, are listed on the
    vote for a person and count for nothing."""
    by_agent: Mapping[str, Sequence[SourceFields]]
    columns = None
    if sources is None:
        by_agent = {r.agent_id: [vars(s) for s in r.sources] for r in consensus_input.results}
        normalized: Callable[[str], str] | None = normalize_url
    else:
        by_agent, columns = sources["sources"], sources["columns"]
        normalized = None if sources["normalized"] is None else sources["normalized"].__getitem__
    return {
        r.agent_id: evidence(
            by_agent[r.agent_id], normalized, None if columns is None else columns[r.agent_id]
        )
        for r in consensus_input.results
    }


def _votes(
    results: Sequence[AgentResult],
    held: Mapping[str, Evidence],
    thresholds: SourceThresholds,
    reputation: Mapping[str, float],
    *,
    need_evidence: bool,
) -> tuple[list[Vote], list[AgentResult], list[ExcludedAgent]]:
    """Every agent's vote, the answers that count, and those excluded for thin evidence
    (none when `need_evidence` is False)."""
    votes, valid, excluded = [], [], []
    for result in results:
        sources = held[result.agent_id]
        shortfalls = (
            category_shortfalls(sources.categories, thresholds, sources.category_kinds)
            if need_evidence
            else []
        )
        quality = sources.quality
        votes.append(
            Vote(
                agent_id=result.agent_id,
                outcome=result.outcome,
                confidence=result.confidence,
                weight=vote_weight(
                    result.confidence, sources.sources, thresholds.min_total, quality=quality
                )
                * reputation.get(result.agent_id, 1.0),
                source_quality=quality,
                source_count=len(sources.sources),
                counted=not shortfalls,
                excluded_reasons=tuple(shortfalls),
                seen_not_read=sources.seen_not_read,
            )
        )
        if shortfalls:
            excluded.append(ExcludedAgent(agent_id=result.agent_id, reasons=tuple(shortfalls)))
        else:
            valid.append(result)
    return votes, valid, excluded


def _share(part: float, whole: float) -> float:
    return part / whole if whole > 0 else 0.0


def _dissent(valid: Sequence[AgentResult], leader: str | None) -> tuple[Dissent, ...]:
    if leader is None:
        return ()
    return tuple(
        Dissent(
            agent_id=r.agent_id,
            outcome=r.outcome,
            confidence=r.confidence,
            kind="partial" if r.outcome == UNDETERMINED else "full",
            reasoning=r.reasoning,
        )
        for r in valid
        if r.outcome != leader
    )


def _tensions(
    dissent: Sequence[Dissent], agreeing: Sequence[AgentResult], leader: str | None
) -> tuple[Tension, ...]:
    opposing = sorted({d.outcome for d in dissent if d.kind == "full"})
    if leader is None or not opposing:
        return ()
    involved = sorted({r.agent_id for r in agreeing} | {d.agent_id for d in dissent})
    return (
        Tension(
            description=f"agents disagree on the outcome: {leader} against {', '.join(opposing)}",
            agents_involved=tuple(involved),
            options=(leader, *opposing),
            impact="the answer committed on-chain and every position settled by it",
            suggested_followup=(
                "compare the sources cited only by the dissenting agents with the majority's"
            ),
        ),
    )


def _blind_spots(
    *,
    dissent: Sequence[Dissent],
    agreement_ratio: float,
    excluded: Sequence[ExcludedAgent],
    consensus_input: ConsensusInput,
    overlap: SourceOverlap,
    params: ConsensusParams,
    valid_agents: int,
) -> tuple[str, ...]:
    spots = [
        f"{d.agent_id} dissents with high confidence ({d.confidence:.2f}) for {d.outcome}"
        for d in dissent
        if d.confidence >= HIGH_SEVERITY_DISSENT
    ]
    if valid_agents and agreement_ratio < LOW_AGREEMENT:
        spots.append(
            f"low agreement ({agreement_ratio:.0%}): several readings of the evidence are plausible"
        )
    if excluded:
        spots.append(
            f"{len(excluded)} agent(s) excluded for thin evidence; their views are not counted"
        )
    if consensus_input.failures:
        spots.append(f"{len(consensus_input.failures)} agent(s) failed to answer")
    if overlap.average > params.max_source_overlap:
        spots.append(f"source overlap is {overlap.band} ({overlap.average:.2f})")
    return tuple(spots)
