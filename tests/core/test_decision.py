"""The decision policy: each review reason on its own, and none when all is well."""

from __future__ import annotations

import inspect
import re

from oracle.core import ConsensusParams, decision
from oracle.testing import result_dict, source_dicts

from .helpers import verdict


def test_clean_consensus_is_submitted() -> None:
    result = verdict([("a", "YES", 0.9), ("b", "YES", 0.8), ("c", "NO", 0.6)])
    assert result.review_reasons == ()
    assert not result.requires_human_review
    assert result.action == "submit"


def test_low_confidence_is_reviewed() -> None:
    result = verdict([("a", "YES", 0.3), ("b", "YES", 0.4), ("c", "YES", 0.35)])
    assert result.reached
    assert result.review_reasons == ("confidence 0.35 is below consensus.min_confidence 0.50",)
    assert result.review_codes == ("low_confidence",)
    assert result.action == "review"


def test_high_source_overlap_is_reviewed() -> None:
    shared = source_dicts("common", 45)
    votes = [result_dict(a, "YES", 0.9, 50, shared=shared) for a in ("a", "b", "c")]
    result = verdict(votes)
    assert result.overlap.average > 0.8
    assert result.overlap.band == "very high"
    assert len(result.review_reasons) == 1
    assert "source overlap" in result.review_reasons[0]
    assert result.review_codes == ("source_overlap",)


def test_weighted_agreement_below_quorum_is_reviewed_only_with_weighted_voting() -> None:
    votes = [
        result_dict("a", "YES", 0.3, credibility=0.3),
        result_dict("b", "YES", 0.3, credibility=0.3),
        result_dict("c", "NO", 1.0, credibility=1.0),
    ]
    weighted = verdict(votes, ConsensusParams(min_confidence=0.1))
    assert weighted.reached
    assert weighted.outcome == "YES"
    assert any(r.startswith("weighted agreement") for r in weighted.review_reasons)
    assert weighted.review_codes == ("weighted_agreement",)
    unweighted = verdict(votes, ConsensusParams(min_confidence=0.1, use_weighted_voting=False))
    assert unweighted.review_reasons == ()


def test_reasons_accumulate() -> None:
    shared = source_dicts("common", 48)
    votes = [result_dict(a, "YES", 0.2, 50, shared=shared) for a in ("a", "b", "c")]
    result = verdict(votes)
    assert len(result.review_reasons) == 2


def test_every_review_code_is_declared() -> None:
    produced = set(re.findall(r'ReviewReason\(\s*"([a-z_]+)"', inspect.getsource(decision)))
    assert produced == set(decision.REVIEW_CODES)


def test_a_venue_reason_sends_a_clean_verdict_to_review_beside_the_policys_own() -> None:
    reason = decision.ReviewReason("clarifications_unreadable", "the board could not be read")
    clean = verdict([("a", "YES", 0.9), ("b", "YES", 0.8), ("c", "NO", 0.6)])
    reviewed = decision.with_venue_reasons(clean, [reason])
    assert (reviewed.action, reviewed.requires_human_review) == ("review", True)
    assert reviewed.review_codes == ("clarifications_unreadable",)
    assert reviewed.review_reasons == ("the board could not be read",)
    assert reviewed.outcome == clean.outcome  # the agents' verdict is kept for the person
    assert decision.with_venue_reasons(clean, []) == clean
    low = verdict([("a", "YES", 0.3), ("b", "YES", 0.4), ("c", "YES", 0.35)])
    both = decision.with_venue_reasons(low, [reason])
    assert both.review_codes == ("low_confidence", "clarifications_unreadable")
    assert len(both.review_reasons) == 2
    too_early = verdict([(a, "UNDETERMINED", 0.9) for a in ("a", "b", "c")])
    assert too_early.action == "research_again"
    assert decision.with_venue_reasons(too_early, [reason]).action == "review"


def test_confusable_outcome_labels_send_an_agreed_verdict_to_a_person() -> None:
    votes = [("a", "Yes", 0.9), ("b", "Yes", 0.8), ("c", "Yes", 0.85)]
    hidden = verdict(votes, outcomes=["Yes", "Ye\u200bs"])
    assert (hidden.action, hidden.requires_human_review) == ("review", True)
    assert hidden.review_codes == ("confusable_outcomes",)
    # Named escaped, so the person sees the difference.
    assert hidden.review_reasons == (
        'outcome labels a reader cannot tell apart: "Yes" and "Ye\\u200bs"',
    )
    folded = verdict(votes, outcomes=["Yes", "ＹＥＳ", "No"])
    assert folded.review_codes == ("confusable_outcomes",)
    # Distinct labels, a reversed one included, are not confusable.
    plain = verdict(votes, outcomes=["Yes", "No", "\u202eseY\u202c"])
    assert plain.review_codes == ()
    assert plain.action == "submit"
