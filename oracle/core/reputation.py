"""Reputation weights from the track record (optional, off by default): an ELO rating from
outcomes times a calibration multiplier, as the debate-phases design describes them,
bounded and only once an agent has a history.

The formula, for an agent with at least `min_history` scored answers:

- **ELO rating** `R`, from `start` (1500): every market with a final outcome is a round
  of matches between each pair of agents that gave a definite answer: the right one beats
  the wrong one, two right or two wrong draw. `E_a = 1 / (1 + 10^((R_b - R_a) / 400))`,
  `R_a += k (S_a - E_a)` (k = 24), the deltas of one market applied together.
- **ELO factor** `1 + (R - start) / scale` (scale 800: 400 points above the start, the
  usual "beats it 10 to 1", is x1.5).
- **Calibration multiplier** `0.5 + max(0, 1 - 2 * ECE)`, in 0.5-1.5: 1.5 for perfect
  calibration, 1.0 at an expected calibration error of 0.25, 0.5 from 0.5 on
  (`oracle.core.scoring.calibration_error`).
- **Multiplier** `clamp(ELO factor * calibration multiplier, 1 - influence, 1 + influence)`
  (influence 0.5): no agent's vote weight is more than halved or more than x1.5.

An agent with fewer scored answers keeps 1.0. The consensus multiplies each vote's weight
(`confidence x source quality x source count factor`) by its agent's multiplier
(`evaluate(..., reputation=...)`); the proof shows the weights used.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations

from oracle.core.scoring import ScoredMarket, by_agent, forecaster_scores


@dataclass(frozen=True)
class ReputationParams:
    min_history: int = 10
    start: float = 1500.0
    k: float = 24.0
    scale: float = 800.0
    influence: float = 0.5


@dataclass(frozen=True)
class Reputation:
    agent_id: str
    answers: int
    rating: float
    calibration_error: float | None
    multiplier: float


def elo_ratings(
    markets: Iterable[ScoredMarket], params: ReputationParams = ReputationParams()
) -> dict[str, float]:
    """Each agent's rating after the markets, in the order given."""
    ratings: dict[str, float] = defaultdict(lambda: params.start)
    for market in markets:
        if market.final_outcome not in market.outcomes:
            continue
        right = {
            f.agent_id: f.outcome == market.final_outcome
            for f in market.forecasts
            if f.outcome in market.outcomes
        }
        deltas: dict[str, float] = defaultdict(float)
        for a, b in combinations(sorted(right), 2):
            expected = 1.0 / (1.0 + 10 ** ((ratings[b] - ratings[a]) / 400.0))
            score = 0.5 if right[a] == right[b] else float(right[a])
            deltas[a] += params.k * (score - expected)
            deltas[b] -= params.k * (score - expected)
        for agent in right:
            ratings[agent] += deltas[agent]
    return dict(ratings)


def reputations(
    markets: Sequence[ScoredMarket], params: ReputationParams = ReputationParams()
) -> dict[str, Reputation]:
    """Each agent's reputation from `markets` (oldest first), by agent id."""
    ratings = elo_ratings(markets, params)
    found = {}
    for score in forecaster_scores(markets, by_agent):
        rating = ratings.get(score.name, params.start)
        multiplier = 1.0
        if score.answers >= params.min_history:
            elo_factor = 1.0 + (rating - params.start) / params.scale
            ece = score.calibration_error if score.calibration_error is not None else 0.25
            calibration = 0.5 + max(0.0, 1.0 - 2.0 * ece)
            multiplier = min(
                max(elo_factor * calibration, 1.0 - params.influence), 1.0 + params.influence
            )
        found[score.name] = Reputation(
            score.name, score.answers, rating, score.calibration_error, multiplier
        )
    return found


def multipliers(found: Mapping[str, Reputation]) -> dict[str, float]:
    return {agent: r.multiplier for agent, r in found.items()}
