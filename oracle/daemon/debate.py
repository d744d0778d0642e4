"""A debate on conflict, as the daemon runs it (`consensus.conflict_resolution: debate`).

The rules are pure and live in :mod:`oracle.core.debate`; this module asks the agents.
Only the agents whose votes counted in the independent verdict debate (one excluded for
thin evidence stays out, with its first answer). Each round, the topology's pairs of
disagreeing agents decide what each agent is shown; every agent shown something answers
again (`AgentPool.revise`, under `consensus.debate.round_timeout`, behind its breaker);
`next_standing` keeps a revision unless it flips without new evidence; `stop_reason`
ends the debate. An agent that fails in a round keeps its standing answer, and the
failure is recorded.

The standing answers then go through `evaluate` with the same parameters as any other
input: the debate can never pass what the thresholds, quorum, overlap and diversity
gates and the decision policy would not. The record of every round goes into the proof.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from oracle.core.consensus import evaluate
from oracle.core.debate import (
    Flip,
    StopReason,
    challenges,
    next_standing,
    stop_reason,
    strength,
)
from oracle.core.evidence import documents, question_subject
from oracle.core.models import AgentFailure, AgentResult, ConsensusInput, ConsensusResult
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.core.strategies import Ballot, bayesian_posterior
from oracle.daemon.research import AgentPool


@dataclass(frozen=True)
class DebateOutcome:
    consensus_input: ConsensusInput  # the standing answers, to be judged as usual
    result: ConsensusResult
    record: dict[str, Any]  # every round, for the proof
    stop: StopReason
    rounds: int
    flips: tuple[Flip, ...]


def _ballots(standing: Mapping[str, AgentResult]) -> list[Ballot]:
    # The posterior weighs each standing answer by its confidence.
    return [Ballot(a, r.outcome, r.confidence, r.confidence) for a, r in sorted(standing.items())]


def _posterior(standing: Mapping[str, AgentResult], candidates: Sequence[str]) -> dict[str, float]:
    return {k: round(v, 6) for k, v in bayesian_posterior(_ballots(standing), candidates).items()}


def _flip_record(flip: Flip) -> dict[str, Any]:
    return {
        "agent": flip.agent_id,
        "from": flip.before,
        "to": flip.after,
        "new_sources": list(flip.new_sources),
        "counted": flip.supported,
    }


async def run_debate(
    pool: AgentPool,
    first: ConsensusInput,
    first_result: ConsensusResult,
    params: ConsensusParams,
    thresholds: SourceThresholds,
) -> DebateOutcome:
    """Debate the conflict in `first` (judged `first_result`) until a stop rule holds."""
    rules = params.debate
    market = first.market
    candidates = market.answerable
    counted = {vote.agent_id for vote in first_result.votes if vote.counted}
    standing = {r.agent_id: r for r in first.results if r.agent_id in counted}
    left_out = tuple(r for r in first.results if r.agent_id not in counted)
    initial = {agent: answer.outcome for agent, answer in sorted(standing.items())}
    rounds: list[dict[str, Any]] = []
    all_flips: list[Flip] = []
    subject = question_subject(market.question, market.outcomes)
    # Per agent, every document it held or was shown so far: none of them is new evidence.
    known = {agent: documents(answer.sources) for agent, answer in standing.items()}
    stop = stop_reason(_ballots(standing), candidates, 0, 0, rules)
    round_ = 0
    while stop is None:
        round_ += 1
        positions = {agent: answer.outcome for agent, answer in standing.items()}
        pairs = challenges(positions, rules, round_, market.id)
        shown: dict[str, list[AgentResult]] = {}
        for pair in pairs:
            shown.setdefault(pair.critic, []).append(standing[pair.target])
        if not shown:  # the topology pairs nobody who disagrees: nothing left to examine
            stop = StopReason.STALLED
            break
        answers = await pool.revise(market, standing, shown, round_, rules.round_timeout)
        revised = {a.agent_id: a.answer for a in answers if isinstance(a.answer, AgentResult)}
        failed = {a.agent_id: a.answer.error for a in answers if isinstance(a.answer, AgentFailure)}
        standing, round_flips = next_standing(
            standing, revised, shown, subject=subject, known=known
        )
        for agent, seen in shown.items():
            known[agent] = known.get(agent, set()).union(*(documents(r.sources) for r in seen))
        for agent, answer in revised.items():
            known[agent] = known.get(agent, set()) | documents(answer.sources)
        all_flips.extend(round_flips)
        moved = sum(1 for flip in round_flips if flip.supported)
        stop = stop_reason(_ballots(standing), candidates, round_, moved, rules)
        rounds.append(
            {
                "round": round_,
                "challenges": [[pair.critic, pair.target] for pair in pairs],
                "answers": {
                    agent: {"outcome": r.outcome, "confidence": r.confidence}
                    for agent, r in sorted(revised.items())
                },
                "failures": dict(sorted(failed.items())),
                "flips": [_flip_record(flip) for flip in round_flips],
                "standing": {agent: r.outcome for agent, r in sorted(standing.items())},
                "posterior": _posterior(standing, candidates),
            }
        )
    final_input = ConsensusInput(
        market=market,
        results=(*(standing[a] for a in sorted(standing)), *left_out),
        failures=first.failures,
    )
    result = evaluate(final_input, params, thresholds)
    record = {
        "initial": initial,
        "initial_posterior": _posterior(
            {r.agent_id: r for r in first.results if r.agent_id in counted}, candidates
        ),
        "rounds": rounds,
        "stop": stop.value,
        "strength": {
            "before": strength(list(initial.values())).value,
            "after": strength([r.outcome for r in standing.values()]).value,
        },
        "unsupported_flips": sorted({f.agent_id for f in all_flips if not f.supported}),
    }
    return DebateOutcome(final_input, result, record, stop, round_, tuple(all_flips))
