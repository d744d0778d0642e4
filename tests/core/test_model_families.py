"""consensus.min_model_families: agreement from one model family goes to a person."""

from __future__ import annotations

from typing import Any

import pytest

from oracle.core import ConsensusParams, SourceThresholds, evaluate, parse_consensus_input
from oracle.core.proof import build_proof
from oracle.testing import consensus_document, result_dict

from .helpers import verdict


def family(agent_id: str, outcome: str, model_family: str | None) -> dict[str, Any]:
    return {**result_dict(agent_id, outcome, 0.9), "model_family": model_family}


def test_agreement_from_one_family_is_reviewed() -> None:
    result = verdict(
        [family("a", "YES", "gpt"), family("b", "YES", "gpt"), family("c", "NO", "claude")]
    )
    assert result.reached
    assert result.outcome == "YES"
    assert result.review_codes == ("model_families",)
    assert result.review_reasons == (
        "the agreeing agents come from 1 model family, consensus.min_model_families needs 2: "
        "errors of one model family are correlated",
    )
    assert result.action == "review"


def test_two_families_agreeing_are_submitted() -> None:
    result = verdict(
        [family("a", "YES", "gpt"), family("b", "YES", "claude"), family("c", "YES", "gpt")]
    )
    assert result.review_codes == ()
    assert result.action == "submit"


def test_agents_without_a_family_each_count_as_their_own() -> None:
    # Documented choice: an unknown family is never merged with another unknown one.
    result = verdict([family("a", "YES", None), family("b", "YES", None), family("c", "YES", None)])
    assert result.action == "submit"
    mixed = verdict([family("a", "YES", "gpt"), family("b", "YES", None), family("c", "NO", "gpt")])
    assert mixed.action == "submit"


def test_setting_can_demand_more_families_or_be_relaxed() -> None:
    votes = [family("a", "YES", "gpt"), family("b", "YES", "claude"), family("c", "YES", "llama")]
    assert verdict(votes, ConsensusParams(min_model_families=3)).action == "submit"
    assert verdict(votes, ConsensusParams(min_model_families=4)).review_codes == ("model_families",)
    one = [family(a, "YES", "gpt") for a in ("a", "b", "c")]
    assert verdict(one, ConsensusParams(min_model_families=1)).action == "submit"


def test_agreed_undetermined_is_not_sent_to_review_for_diversity() -> None:
    votes = [family(a, "UNDETERMINED", "gpt") for a in ("a", "b", "c")]
    result = verdict(votes)
    assert result.action == "research_again"
    assert "model_families" not in result.review_codes


def test_only_agreeing_agents_count() -> None:
    # Two gpt agents agree; the dissenting claude agent adds no diversity to the YES side.
    votes = [family("a", "YES", "gpt"), family("b", "YES", "gpt"), family("c", "NO", "claude")]
    assert "model_families" in verdict(votes).review_codes


def test_setting_is_validated_and_recorded_in_the_proof() -> None:
    with pytest.raises(ValueError, match="min_model_families"):
        ConsensusParams(min_model_families=0)
    params = ConsensusParams()
    assert params.min_model_families == 2
    document = consensus_document([family(a, "YES", "gpt") for a in ("a", "b", "c")])
    consensus_input = parse_consensus_input(document)
    result = evaluate(consensus_input, params, SourceThresholds())
    proof = build_proof(consensus_input, result, params, SourceThresholds())
    assert proof["config"]["consensus"]["min_model_families"] == 2
