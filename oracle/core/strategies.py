"""Consensus strategies: how the valid agents' votes become a leading outcome.

A strategy sees one ballot per valid agent (outcome, confidence, vote weight) and the
candidate outcomes (the market's outcomes plus UNDETERMINED). It answers which outcome
leads, whether that lead is strong enough by the strategy's own measure, and that
measure (`score`). Everything else, in particular whether the answer may go on-chain
without a person, is the engine's decision policy, which applies to every strategy.

Built in, adapted from the strategies document to outcome votes (a vote for one outcome
is agreement with it and disagreement with every other candidate):

- `bft-weighted` (default): share of agents per outcome against the BFT quorum;
  weights only break ties between equally supported outcomes.
- `voting`: share of agents per outcome; ties go to the earlier candidate.
- `confidence-weighted`: share of total vote weight per outcome.
- `bayesian`: posterior over the candidates from a uniform prior; each vote is a
  likelihood ratio of 1 + weight for its outcome and 1 / (1 + weight) for the others.
- `entropy`: 1 - H / H_max of the weight distribution over the candidates.
- `hierarchical`: the heaviest voter decides unless it voted UNDETERMINED, in which
  case `confidence-weighted` decides.

Custom strategies implement :class:`ConsensusStrategy` and are added with
:func:`register_strategy`, or exposed by an installed package under the entry-point
group `oracle.consensus_strategies`; `consensus.strategy` selects one by name.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from importlib.metadata import entry_points
from typing import Protocol, runtime_checkable

from oracle.core.models import UNDETERMINED

ENTRY_POINT_GROUP = "oracle.consensus_strategies"


@dataclass(frozen=True)
class Ballot:
    """One valid agent's vote as a strategy sees it."""

    agent_id: str
    outcome: str
    confidence: float
    weight: float


@dataclass(frozen=True)
class StrategyVerdict:
    """A strategy's answer: the leading outcome, whether it passed, and by what measure."""

    leader: str
    reached: bool
    score: float
    explanation: str


@runtime_checkable
class ConsensusStrategy(Protocol):
    """The contract every strategy keeps.

    `evaluate` is pure: same ballots in any order give the same verdict. `ballots` is
    never empty; `candidates` lists every outcome a ballot may carry, in the market's
    order; `required` is the agreement threshold as an exact fraction. `leader` must be
    one of `candidates`; `score` lies in [0, 1].
    """

    name: str

    def evaluate(
        self, ballots: Sequence[Ballot], candidates: Sequence[str], required: Fraction
    ) -> StrategyVerdict: ...


