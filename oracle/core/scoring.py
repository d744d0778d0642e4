"""Scoring answers against final outcomes: the agents, their model families, the policy.

Pure: the store hands in what it recorded (`ScoredMarket`: a market's final outcome, how
it became final, the agents' answers of the verdict that decided it, and that verdict),
the backtest hands in recordings, and both get the same figures.

Forecasts. An answer of outcome `o` with confidence `c` is read as probability `c` on `o`
and `(1 - c)` spread evenly over the market's other outcomes; `UNDETERMINED` (or any
answer that is not one of the outcomes) is an even spread. Failures are not forecasts
and are counted apart. On a market whose final outcome is not one of its outcomes
(`INVALID`) no forecast can be scored: its answers count as `unscorable`.

- **Brier**: half the multi-class Brier score, `sum_o (p_o - y_o)^2 / 2`; for a yes/no
  market the usual `(p - y)^2`. 0 is perfect, 0.25 a coin toss, 1 confidently wrong.
- **Log loss**: `-ln(p_final)`, with `p_final` clipped to `[LOG_LOSS_FLOOR, 1 -
  LOG_LOSS_FLOOR]` so that one confident miss costs `ln(100) ~ 4.6`, not infinity.
- **Accuracy**: right share of the definite answers (those naming one of the outcomes).
- **Calibration bins**: definite answers grouped by confidence in tenths (`[0.6, 0.7)`,
  ..., `[0.9, 1.0]`); per bin the mean confidence and the share right. A calibrated
  forecaster's two agree; the expected calibration error is their gap, weighted by size.

The policy (the markets' verdicts):

- **auto-submitted accuracy**: right share of the answers the policy submitted itself;
- **review rate**: share of markets whose verdict went to a person;
- **wrong-submission rate**: share of *all* scored markets that got a wrong answer
  without a person seeing it;
- **person accuracy**: right share of the answers a person decided.

Disagreements: another proposer disputed the answer given (the only disagreement the
daemon records today; a venue that reports rival proposals can pass those too). Each
ended with the answer standing, overturned, reopened for a new answer, or still open.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

LOG_LOSS_FLOOR = 0.01
CALIBRATION_EDGES = tuple(i / 10 for i in range(11))
UNKNOWN_FAMILY = "(unknown)"
DAY = 86_400.0
ROLLING_WINDOWS: Mapping[str, float] = {"7d": 7 * DAY, "30d": 30 * DAY}


class Finality(StrEnum):
    """How a market's outcome became final on its venue."""

    TIME = "time"  # the challenge window passed with no dispute
    DISPUTE = "dispute"  # disputed, then settled by the venue's own dispute rules
    ARBITER = "arbiter"  # disputed, then the venue's arbiter ruled
    UMA_SETTLEMENT = "uma-settlement"  # UMA's optimistic oracle settled (or its vote did)
    REALITY_FINALIZATION = "reality-finalization"  # Reality.eth's answer finalized
    PERSON = "person"  # an operator recorded the outcome by hand


class DisputeEnd(StrEnum):
    ANSWER_STOOD = "answer_stood"
    OVERTURNED = "overturned"
    REOPENED = "reopened"
    OPEN = "open"


@dataclass(frozen=True)
class Forecast:
    """One agent's answer to a market (`outcome` None: the agent failed)."""

    agent_id: str
    model_family: str | None
    outcome: str | None
    confidence: float | None


@dataclass(frozen=True)
class ScoredMarket:
    """A market with a final outcome, and what the oracle did about it.

    `verdict`: the action of the consensus verdict that decided it (`submit`, `review`,
    `research_again`; None: no verdict, such as a market handed to a person after failed
    research). `answered_by`: `policy` if the delivered answer was the policy's own,
    `person` if a person decided it, None if nothing was delivered.
    """

    market_id: str
    venue: str
    outcomes: tuple[str, ...]
    final_outcome: str
    finality: str
    final_at: float
    forecasts: tuple[Forecast, ...] = ()
    verdict: str | None = None
    verdict_outcome: str | None = None
    delivered_outcome: str | None = None
    answered_by: str | None = None


