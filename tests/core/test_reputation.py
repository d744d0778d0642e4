"""oracle.core.reputation: ELO by hand, the bounds and minimum history, and the weights
reaching the consensus."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core import ConsensusParams, SourceThresholds, evaluate, parse_consensus_input
from oracle.core.reputation import ReputationParams, elo_ratings, multipliers, reputations
from oracle.core.scoring import Forecast, ScoredMarket
from oracle.testing import consensus_document, result_dict

YES_NO = ("YES", "NO")


def market(final: str, *answers: tuple[str, str, float]) -> ScoredMarket:
    return ScoredMarket(
        market_id="m",
        venue="v",
        outcomes=YES_NO,
        final_outcome=final,
        finality="time",
        final_at=0.0,
        forecasts=tuple(Forecast(agent, None, outcome, c) for agent, outcome, c in answers),
    )


def test_elo_by_hand() -> None:
    # Equal ratings: expected 0.5 each; the right one gains k * 0.5 = 12.
    ratings = elo_ratings([market("YES", ("a", "YES", 0.9), ("b", "NO", 0.9))])
    assert ratings == {"a": 1512.0, "b": 1488.0}
    # Both right: a draw between equals changes nothing; UNDETERMINED plays no match.
    ratings = elo_ratings(
        [market("YES", ("a", "YES", 0.9), ("b", "YES", 0.6), ("c", "UNDETERMINED", 0.5))]
    )
    assert ratings == {"a": 1500.0, "b": 1500.0}
    # Second market: a (1512) beats b (1488) again: expected 1 / (1 + 10^(-24/400)).
    expected = 1 / (1 + 10 ** (-24 / 400))
    ratings = elo_ratings([market("YES", ("a", "YES", 0.9), ("b", "NO", 0.9))] * 2)
    assert ratings["a"] == pytest.approx(1512 + 24 * (1 - expected))
    assert ratings["b"] == pytest.approx(1488 - 24 * (1 - expected))


def test_minimum_history_and_the_formula() -> None:
    history = [market("YES", ("good", "YES", 0.9), ("bad", "NO", 0.9))] * 3
    short = reputations(history, ReputationParams(min_history=4))
    assert multipliers(short) == {"bad": 1.0, "good": 1.0}
    found = reputations(history, ReputationParams(min_history=3))
    good, bad = found["good"], found["bad"]
    # good: calibration error |0.9 - 1| = 0.1 -> x1.3; bad: |0.9 - 0| = 0.9 -> x0.5.
    assert good.calibration_error == pytest.approx(0.1)
    assert good.multiplier == pytest.approx(min((1 + (good.rating - 1500) / 800) * 1.3, 1.5))
    assert bad.multiplier == 0.5  # below 1 - influence: held at the floor


@given(
    st.lists(
        st.tuples(
            st.sampled_from(YES_NO),
            st.lists(st.tuples(st.sampled_from(YES_NO), st.floats(0, 1)), min_size=3, max_size=3),
        ),
        min_size=1,
        max_size=30,
    ),
    st.floats(0.0, 0.9),
)
def test_multipliers_stay_within_the_influence(
    history: list[tuple[str, list[tuple[str, float]]]], influence: float
) -> None:
    markets = [
        market(final, *((f"agent-{i}", o, c) for i, (o, c) in enumerate(answers)))
        for final, answers in history
    ]
    params = ReputationParams(min_history=1, influence=influence)
    for value in multipliers(reputations(markets, params)).values():
        assert 1 - influence - 1e-9 <= value <= 1 + influence + 1e-9


def test_the_consensus_weighs_votes_by_reputation() -> None:
    document = consensus_document(
        [result_dict("a", "YES", 0.8), result_dict("b", "YES", 0.8), result_dict("c", "NO", 0.8)]
    )
    consensus_input = parse_consensus_input(document)
    params, thresholds = ConsensusParams(), SourceThresholds()
    plain = evaluate(consensus_input, params, thresholds)
    weighted = evaluate(consensus_input, params, thresholds, {"a": 0.5, "c": 1.5})
    plain_weights = {v.agent_id: v.weight for v in plain.votes}
    weights = {v.agent_id: v.weight for v in weighted.votes}
    assert weights == pytest.approx(
        {"a": plain_weights["a"] * 0.5, "b": plain_weights["b"], "c": plain_weights["c"] * 1.5}
    )
    assert plain.weighted_ratio == pytest.approx(2 / 3)
    assert weighted.weighted_ratio == pytest.approx(1.5 / 3)
    assert evaluate(consensus_input, params, thresholds, {}) == plain