def _counts(ballots: Sequence[Ballot]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for ballot in ballots:
        counts[ballot.outcome] = counts.get(ballot.outcome, 0) + 1
    return counts


def _weights(ballots: Sequence[Ballot]) -> dict[str, float]:
    # math.fsum keeps the total independent of ballot order.
    by_outcome: dict[str, list[float]] = {}
    for ballot in ballots:
        by_outcome.setdefault(ballot.outcome, []).append(ballot.weight)
    return {outcome: math.fsum(values) for outcome, values in by_outcome.items()}


def _weighted_leader(
    ballots: Sequence[Ballot], candidates: Sequence[str]
) -> tuple[dict[str, float], float, str]:
    """The vote weight of each outcome, their total and the heaviest outcome (a tie going
    to the earlier candidate): what the weight-share strategies measure."""
    weights = _weights(ballots)
    leader = max(weights, key=lambda o: (weights[o], -candidates.index(o)))
    return weights, math.fsum(weights.values()), leader


def _passes(value: float, required: Fraction) -> bool:
    # Tolerate float rounding in weight sums: 0.6666666666 must pass two thirds.
    return value >= float(required) - 1e-9


class BftWeightedStrategy:
    name = "bft-weighted"

    def evaluate(
        self, ballots: Sequence[Ballot], candidates: Sequence[str], required: Fraction
    ) -> StrategyVerdict:
        counts, weights = _counts(ballots), _weights(ballots)
        leader = max(
            counts,
            key=lambda o: (counts[o], weights[o], -candidates.index(o)),
        )
        agreeing, total = counts[leader], len(ballots)
        reached = Fraction(agreeing, total) >= required
        return StrategyVerdict(
            leader=leader,
            reached=reached,
            score=agreeing / total,
            explanation=(
                f"{agreeing} of {total} valid agents chose {leader}; "
                f"the quorum is {required} ({'met' if reached else 'not met'})"
            ),
        )


class SimpleVotingStrategy:
    name = "voting"

    def evaluate(
        self, ballots: Sequence[Ballot], candidates: Sequence[str], required: Fraction
    ) -> StrategyVerdict:
        counts = _counts(ballots)
        leader = max(counts, key=lambda o: (counts[o], -candidates.index(o)))
        ratio = Fraction(counts[leader], len(ballots))
        reached = ratio >= required
        return StrategyVerdict(
            leader=leader,
            reached=reached,
            score=float(ratio),
            explanation=f"one vote per agent: {leader} has {ratio} of the votes",
        )


class ConfidenceWeightedStrategy:
    name = "confidence-weighted"

    def evaluate(
        self, ballots: Sequence[Ballot], candidates: Sequence[str], required: Fraction
    ) -> StrategyVerdict:
        weights, total, leader = _weighted_leader(ballots, candidates)
        ratio = weights[leader] / total if total > 0 else 0.0
        return StrategyVerdict(
            leader=leader,
            reached=total > 0 and _passes(ratio, required),
            score=ratio,
            explanation=f"{leader} holds {ratio:.1%} of the total vote weight",
        )


def bayesian_posterior(ballots: Sequence[Ballot], candidates: Sequence[str]) -> dict[str, float]:
    """The posterior over `candidates` from a uniform prior, each ballot a likelihood ratio
    of 1 + weight for its outcome and 1 / (1 + weight) for the others (the `bayesian`
    strategy's measure, and a debate's stopping rule)."""
    # Log space: hundreds of agents would overflow a product of likelihood ratios.
    log_posterior = dict.fromkeys(candidates, 0.0)
    for ballot in ballots:
        evidence = math.log1p(ballot.weight)
        for candidate in candidates:
            log_posterior[candidate] += evidence if candidate == ballot.outcome else -evidence
    peak = max(log_posterior.values())
    unnormalized = {c: math.exp(v - peak) for c, v in log_posterior.items()}
    norm = math.fsum(unnormalized.values())
    return {c: v / norm for c, v in unnormalized.items()}


class BayesianStrategy:
    name = "bayesian"

    def evaluate(
        self, ballots: Sequence[Ballot], candidates: Sequence[str], required: Fraction
    ) -> StrategyVerdict:
        posterior = bayesian_posterior(ballots, candidates)
        leader = max(candidates, key=lambda c: (posterior[c], -candidates.index(c)))
        return StrategyVerdict(
            leader=leader,
            reached=_passes(posterior[leader], required),
            score=posterior[leader],
            explanation=(
                f"posterior P({leader}) = {posterior[leader]:.3f} "
                f"from a uniform prior over {len(candidates)} outcomes"
            ),
        )


class EntropyStrategy:
    name = "entropy"

    def evaluate(
        self, ballots: Sequence[Ballot], candidates: Sequence[str], required: Fraction
    ) -> StrategyVerdict:
        weights, total, leader = _weighted_leader(ballots, candidates)
        if total <= 0:
            return StrategyVerdict(leader, False, 0.0, "no vote carries any weight")
        # A share can underflow to 0.0 (a subnormal weight beside a whole one): it adds
        # nothing to the entropy, as its limit p*log(p) -> 0 says.
        shares = [w / total for w in weights.values()]
        entropy = -math.fsum(p * math.log2(p) for p in shares if p > 0)
        certainty = 1.0 - entropy / math.log2(len(candidates))
        return StrategyVerdict(
            leader=leader,
            reached=_passes(certainty, required),
            score=certainty,
            explanation=f"1 - H/H_max = {certainty:.3f} over {len(candidates)} outcomes",
        )


class HierarchicalStrategy:
    name = "hierarchical"

    def evaluate(
        self, ballots: Sequence[Ballot], candidates: Sequence[str], required: Fraction
    ) -> StrategyVerdict:
        top = max(ballots, key=lambda b: (b.weight, b.agent_id))
        if top.outcome == UNDETERMINED:
            fallback = ConfidenceWeightedStrategy().evaluate(ballots, candidates, required)
            return StrategyVerdict(
                fallback.leader,
                fallback.reached,
                fallback.score,
                f"top voter {top.agent_id} abstained; {fallback.explanation}",
            )
        return StrategyVerdict(
            leader=top.outcome,
            reached=_passes(top.weight, required),
            score=top.weight,
            explanation=f"top voter {top.agent_id} (weight {top.weight:.3f}) chose {top.outcome}",
        )


_BUILT_IN: tuple[ConsensusStrategy, ...] = (
    BftWeightedStrategy(),
    SimpleVotingStrategy(),
    ConfidenceWeightedStrategy(),
    BayesianStrategy(),
    EntropyStrategy(),
    HierarchicalStrategy(),
)
_registry: dict[str, ConsensusStrategy] = {s.name: s for s in _BUILT_IN}


def register_strategy(strategy: ConsensusStrategy, *, replace: bool = False) -> None:
    """Make `strategy` selectable as `consensus.strategy: <strategy.name>`."""
    if not isinstance(strategy, ConsensusStrategy):
        raise TypeError("a strategy needs a `name` and an `evaluate` method")
    if strategy.name in _registry and not replace:
        raise ValueError(f"strategy {strategy.name!r} is already registered")
    _registry[strategy.name] = strategy


def unregister_strategy(name: str) -> None:
    """Remove a custom strategy; built-ins cannot be removed."""
    if any(s.name == name for s in _BUILT_IN):
        raise ValueError(f"strategy {name!r} is built in")
    _registry.pop(name, None)


@cache
def _load_entry_points() -> None:
    """Register strategies that installed packages expose; runs once per process."""
    for entry_point in entry_points(group=ENTRY_POINT_GROUP):
        strategy = entry_point.load()
        register_strategy(strategy() if isinstance(strategy, type) else strategy, replace=True)


def strategy_names() -> frozenset[str]:
    _load_entry_points()
    return frozenset(_registry)


def get_strategy(name: str) -> ConsensusStrategy:
    _load_entry_points()
    try:
        return _registry[name]
    except KeyError:
        raise ValueError(
            f"unknown strategy {name!r}; known: {', '.join(sorted(_registry))}"
        ) from None
