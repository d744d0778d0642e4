"""The consensus algorithm document's four scenarios, reproduced numerically.

The seed lists agents with 45 and 48 sources, which its own 50-source minimum would
exclude, so these run with `sources.min_total: 45` (see docs/consensus.md). All sources
have equal credibility, so weights differ by confidence alone.
"""

from __future__ import annotations

import pytest

from oracle.core import SourceThresholds

from .helpers import verdict

SEED_THRESHOLDS = SourceThresholds(min_total=45)


def test_scenario_1_full_agreement() -> None:
    result = verdict(
        [
            ("A", "YES", 0.85, 52),
            ("B", "YES", 0.82, 48),
            ("C", "YES", 0.88, 55),
        ],
        thresholds=SEED_THRESHOLDS,
    )
    assert result.reached
    assert result.outcome == "YES"
    assert result.agreement_ratio == 1.0
    assert result.weighted_ratio == 1.0
    assert result.confidence == pytest.approx(0.85, abs=0.005)  # seed: 85%
    assert len(result.sources) == 155  # seed: 155 deduplicated
    assert result.agreement_level == "unanimous"
    assert result.action == "submit"


def test_scenario_2_supermajority() -> None:
    result = verdict(
        [
            ("A", "YES", 0.85, 52),
            ("B", "YES", 0.82, 48),
            ("C", "NO", 0.65, 51),
        ],
        thresholds=SEED_THRESHOLDS,
    )
    assert result.reached
    assert result.outcome == "YES"
    assert result.agreement_ratio == pytest.approx(2 / 3)  # seed: 67% (2/3)
    # Seed: 71%. With every agent at or above min_total the count factor is 1 for all,
    # giving 1.67 / 2.32; the seed's 71% used a 50-source factor for B (0.96).
    assert result.weighted_ratio == pytest.approx(1.67 / 2.32)
    # Seed: 83.5% (plain mean); the quality-weighted mean weights A's 52 sources over B's 48.
    assert result.confidence == pytest.approx(0.8356, abs=0.0001)
    assert len(result.sources) == 100  # seed: 100, from agreeing agents
    assert [d.agent_id for d in result.dissent] == ["C"]
    assert result.agreement_level == "majority"
    assert not result.requires_human_review


def test_scenario_3_no_consensus() -> None:
    result = verdict(
        [
            ("A", "YES", 0.55, 50),
            ("B", "NO", 0.60, 52),
            ("C", "UNDETERMINED", 0.40, 48),
        ],
        thresholds=SEED_THRESHOLDS,
    )
    assert not result.reached
    assert result.outcome == "UNDETERMINED"
    assert result.agreement_ratio == pytest.approx(1 / 3)  # seed: 33% (max)
    assert result.requires_human_review
    assert result.review_reasons[0].startswith("no consensus")
    assert result.review_codes == ("no_consensus",)
    assert result.agreement_level == "contested"
    assert result.confidence == 0.0


def test_scenario_4_weighted_tie_resolution() -> None:
    result = verdict(
        [
            ("A", "YES", 0.90, 60),
            ("B", "NO", 0.50, 45),
            ("C", "YES", 0.85, 55),
        ],
        thresholds=SEED_THRESHOLDS,
    )
    assert result.reached
    assert result.outcome == "YES"
    assert result.agreement_ratio == pytest.approx(2 / 3)  # seed: simple ratio 67%
    assert round(result.weighted_ratio, 2) == 0.78  # seed: 78%
