"""Properties of the default strategy that must hold for every input."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from oracle.core import ConsensusParams, SourceThresholds, evaluate, parse_consensus_input
from oracle.testing import consensus_document, result_dict

THRESHOLDS = SourceThresholds(min_total=5, min_categories=1, min_official=0, min_news=0)
BUILT_IN = ("bft-weighted", "voting", "confidence-weighted", "bayesian", "entropy", "hierarchical")
OUTCOMES = ("YES", "NO", "UNDETERMINED")

votes = st.lists(
    st.tuples(st.sampled_from(OUTCOMES), st.floats(0.0, 1.0), st.floats(0.0, 1.0)),
    min_size=3,
    max_size=9,
)


def _results(spec: list[tuple[str, float, float]]) -> list[dict[str, object]]:
    return [
        result_dict(f"agent-{i}", outcome, confidence, 5, credibility=credibility)
        for i, (outcome, confidence, credibility) in enumerate(spec)
    ]


def _evaluate(results: list[dict[str, object]], params: ConsensusParams | None = None):
    return evaluate(
        parse_consensus_input(consensus_document(results)), params or ConsensusParams(), THRESHOLDS
    )


@settings(max_examples=150, deadline=None)
@given(votes, st.randoms(use_true_random=False))
def test_agent_order_never_changes_the_verdict(spec, random) -> None:
    results = _results(spec)
    shuffled = list(results)
    random.shuffle(shuffled)
    assert _evaluate(results) == _evaluate(shuffled)


def _share(result, outcome):
    counted = [v for v in result.votes if v.counted]
    return sum(v.outcome == outcome for v in counted) / len(counted)


@settings(max_examples=150, deadline=None)
@given(votes, st.sampled_from(OUTCOMES), st.sampled_from(OUTCOMES), st.floats(0.0, 1.0))
def test_a_dissenting_agent_never_raises_agreement(spec, target, extra_outcome, confidence) -> None:
    if extra_outcome == target:
        return
    before = _evaluate(_results(spec))
    after = _evaluate([*_results(spec), result_dict("dissenter", extra_outcome, confidence, 5)])
    assert _share(after, target) < _share(before, target) or _share(before, target) == 0
    if after.reached and after.outcome == target:
        assert before.reached
        assert before.outcome == target
        assert after.agreement_ratio < before.agreement_ratio


@pytest.mark.parametrize("strategy", sorted(BUILT_IN))
@settings(max_examples=60, deadline=None)
@given(st.integers(4, 12), st.data())
def test_a_coalition_under_a_third_never_wins(strategy, n, data) -> None:
    coalition = data.draw(st.integers(1, (n - 1) // 3))
    honest_outcome = data.draw(st.sampled_from(["NO", "UNDETERMINED"]))
    results = [
        # The coalition claims certainty with the best sources it can find.
        result_dict(f"byz-{i}", "YES", 1.0, 5, credibility=1.0)
        for i in range(coalition)
    ] + [
        result_dict(
            f"honest-{i}",
            data.draw(st.sampled_from([honest_outcome, "NO", "UNDETERMINED"])),
            data.draw(st.floats(0.0, 1.0)),
            5,
            credibility=data.draw(st.floats(0.0, 1.0)),
        )
        for i in range(n - coalition)
    ]
    result = _evaluate(results, ConsensusParams(strategy=strategy))
    # Under any strategy the coalition's outcome never goes on-chain without a person;
    # under the default it does not even win.
    assert not (result.outcome == "YES" and result.action == "submit")
    if strategy == "bft-weighted":
        assert result.outcome != "YES"
