"""BFT quorum, fault tolerance and the seed's edge cases."""

from __future__ import annotations

from fractions import Fraction

import pytest

from oracle.core import INVALID, ConsensusParams, fault_tolerance
from oracle.testing import result_dict

from .helpers import verdict


def _split(agreeing: int, total: int) -> list[tuple[str, str, float]]:
    return [(f"agent-{i}", "YES" if i < agreeing else "NO", 0.8) for i in range(total)]


@pytest.mark.parametrize(
    ("agreeing", "total", "reached"),
    [(2, 3, True), (3, 5, False), (4, 5, True), (5, 7, True), (4, 7, False), (3, 3, True)],
)
def test_threshold_067_is_exactly_two_thirds(agreeing: int, total: int, reached: bool) -> None:
    result = verdict(_split(agreeing, total))
    assert result.reached is reached
    assert result.outcome == ("YES" if reached else "UNDETERMINED")
    assert result.required_agreement_fraction == "2/3"


@pytest.mark.parametrize(
    ("written", "exact"),
    [
        (0.67, Fraction(2, 3)),
        (0.667, Fraction(2, 3)),
        (0.75, Fraction(3, 4)),
        (0.6, Fraction(3, 5)),
        (1.0, Fraction(1)),
    ],
)
def test_threshold_as_written(written: float, exact: Fraction) -> None:
    assert ConsensusParams(threshold=written).required_agreement == exact


def test_threshold_075_rejects_two_of_three() -> None:
    assert not verdict(_split(2, 3), ConsensusParams(threshold=0.75)).reached
    assert verdict(_split(3, 4), ConsensusParams(threshold=0.75)).reached


@pytest.mark.parametrize(("n", "f"), [(1, 0), (3, 0), (4, 1), (5, 1), (6, 1), (7, 2), (10, 3)])
def test_fault_tolerance(n: int, f: int) -> None:
    assert fault_tolerance(n) == f


def test_fault_tolerance_reported() -> None:
    assert verdict(_split(7, 7)).fault_tolerance == 2


def test_one_confident_agent_cannot_outvote_a_majority() -> None:
    votes = [
        result_dict("expert", "YES", 1.0, 200, credibility=1.0),
        result_dict("b", "NO", 0.51, 50, credibility=0.3),
        result_dict("c", "NO", 0.51, 50, credibility=0.3),
    ]
    result = verdict(votes)
    assert result.leading_outcome == "NO"
    assert result.outcome != "YES"
    assert result.weighted_ratio < 0.5  # YES holds most of the weight, yet cannot win


def test_too_few_valid_agents_is_invalid_and_reviewed() -> None:
    votes = [("a", "YES", 0.9), ("b", "YES", 0.9), result_dict("c", "YES", 0.9, 10)]
    result = verdict(votes)
    assert result.outcome == INVALID
    assert not result.reached
    assert result.requires_human_review
    assert result.review_reasons == ("only 2 valid agents, consensus.min_agents needs 3",)
    assert result.review_codes == ("invalid",)
    assert [e.agent_id for e in result.excluded] == ["c"]


def test_single_agent_is_insufficient_data_even_when_allowed() -> None:
    result = verdict([("a", "YES", 0.99)], ConsensusParams(min_agents=2))
    assert result.outcome == INVALID
    assert "insufficient data" in result.review_reasons[0]


def test_all_undetermined_is_a_consensus_on_undetermined() -> None:
    result = verdict(
        [("a", "UNDETERMINED", 0.6), ("b", "UNDETERMINED", 0.7), ("c", "UNDETERMINED", 0.8)]
    )
    assert result.reached
    assert result.outcome == "UNDETERMINED"
    assert result.confidence == pytest.approx(0.7)
    assert not result.requires_human_review
    assert result.action == "research_again"


def test_every_agent_saying_not_yet_without_sources_is_undetermined_not_invalid() -> None:
    # An event still to come has no evidence to cite: the source thresholds would have
    # excluded every answer, and "only 0 valid agents" sent the market to a person.
    result = verdict([result_dict(a, "UNDETERMINED", 1.0, 0) for a in ("a", "b", "c")])
    assert (result.outcome, result.reached, result.action) == (
        "UNDETERMINED",
        True,
        "research_again",
    )
    assert not result.requires_human_review
    assert result.explanation.startswith("every agent (3) found the event cannot be decided yet")
    assert "no evidence is needed" in result.explanation
    assert result.excluded == ()
    assert all(v.counted for v in result.votes)
    assert (result.valid_agents, result.confidence, result.weighted_ratio) == (3, 1.0, 1.0)


def test_not_yet_counts_answers_with_thin_evidence_beside_answers_with_enough() -> None:
    votes = [
        result_dict("a", "UNDETERMINED", 0.9),
        result_dict("b", "UNDETERMINED", 0.9, 3),
        result_dict("c", "UNDETERMINED", 0.8, 0),
    ]
    result = verdict(votes)
    assert (result.outcome, result.action, result.valid_agents) == (
        "UNDETERMINED",
        "research_again",
        3,
    )
    assert result.confidence > 0.5  # weighed by the evidence cited, where any is


def test_not_yet_needs_min_agents_answers() -> None:
    result = verdict([result_dict(a, "UNDETERMINED", 1.0, 0) for a in ("a", "b")])
    assert result.outcome == INVALID
    assert result.review_codes == ("invalid",)
    assert len(result.excluded) == 2


def test_a_mix_still_excludes_answers_without_sources() -> None:
    votes = [
        ("a", "YES", 0.9),
        ("b", "YES", 0.9),
        ("c", "YES", 0.9),
        result_dict("d", "UNDETERMINED", 1.0, 0),
        result_dict("e", "UNDETERMINED", 1.0, 0),
    ]
    result = verdict(votes)
    assert (result.outcome, result.action, result.valid_agents) == ("YES", "submit", 3)
    assert [e.agent_id for e in result.excluded] == ["d", "e"]
    thin = verdict([("a", "UNDETERMINED", 0.9), *(result_dict(x, "NO", 0.9, 0) for x in "bc")])
    assert thin.outcome == INVALID  # one valid agent: the source-less NOs do not count
    assert [e.agent_id for e in thin.excluded] == ["b", "c"]


def test_failures_are_listed_and_do_not_vote() -> None:
    result = verdict(
        [("a", "YES", 0.9), ("b", "YES", 0.9), ("c", "YES", 0.9)],
        failures=[{"agent_id": "d", "error": "timeout after 300 s"}],
    )
    assert result.reached
    assert result.valid_agents == 3
    assert [f.agent_id for f in result.failures] == ["d"]
    assert any("failed to answer" in spot for spot in result.blind_spots)


def test_categorical_market() -> None:
    outcomes = ["Alice", "Bob", "Carol"]
    result = verdict([("a", "Bob", 0.8), ("b", "Bob", 0.9), ("c", "Carol", 0.7)], outcomes=outcomes)
    assert result.reached
    assert result.outcome == "Bob"
    assert result.dissent[0].outcome == "Carol"
    assert result.tensions[0].options == ("Bob", "Carol")