@dataclass(frozen=True)
class Disagreement:
    """Another proposer challenged the answer `ours` (with `theirs`, if known)."""

    market_id: str
    ours: str | None
    theirs: str | None
    ended: DisputeEnd


def probabilities(outcome: str, confidence: float, outcomes: Sequence[str]) -> dict[str, float]:
    """The probability an answer puts on each outcome (see the module docstring)."""
    k = len(outcomes)
    if outcome not in outcomes or k < 2:
        return dict.fromkeys(outcomes, 1.0 / max(k, 1))
    rest = (1.0 - confidence) / (k - 1)
    return {o: confidence if o == outcome else rest for o in outcomes}


def brier(outcome: str, confidence: float, outcomes: Sequence[str], final: str) -> float:
    """Half the multi-class Brier score of one answer."""
    p = probabilities(outcome, confidence, outcomes)
    return math.fsum((p[o] - (o == final)) ** 2 for o in outcomes) / 2


def log_loss(outcome: str, confidence: float, outcomes: Sequence[str], final: str) -> float:
    """`-ln p(final)`, the probability clipped to `[LOG_LOSS_FLOOR, 1 - LOG_LOSS_FLOOR]`."""
    p = probabilities(outcome, confidence, outcomes).get(final, 0.0)
    return -math.log(min(max(p, LOG_LOSS_FLOOR), 1.0 - LOG_LOSS_FLOOR))


@dataclass(frozen=True)
class CalibrationBin:
    low: float
    high: float
    answers: int
    mean_confidence: float
    right_share: float


def calibration_bins(
    answers: Iterable[tuple[float, bool]], edges: Sequence[float] = CALIBRATION_EDGES
) -> tuple[CalibrationBin, ...]:
    """(confidence, right) pairs grouped by confidence; the last bin includes its top."""
    groups: dict[int, list[tuple[float, bool]]] = defaultdict(list)
    last = len(edges) - 2
    for confidence, right in answers:
        index = next(
            (i for i in range(last) if edges[i] <= confidence < edges[i + 1]),
            last,
        )
        groups[index].append((confidence, right))
    return tuple(
        CalibrationBin(
            low=edges[i],
            high=edges[i + 1],
            answers=len(groups[i]),
            mean_confidence=math.fsum(c for c, _ in groups[i]) / len(groups[i]),
            right_share=sum(r for _, r in groups[i]) / len(groups[i]),
        )
        for i in sorted(groups)
    )


def calibration_error(bins: Sequence[CalibrationBin]) -> float | None:
    """The expected calibration error: |mean confidence - right share|, weighted by size."""
    total = sum(b.answers for b in bins)
    if not total:
        return None
    return math.fsum(b.answers * abs(b.mean_confidence - b.right_share) for b in bins) / total


@dataclass(frozen=True)
class ForecasterScore:
    """One agent's (or one model family's) record."""

    name: str
    answers: int  # scored answers (definite or UNDETERMINED)
    failures: int
    unscorable: int  # answers on markets that ended INVALID
    definite: int
    right: int
    accuracy: float | None  # right share of the definite answers
    brier: float | None
    log_loss: float | None
    calibration_error: float | None
    calibration: tuple[CalibrationBin, ...] = field(default=())


