"""INVALID as the agents' answer where the venue takes it: the same evidence and quorum as
any outcome, then the venue's `invalid` setting (propose or review); the consensus's own
INVALID (too few trustworthy answers) still goes to a person."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from oracle.core import ConsensusParams, SourceThresholds, evaluate
from oracle.core import models as core_models
from oracle.core import outcomes as shared
from oracle.core import timing as core_timing
from oracle.core.decision import invalid_reasons
from oracle.core.models import INVALID, ConsensusInput, Market
from oracle.core.outcomes import InvalidPolicy
from oracle.core.timing import AnswerWindow, Progress, ScheduleParams, timed_action
from oracle.testing import result


def _verdict(
    votes: list[tuple[str, str, float, int]], invalid: InvalidPolicy | None
) -> core_models.ConsensusResult:
    market = Market(id="uma:1", question="Lakers vs. Celtics", invalid=invalid)
    return evaluate(
        ConsensusInput(market=market, results=tuple(result(*v) for v in votes)),
        ConsensusParams(),
        SourceThresholds(),
    )


def test_the_reserved_names_are_one_set_shared_by_models_and_timing() -> None:
    assert core_models.RESERVED_OUTCOMES is shared.RESERVED_OUTCOMES
    assert core_models.INVALID is shared.INVALID
    assert core_timing.RESERVED_OUTCOMES is shared.RESERVED_OUTCOMES
    assert not hasattr(core_timing, "RESERVED")
    assert {"UNDETERMINED", "INVALID"} == shared.RESERVED_OUTCOMES


def test_invalid_is_answerable_only_where_the_venue_takes_it() -> None:
    assert INVALID not in Market(id="m", question="q").answerable
    for policy in shared.INVALID_POLICIES:
        assert INVALID in Market(id="m", question="q", invalid=policy).answerable
    market = Market(id="m", question="q")
    with pytest.raises(ValidationError, match="unknown outcome 'INVALID'"):
        ConsensusInput(market=market, results=(result("a", INVALID, 0.9),))
    with pytest.raises(ValidationError, match="reserved"):
        Market(id="m", question="q", outcomes=("YES", "INVALID"))


def test_an_agreed_sourced_invalid_is_proposed_where_the_venue_says_propose() -> None:
    agreed = [("a", INVALID, 0.9, 50), ("b", INVALID, 0.85, 50), ("c", INVALID, 0.8, 50)]
    proposed = _verdict(agreed, "propose")
    assert (proposed.outcome, proposed.reached, proposed.action) == (INVALID, True, "submit")
    assert proposed.review_codes == ()
    reviewed = _verdict(agreed, "review")
    assert (reviewed.outcome, reviewed.action) == (INVALID, "review")
    assert reviewed.review_codes == ("invalid_answer",)
    assert "invalid: review" in reviewed.review_reasons[0]


def test_an_invalid_answer_needs_the_same_evidence_and_quorum_as_any() -> None:
    # Two of three cite too little: one valid agent is no consensus, whatever it says.
    thin = _verdict(
        [("a", INVALID, 0.9, 50), ("b", INVALID, 0.9, 1), ("c", INVALID, 0.9, 1)], "propose"
    )
    assert (thin.outcome, thin.action, thin.review_codes) == (INVALID, "review", ("invalid",))
    assert {e.agent_id for e in thin.excluded} == {"b", "c"}
    # Split between INVALID and YES: no quorum, a person looks.
    split = _verdict(
        [("a", INVALID, 0.9, 50), ("b", "YES", 0.9, 50), ("c", "NO", 0.9, 50)], "propose"
    )
    assert split.action == "review"
    assert "no_consensus" in split.review_codes
    # Low confidence holds for INVALID as for YES.
    unsure = _verdict([(a, INVALID, 0.3, 50) for a in ("a", "b", "c")], "propose")
    assert unsure.review_codes == ("low_confidence",)


def test_the_consensus_own_invalid_still_goes_to_a_person_whatever_the_venue_says() -> None:
    lone = _verdict([("a", "YES", 0.9, 50)], "propose")
    assert (lone.outcome, lone.action, lone.review_codes) == (INVALID, "review", ("invalid",))


WINDOW = AnswerWindow(closes_at=1000.0, origin="venue", evidence="request timestamp")


def _timed(outcome: str, action: str, now: float, window: AnswerWindow = WINDOW) -> str:
    timed = timed_action(
        window,
        outcome=outcome,
        action=action,  # type: ignore[arg-type]
        now=now,
        progress=Progress(),
        params=ScheduleParams(),
    )
    return f"{timed.kind}:{timed.code}"


def test_an_agreed_invalid_waits_for_the_window_then_is_submitted() -> None:
    assert _timed(INVALID, "submit", 500.0).startswith("wait:")
    assert _timed(INVALID, "submit", 1000.0) == "submit:submit"
    # The consensus's own INVALID (action review) is never submitted.
    assert _timed(INVALID, "review", 1000.0) == "review:review"
    assert _timed(INVALID, "review", 500.0) == "wait:too_soon"
    default = AnswerWindow(closes_at=1000.0, origin="default", evidence="no time found")
    assert _timed(INVALID, "submit", 2000.0, default) == "review:window_unknown"


def test_the_venue_rule_on_its_own() -> None:
    assert invalid_reasons("YES", None, "review") == []  # not INVALID: nothing to say
    assert invalid_reasons(INVALID, None, "propose") == []
    assert [r.code for r in invalid_reasons(INVALID, None, "review")] == ["invalid_answer"]
    # The consensus's own INVALID has its reason already (code `invalid`): not repeated.
    assert invalid_reasons(INVALID, "only 1 valid agent", "review") == []
    # An INVALID on a venue that takes none (only a document could say so) is looked at.
    [taken_by_none] = invalid_reasons(INVALID, None, None)
    assert taken_by_none.message == "INVALID is not an answer this venue takes"
