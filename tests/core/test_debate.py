"""Debate on conflict, the pure rules: topologies, stopping, flips that count, strength."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core import ConsensusParams, SourceThresholds, evaluate
from oracle.core.debate import (
    Challenge,
    ConsensusStrength,
    DebateParams,
    StopReason,
    Topology,
    challenges,
    flips,
    is_conflict,
    majority_record,
    next_standing,
    stop_reason,
    strength,
    weighted_plurality,
)
from oracle.core.evidence import question_subject
from oracle.core.models import UNDETERMINED, AgentResult, ConsensusInput, Market
from oracle.core.strategies import Ballot
from oracle.testing import result

AGENTS = {"a": "YES", "b": "YES", "c": "NO", "d": "NO"}


def params(topology: Topology, **more: float) -> DebateParams:
    return DebateParams(topology=topology, **more)  # type: ignore[arg-type]


def test_a_conflict_needs_two_definite_outcomes_and_no_quorum() -> None:
    assert is_conflict(["YES", "NO", "YES"], reached=False)
    assert not is_conflict(["YES", "NO", "YES"], reached=True)
    assert not is_conflict(["YES", UNDETERMINED, "YES"], reached=False)  # too early: no debate


def test_all_to_all_pairs_every_opposed_agent() -> None:
    pairs = challenges(AGENTS, params(Topology.ALL_TO_ALL), 1, "m")
    assert pairs == [
        Challenge(critic, target)
        for critic in "abcd"
        for target in "abcd"
        if AGENTS[critic] != AGENTS[target]
    ]


def test_ring_and_star_follow_their_shapes() -> None:
    positions = {"a": "YES", "b": "NO", "c": "YES", "d": "NO"}
    ring = challenges(positions, params(Topology.RING), 1, "m")
    assert ring == [
        Challenge("a", "b"),
        Challenge("b", "c"),
        Challenge("c", "d"),
        Challenge("d", "a"),
    ]
    star = challenges(positions, params(Topology.STAR), 1, "m")
    # The hub (first by name) and each opposed spoke examine each other.
    assert star == [
        Challenge("a", "b"),
        Challenge("a", "d"),
        Challenge("b", "a"),
        Challenge("d", "a"),
    ]


def test_round_robin_gives_one_partner_that_rotates() -> None:
    positions = {f"agent-{i}": ("YES" if i % 2 else "NO") for i in range(5)}
    seen = []
    for round_ in (1, 2, 3):
        pairs = challenges(positions, params(Topology.ROUND_ROBIN), round_, "m")
        assert len({p.critic for p in pairs}) == len(pairs)  # at most one target each
        seen.append(pairs)
    assert seen[0] != seen[1]


def test_sparse_is_reproducible_and_thinner() -> None:
    positions = {f"agent-{i}": ("YES" if i % 2 else "NO") for i in range(8)}
    full = challenges(positions, params(Topology.ALL_TO_ALL), 1, "m")
    sparse = challenges(positions, params(Topology.SPARSE, sparsity=0.5), 1, "m")
    assert sparse == challenges(positions, params(Topology.SPARSE, sparsity=0.5), 1, "m")
    assert set(sparse) < set(full)
    assert sparse != challenges(positions, params(Topology.SPARSE, sparsity=0.5), 1, "other")


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=5), st.sampled_from(["YES", "NO", "X"]), max_size=8
    ),
    st.sampled_from(list(Topology)),
    st.integers(1, 5),
)
def test_challenges_only_pair_disagreeing_agents(
    positions: dict[str, str], topology: Topology, round_: int
) -> None:
    pairs = challenges(positions, params(topology), round_, "seed")
    assert all(positions[p.critic] != positions[p.target] for p in pairs)
    assert pairs == sorted(pairs, key=lambda c: (c.critic, c.target))
    assert challenges(dict(reversed(positions.items())), params(topology), round_, "seed") == pairs


def test_a_round_is_counted_from_one() -> None:
    with pytest.raises(ValueError, match="round"):
        challenges(AGENTS, params(Topology.RING), 0, "m")


SUBJECT = question_subject("Did the parliament pass the budget bill?")


def quoted(answer: AgentResult, quote: str = "The parliament passed the budget") -> AgentResult:
    """`answer` with every source quoting words about the budget question."""
    sources = tuple(s.model_copy(update={"quote": quote}) for s in answer.sources)
    return answer.model_copy(update={"sources": sources})


def test_a_flip_counts_only_with_new_evidence() -> None:
    before = {"a": result("a", "YES", 0.9, 5), "c": result("c", "NO", 0.8, 5)}
    shown = {"a": [before["c"]], "c": [before["a"]]}
    # a takes c's answer with c's own sources: persuaded, not informed.
    herded = quoted(result("c", "NO", 0.9, 5).model_copy(update={"agent_id": "a"}))
    # c found sources of its own that nobody had shown it.
    informed = quoted(result("c-new-research", "YES", 0.85, 3).model_copy(update={"agent_id": "c"}))
    after = {"a": herded, "c": informed}
    marked = flips(before, after, shown, subject=SUBJECT)
    assert [(f.agent_id, f.before, f.after, f.supported) for f in marked] == [
        ("a", "YES", "NO", False),
        ("c", "NO", "YES", True),
    ]
    assert len(marked[1].new_sources) == 3
    # The unsupported flip keeps a's standing answer where its evidence was.
    standing, round_flips = next_standing(before, after, shown, subject=SUBJECT)
    assert round_flips == marked
    assert standing == {"a": before["a"], "c": informed}
    # An agent not revised this round keeps its answer; a same-outcome revision replaces it.
    refined = before["a"].model_copy(update={"confidence": 0.95})
    standing, round_flips = next_standing(before, {"a": refined}, {}, subject=SUBJECT)
    assert standing == {"a": refined, "c": before["c"]}
    assert round_flips == []


def test_a_kept_answer_keeps_the_earlier_sources_it_does_not_cite_again() -> None:
    earlier = result("a", "YES", 0.8, 5)
    # The revision cites one earlier source again and one new one: it replaces the
    # answer (confidence, reasoning, what it cites) and the four others stay its evidence.
    revision = earlier.model_copy(
        update={
            "confidence": 0.9,
            "sources": (earlier.sources[1], *result("a-second-look", "YES", 0.9, 1).sources),
        }
    )
    standing, _ = next_standing({"a": earlier}, {"a": revision}, {"a": []}, subject=SUBJECT)
    kept = standing["a"]
    assert (kept.confidence, kept.reasoning) == (0.9, revision.reasoning)
    assert kept.sources[:2] == revision.sources
    assert set(kept.sources) == set(earlier.sources) | set(revision.sources)
    assert len(kept.sources) == 6
    # A flip (with new evidence) carries nothing over: the earlier sources backed the
    # other outcome.
    flipped = quoted(result("a-new", "NO", 0.8, 2).model_copy(update={"agent_id": "a"}))
    standing, _ = next_standing({"a": earlier}, {"a": flipped}, {"a": []}, subject=SUBJECT)
    assert standing["a"] == flipped


def ballots(*outcomes: str, weight: float = 1.0) -> list[Ballot]:
    return [Ballot(f"agent-{i}", o, 0.9, weight) for i, o in enumerate(outcomes)]


def test_stop_when_the_posterior_converges_the_round_stalls_or_rounds_run_out() -> None:
    candidates = ["YES", "NO", UNDETERMINED]
    rules = DebateParams(max_rounds=3, stop_posterior=0.8)
    # 3 YES against 1 NO, weight 1: P(YES) = 2^3 / (2^3 + 2^-1 ... ) -> well above 0.8.
    assert stop_reason(ballots("YES", "YES", "YES", "NO"), candidates, 1, 1, rules) == (
        StopReason.CONVERGED
    )
    even = ballots("YES", "YES", "NO", "NO")
    assert stop_reason(even, candidates, 0, 0, rules) is None  # the debate starts
    assert stop_reason(even, candidates, 1, 2, rules) is None
    assert stop_reason(even, candidates, 2, 0, rules) == StopReason.STALLED
    assert stop_reason(even, candidates, 3, 2, rules) == StopReason.EXHAUSTED


@pytest.mark.parametrize(
    ("outcomes", "expected"),
    [
        (["YES"] * 5, ConsensusStrength.UNANIMOUS),
        (["YES"] * 9 + ["NO"], ConsensusStrength.STRONG),
        (["YES"] * 4 + ["NO"], ConsensusStrength.MODERATE),  # exactly 80 %
        (["YES"] * 3 + ["NO"] * 2, ConsensusStrength.MODERATE),  # 60 %
        (["YES"] * 11 + ["NO"] * 9, ConsensusStrength.WEAK),
        (["YES"] * 2 + ["NO"] * 2, ConsensusStrength.CONTESTED),
        (["YES"] * 3 + ["NO"] * 1 + ["X"] * 1 + ["Y"] * 1, ConsensusStrength.SPLIT),
        ([], ConsensusStrength.SPLIT),
    ],
)
def test_strength_levels(outcomes: list[str], expected: ConsensusStrength) -> None:
    assert strength(outcomes) == expected


def _conflict(*answers: tuple[str, str, float, int]) -> ConsensusInput:
    market = Market(id="m", question="Did it happen?")
    results = tuple(result(a, o, c, n) for a, o, c, n in answers)
    return ConsensusInput(market=market, results=results)


def test_majority_proposes_the_weighted_plurality_of_the_counted_votes() -> None:
    # Two against two; NO's voters are surer, so NO has the most vote weight.
    verdict = evaluate(
        _conflict(
            ("a", "YES", 0.6, 50),
            ("b", "YES", 0.6, 50),
            ("c", "NO", 0.9, 50),
            ("d", "NO", 0.9, 50),
            ("e", UNDETERMINED, 0.95, 50),
            ("f", "YES", 0.99, 10),
        ),
        ConsensusParams(),
        SourceThresholds(),
    )
    proposal = weighted_plurality(verdict.votes)
    assert proposal.outcome == "NO"
    # UNDETERMINED proposes nothing; f's thin evidence does not count.
    assert set(proposal.weights) == {"YES", "NO"}
    assert proposal.weights["NO"] > proposal.weights["YES"]
    assert proposal.share == pytest.approx(
        proposal.weights["NO"] / (proposal.weights["NO"] + proposal.weights["YES"]), abs=1e-5
    )
    assert majority_record(proposal) == {
        "proposed": "NO",
        "weights": proposal.weights,
        "share": proposal.share,
    }


def test_a_tie_in_weight_proposes_nothing() -> None:
    verdict = evaluate(
        _conflict(
            ("a", "YES", 0.8, 50), ("b", "NO", 0.8, 50), ("c", "YES", 0.7, 50), ("d", "NO", 0.7, 50)
        ),
        ConsensusParams(),
        SourceThresholds(),
    )
    proposal = weighted_plurality(verdict.votes)
    assert proposal.outcome is None
    assert proposal.share == 0.0
    assert weighted_plurality(()).outcome is None


@given(
    st.lists(
        st.tuples(st.sampled_from(["YES", "NO", UNDETERMINED]), st.floats(0.5, 1.0)),
        min_size=3,
        max_size=7,
    )
)
def test_majority_never_changes_a_conflicts_verdict(answers: list[tuple[str, float]]) -> None:
    # The mode's whole promise: it names a proposal, the policy still decides, and a
    # conflict (no quorum) always goes to a person.
    verdict = evaluate(
        _conflict(*((f"agent{i}", o, c, 50) for i, (o, c) in enumerate(answers))),
        ConsensusParams(conflict_resolution="majority"),  # type: ignore[arg-type]
        SourceThresholds(),
    )
    counted = [v.outcome for v in verdict.votes if v.counted]
    if is_conflict(counted, verdict.reached):
        assert verdict.action == "review"
        assert "no_consensus" in verdict.review_codes
        proposal = weighted_plurality(verdict.votes)
        assert proposal.outcome is None or proposal.outcome in set(counted) - {UNDETERMINED}