def forecaster_scores(
    markets: Iterable[ScoredMarket], key: Callable[[Forecast], str]
) -> tuple[ForecasterScore, ...]:
    """Every forecaster's record, named by `key` (by_agent, by_family), sorted by name."""
    briers: dict[str, list[float]] = defaultdict(list)
    losses: dict[str, list[float]] = defaultdict(list)
    definite: dict[str, list[tuple[float, bool]]] = defaultdict(list)
    failures: dict[str, int] = defaultdict(int)
    unscorable: dict[str, int] = defaultdict(int)
    for market in markets:
        for forecast in market.forecasts:
            name = key(forecast)
            if forecast.outcome is None or forecast.confidence is None:
                failures[name] += 1
                continue
            if market.final_outcome not in market.outcomes:
                unscorable[name] += 1
                continue
            args = (forecast.outcome, forecast.confidence, market.outcomes, market.final_outcome)
            briers[name].append(brier(*args))
            losses[name].append(log_loss(*args))
            if forecast.outcome in market.outcomes:
                hit = forecast.outcome == market.final_outcome
                definite[name].append((forecast.confidence, hit))
    scores = []
    for name in sorted(set(briers) | set(failures) | set(unscorable)):
        bins = calibration_bins(definite[name])
        right = sum(r for _, r in definite[name])
        scores.append(
            ForecasterScore(
                name=name,
                answers=len(briers[name]),
                failures=failures[name],
                unscorable=unscorable[name],
                definite=len(definite[name]),
                right=right,
                accuracy=right / len(definite[name]) if definite[name] else None,
                brier=_mean(briers[name]),
                log_loss=_mean(losses[name]),
                calibration_error=calibration_error(bins),
                calibration=bins,
            )
        )
    return tuple(scores)


def by_agent(forecast: Forecast) -> str:
    return forecast.agent_id


def by_family(forecast: Forecast) -> str:
    return forecast.model_family or UNKNOWN_FAMILY


@dataclass(frozen=True)
class PolicyScore:
    markets: int
    auto_submitted: int
    auto_right: int
    auto_accuracy: float | None
    reviewed: int  # verdicts that went to a person
    review_rate: float | None
    wrong_submissions: int  # auto-submitted and wrong
    wrong_submission_rate: float | None
    person_decided: int
    person_right: int
    person_accuracy: float | None
    by_finality: dict[str, int]


def policy_score(markets: Sequence[ScoredMarket]) -> PolicyScore:
    auto = [m for m in markets if m.answered_by == "policy" and m.delivered_outcome is not None]
    person = [m for m in markets if m.answered_by == "person" and m.delivered_outcome is not None]
    auto_right = sum(m.delivered_outcome == m.final_outcome for m in auto)
    person_right = sum(m.delivered_outcome == m.final_outcome for m in person)
    reviewed = sum(m.verdict == "review" for m in markets)
    wrong = len(auto) - auto_right
    finality: dict[str, int] = defaultdict(int)
    for market in markets:
        finality[market.finality] += 1
    count = len(markets)
    return PolicyScore(
        markets=count,
        auto_submitted=len(auto),
        auto_right=auto_right,
        auto_accuracy=auto_right / len(auto) if auto else None,
        reviewed=reviewed,
        review_rate=reviewed / count if count else None,
        wrong_submissions=wrong,
        wrong_submission_rate=wrong / count if count else None,
        person_decided=len(person),
        person_right=person_right,
        person_accuracy=person_right / len(person) if person else None,
        by_finality=dict(sorted(finality.items())),
    )


@dataclass(frozen=True)
class DisagreementScore:
    disputes: int
    answer_stood: int
    overturned: int
    reopened: int
    open: int


def disagreement_score(disagreements: Iterable[Disagreement]) -> DisagreementScore:
    ends = [d.ended for d in disagreements]
    return DisagreementScore(
        disputes=len(ends),
        answer_stood=ends.count(DisputeEnd.ANSWER_STOOD),
        overturned=ends.count(DisputeEnd.OVERTURNED),
        reopened=ends.count(DisputeEnd.REOPENED),
        open=ends.count(DisputeEnd.OPEN),
    )


