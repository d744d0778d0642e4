"""oracle.core.scoring: figures computed by hand, and properties that hold for any answer."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from oracle.core.scoring import (
    LOG_LOSS_FLOOR,
    Disagreement,
    DisputeEnd,
    Forecast,
    ScoredMarket,
    accuracy_report,
    brier,
    by_agent,
    by_family,
    calibration_bins,
    calibration_error,
    forecaster_scores,
    log_loss,
    policy_score,
    render_text,
    rolling_figures,
)

YES_NO = ("YES", "NO")
DAY = 86_400.0


def test_brier_by_hand() -> None:
    assert brier("YES", 1.0, YES_NO, "YES") == 0.0
    assert brier("YES", 1.0, YES_NO, "NO") == 1.0
    assert brier("YES", 0.8, YES_NO, "YES") == pytest.approx(0.04)  # (0.2^2 + 0.2^2) / 2
    assert brier("YES", 0.8, YES_NO, "NO") == pytest.approx(0.64)
    assert brier("UNDETERMINED", 0.9, YES_NO, "NO") == pytest.approx(0.25)
    # A of A/B/C at 0.6, final B: p = (0.6, 0.2, 0.2): (0.36 + 0.64 + 0.04) / 2
    assert brier("A", 0.6, ("A", "B", "C"), "B") == pytest.approx(0.52)


def test_log_loss_by_hand_and_clipped() -> None:
    assert log_loss("YES", 0.8, YES_NO, "YES") == pytest.approx(-math.log(0.8))
    assert log_loss("YES", 0.8, YES_NO, "NO") == pytest.approx(-math.log(0.2))
    assert log_loss("YES", 1.0, YES_NO, "NO") == pytest.approx(math.log(100))  # clipped at 0.01
    assert log_loss("YES", 1.0, YES_NO, "YES") == pytest.approx(-math.log(0.99))
    assert log_loss("UNDETERMINED", 0.7, YES_NO, "YES") == pytest.approx(math.log(2))


def test_calibration_bins_and_error_by_hand() -> None:
    answers = [(0.95, True), (0.9, False), (0.65, True), (0.62, False), (1.0, True)]
    bins = calibration_bins(answers)
    assert [(b.low, b.high, b.answers) for b in bins] == [(0.6, 0.7, 2), (0.9, 1.0, 3)]
    assert bins[0].mean_confidence == pytest.approx(0.635)
    assert bins[0].right_share == 0.5
    assert bins[1].mean_confidence == pytest.approx(0.95)
    assert bins[1].right_share == pytest.approx(2 / 3)
    # (2 * |0.635 - 0.5| + 3 * |0.95 - 2/3|) / 5
    assert calibration_error(bins) == pytest.approx((2 * 0.135 + 3 * (0.95 - 2 / 3)) / 5)
    assert calibration_error(()) is None


def answer(agent: str, outcome: str | None, confidence: float | None, family: str) -> Forecast:
    return Forecast(agent, family, outcome, confidence)


def market(
    name: str,
    final: str,
    forecasts: tuple[Forecast, ...] = (),
    *,
    verdict: str | None = "submit",
    delivered: str | None = None,
    by: str | None = "policy",
    finality: str = "time",
    final_at: float = 0.0,
) -> ScoredMarket:
    return ScoredMarket(
        market_id=name,
        venue="v",
        outcomes=YES_NO,
        final_outcome=final,
        finality=finality,
        final_at=final_at,
        forecasts=forecasts,
        verdict=verdict,
        verdict_outcome=delivered,
        delivered_outcome=delivered,
        answered_by=by if delivered is not None else None,
    )


MARKETS = (
    # m1: both right; m2: gpt confidently wrong, claude right; m3: claude failed;
    # m4 ended INVALID: nothing to score but the failure.
    market(
        "m1",
        "YES",
        (answer("a", "YES", 0.9, "gpt"), answer("b", "YES", 0.8, "claude")),
        delivered="YES",
    ),
    market(
        "m2",
        "NO",
        (answer("a", "YES", 1.0, "gpt"), answer("b", "NO", 0.6, "claude")),
        verdict="review",
        delivered="NO",
        by="person",
        finality="arbiter",
    ),
    market(
        "m3",
        "NO",
        (answer("a", "UNDETERMINED", 0.5, "gpt"), answer("b", None, None, "claude")),
        verdict="research_again",
    ),
    market(
        "m4",
        "INVALID",
        (answer("a", "YES", 0.7, "gpt"), answer("c", "NO", 0.7, None)),
        verdict="review",
        delivered="YES",
        by="person",
        finality="person",
    ),
)


def test_forecasters_by_agent_by_hand() -> None:
    scores = {s.name: s for s in forecaster_scores(MARKETS, by_agent)}
    a = scores["a"]
    assert (a.answers, a.failures, a.unscorable, a.definite, a.right) == (3, 0, 1, 2, 1)
    assert a.accuracy == 0.5
    assert a.brier == pytest.approx((0.01 + 1.0 + 0.25) / 3)
    expected_loss = (-math.log(0.9) - math.log(LOG_LOSS_FLOOR) + math.log(2)) / 3
    assert a.log_loss == pytest.approx(expected_loss)
    b = scores["b"]
    assert (b.answers, b.failures, b.definite, b.right, b.accuracy) == (2, 1, 2, 2, 1.0)
    assert b.brier == pytest.approx((0.04 + 0.16) / 2)
    assert scores["c"].answers == 0
    assert scores["c"].unscorable == 1
    assert scores["c"].brier is None


def test_forecasters_by_family_name_the_unknown() -> None:
    names = [s.name for s in forecaster_scores(MARKETS, by_family)]
    assert names == ["(unknown)", "claude", "gpt"]


def test_policy_score_by_hand() -> None:
    auto_wrong = market("m5", "NO", verdict="submit", delivered="YES")
    policy = policy_score([*MARKETS, auto_wrong])
    assert policy.markets == 5
    assert (policy.auto_submitted, policy.auto_right, policy.auto_accuracy) == (2, 1, 0.5)
    assert (policy.reviewed, policy.review_rate) == (2, 0.4)
    assert (policy.wrong_submissions, policy.wrong_submission_rate) == (1, 0.2)
    assert (policy.person_decided, policy.person_right, policy.person_accuracy) == (2, 1, 0.5)
    assert policy.by_finality == {"arbiter": 1, "person": 1, "time": 3}
    empty = policy_score([])
    assert (empty.auto_accuracy, empty.review_rate, empty.wrong_submission_rate) == (
        None,
        None,
        None,
    )


def test_report_counts_disagreements_and_renders() -> None:
    disputes = [
        Disagreement("m1", "YES", None, DisputeEnd.ANSWER_STOOD),
        Disagreement("m2", "YES", "NO", DisputeEnd.OVERTURNED),
        Disagreement("m6", "NO", None, DisputeEnd.REOPENED),
        Disagreement("m7", "NO", None, DisputeEnd.OPEN),
    ]
    report = accuracy_report(MARKETS, disputes)
    d = report.disagreements
    assert (d.disputes, d.answer_stood, d.overturned, d.reopened, d.open) == (4, 1, 1, 1, 1)
    assert report.overall is not None
    assert report.overall.answers == 5
    text = render_text(report)
    assert "markets with a final outcome: 4  (final by: arbiter 1, person 1, time 2)" in text
    assert "auto-submitted: 1  accuracy 100.0%  (1 right, 0 wrong)" in text
    assert "review rate: 50.0%" in text
    assert "disputes: 4  (answer stood 1, overturned 1, reopened 1, open 1)" in text
    assert "  [0.9, 1.0]        2            0.950   50.0%" in text
    assert report.to_json()["policy"]["auto_accuracy"] == 1.0


def test_rolling_figures_keep_to_their_window_and_minimum() -> None:
    now = 100 * DAY
    recent = [
        market(
            f"r{i}", "YES", (answer("a", "YES", 0.8, "gpt"),), delivered="YES", final_at=now - DAY
        )
        for i in range(3)
    ]
    older = [
        market(
            f"o{i}",
            "NO",
            (answer("a", "YES", 0.8, "gpt"),),
            delivered="YES",
            final_at=now - 20 * DAY,
        )
        for i in range(2)
    ]
    seven, thirty = rolling_figures([*recent, *older], now, min_answers=3)
    assert (seven.window, seven.auto_submitted, seven.auto_accuracy) == ("7d", 3, 1.0)
    assert seven.agent_brier == {"a": pytest.approx(0.04)}
    assert (thirty.auto_submitted, thirty.auto_accuracy) == (5, pytest.approx(0.6))
    assert thirty.agent_brier == {"a": pytest.approx((3 * 0.04 + 2 * 0.64) / 5)}
    seven, _ = rolling_figures([*recent, *older], now, min_answers=4)
    assert seven.auto_accuracy is None
    assert seven.agent_brier == {}
    assert seven.agent_answers == {"a": 3}


confidences = st.floats(0.0, 1.0)
outcome_sets = st.sampled_from([YES_NO, ("A", "B", "C"), ("A", "B", "C", "D")])


@given(outcome_sets, st.data(), confidences)
def test_scores_are_bounded(outcomes: tuple[str, ...], data: st.DataObject, c: float) -> None:
    said = data.draw(st.sampled_from([*outcomes, "UNDETERMINED"]))
    final = data.draw(st.sampled_from(outcomes))
    assert 0.0 <= brier(said, c, outcomes, final) <= 1.0 + 1e-12
    loss = log_loss(said, c, outcomes, final)
    assert -math.log(1 - LOG_LOSS_FLOOR) - 1e-12 <= loss <= -math.log(LOG_LOSS_FLOOR) + 1e-12


@given(outcome_sets, confidences, confidences)
def test_more_confidence_in_the_right_outcome_never_scores_worse(
    outcomes: tuple[str, ...], low: float, high: float
) -> None:
    low, high = sorted((low, high))
    right = outcomes[0]
    assert brier(right, high, outcomes, right) <= brier(right, low, outcomes, right) + 1e-12
    assert log_loss(right, high, outcomes, right) <= log_loss(right, low, outcomes, right) + 1e-12


@given(st.lists(st.tuples(confidences, st.booleans()), max_size=40))
def test_calibration_bins_keep_every_answer(answers: list[tuple[float, bool]]) -> None:
    bins = calibration_bins(answers)
    assert sum(b.answers for b in bins) == len(answers)
    for b in bins:
        # The mean of equal floats may round a hair below them: (0.7 + 0.7 + 0.7) / 3.
        assert b.low - 1e-12 <= b.mean_confidence <= b.high + 1e-12
        assert 0.0 <= b.right_share <= 1.0