@dataclass(frozen=True)
class AccuracyReport:
    policy: PolicyScore
    agents: tuple[ForecasterScore, ...]
    families: tuple[ForecasterScore, ...]
    overall: ForecasterScore | None  # every agent's answers together
    disagreements: DisagreementScore

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def accuracy_report(
    markets: Sequence[ScoredMarket], disagreements: Iterable[Disagreement] = ()
) -> AccuracyReport:
    return AccuracyReport(
        policy=policy_score(markets),
        agents=forecaster_scores(markets, by_agent),
        families=forecaster_scores(markets, by_family),
        overall=next(iter(forecaster_scores(markets, lambda _: "all agents")), None),
        disagreements=disagreement_score(disagreements),
    )


@dataclass(frozen=True)
class RollingFigures:
    """What the metrics show for one window: None where fewer than the minimum answers."""

    window: str
    auto_submitted: int
    auto_accuracy: float | None
    agent_answers: dict[str, int]
    agent_brier: dict[str, float]


def rolling_figures(
    markets: Sequence[ScoredMarket],
    now: float,
    min_answers: int,
    windows: Mapping[str, float] = ROLLING_WINDOWS,
) -> tuple[RollingFigures, ...]:
    """Per window (name -> seconds back from `now`), the auto-submitted accuracy and each
    agent's Brier score over the markets that became final in it; a figure resting on
    fewer than `min_answers` answers is left out (too noisy to alert on)."""
    figures = []
    for name, seconds in windows.items():
        recent = [m for m in markets if now - seconds <= m.final_at <= now]
        policy = policy_score(recent)
        agents = forecaster_scores(recent, by_agent)
        figures.append(
            RollingFigures(
                window=name,
                auto_submitted=policy.auto_submitted,
                auto_accuracy=(
                    policy.auto_accuracy if policy.auto_submitted >= max(min_answers, 1) else None
                ),
                agent_answers={a.name: a.answers for a in agents},
                agent_brier={
                    a.name: a.brier
                    for a in agents
                    if a.brier is not None and a.answers >= max(min_answers, 1)
                },
            )
        )
    return tuple(figures)


def _mean(values: Sequence[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_text(report: AccuracyReport) -> str:
    """The report as an operator reads it in a terminal."""
    p = report.policy
    finality = ", ".join(f"{k} {v}" for k, v in p.by_finality.items()) or "-"
    d = report.disagreements
    lines = [
        f"markets with a final outcome: {p.markets}  (final by: {finality})",
        f"auto-submitted: {p.auto_submitted}  accuracy {_percent(p.auto_accuracy)}  "
        f"({p.auto_right} right, {p.wrong_submissions} wrong)",
        f"review rate: {_percent(p.review_rate)}  ({p.reviewed} verdicts went to a person)",
        f"wrong-submission rate: {_percent(p.wrong_submission_rate)} of all markets",
        f"decided by a person: {p.person_decided}  accuracy {_percent(p.person_accuracy)}",
        f"disputes: {d.disputes}  (answer stood {d.answer_stood}, overturned {d.overturned}, "
        f"reopened {d.reopened}, open {d.open})",
        "",
    ]
    for title, rows in (("agent", report.agents), ("model family", report.families)):
        width = max([len(title), *(len(r.name) for r in rows)])
        lines.append(
            f"{title:<{width}}  answers  failures  accuracy   brier  log loss  calibration error"
        )
        for r in rows:
            lines.append(
                f"{r.name:<{width}}  {r.answers:>7}  {r.failures:>8}  {_percent(r.accuracy):>8}  "
                f"{_number(r.brier):>6}  {_number(r.log_loss):>8}  "
                f"{_number(r.calibration_error):>17}"
            )
        lines.append("")
    lines.append("calibration of all agents' definite answers:")
    lines.append("  confidence  answers  mean confidence  right")
    for b in report.overall.calibration if report.overall else ():
        lines.append(
            f"  [{b.low:.1f}, {b.high:.1f}{']' if b.high == 1.0 else ')'}  {b.answers:>7}  "
            f"{b.mean_confidence:>15.3f}  {_percent(b.right_share):>6}"
        )
    return "\n".join(lines) + "\n"
