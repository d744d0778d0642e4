"""Backtests: recorded agent answers with known outcomes, through consensus and policy.

A recording is a consensus input document (the format `oracle consensus` reads) with the
market's known answer added as `"final_outcome"` (one of the market's outcomes), one per
`*.json` file. For the configured policy and for every point of a sweep over
`consensus.threshold` x `consensus.min_confidence` it reports:

- **coverage**: share of markets auto-submitted (action `submit`);
- **accuracy**: share of auto-submitted answers that were right (none when nothing was
  submitted);
- **wrong-submission rate**: share of *all* markets that got a wrong answer on-chain
  without a person seeing it (the figure an operator most wants near zero).

On conflicts (no quorum, at least two definite outcomes) it compares the modes of
`consensus.conflict_resolution` (`ConflictRun`, `mode_figures`): `escalate`, `majority`
(the same verdicts, plus how often the proposed answer was right) and `debate` under each
critique topology, the debates run by the daemon's own code on the recorded rounds
(`oracle.daemon.conflict_backtest`). For each: accuracy of the auto-submitted answers, the
review rate, the wrong-submission rate, and the flips toward the final outcome and away
from it, counted (with new evidence) or marked (without).

Per agent and per model family it reports the Brier score of the answers, the right share
of the definite ones, the clipped log loss and the expected calibration error, as
`oracle.core.scoring` defines them (failures are not forecasts and are counted apart). An
answer of outcome `o` with confidence `c` is read as probability `c` on `o` and `(1 - c)`
spread evenly over the market's other outcomes; `UNDETERMINED` is an even spread. The
Brier score is half the multi-class one, which for a yes/no market is the usual
`(p - y)^2`: 0 is perfect, 0.25 is a coin toss.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from oracle.core import scoring
from oracle.core.consensus import evaluate
from oracle.core.debate import Flip
from oracle.core.inputs import parse_consensus_input
from oracle.core.models import AgentResult, ConsensusInput, ConsensusResult
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.core.reputation import Reputation, ReputationParams, multipliers, reputations
from oracle.errors import InputError, JsonError
from oracle.safe_json import loads

DEFAULT_THRESHOLDS = (0.6, 0.67, 0.75, 0.8, 0.9, 1.0)
DEFAULT_MIN_CONFIDENCES = (0.5, 0.6, 0.7, 0.8, 0.9)
UNKNOWN_FAMILY = "(unknown)"


@dataclass(frozen=True)
class Recording:
    name: str
    consensus_input: ConsensusInput
    final_outcome: str


def load_recordings(directory: Path) -> list[Recording]:
    """Every `*.json` recording in `directory`; InputError names the file and the field."""
    if not directory.is_dir():
        raise InputError(f"{directory}: not a directory")
    recordings = []
    for path in sorted(directory.glob("*.json")):
        try:
            document = loads(path.read_bytes())
        except OSError as error:
            raise InputError(f"{path.name}: cannot be read ({error.strerror})") from None
        except JsonError as error:
            raise InputError(f"{path.name}: {error}") from None
        if not isinstance(document, dict):
            raise InputError(f"{path.name}: expected a JSON object")
        final = document.pop("final_outcome", None)
        try:
            consensus_input = parse_consensus_input(document)
        except InputError as error:
            raise InputError(f"{path.name}: {error}") from None
        if not isinstance(final, str) or final not in consensus_input.market.outcomes:
            raise InputError(
                f"{path.name}: final_outcome: must be one of "
                f"{', '.join(consensus_input.market.outcomes)} (got {final!r})"
            )
        recordings.append(Recording(path.name, consensus_input, final))
    if not recordings:
        raise InputError(f"{directory}: no *.json recordings")
    return recordings


def brier(result: AgentResult, outcomes: Sequence[str], final: str) -> float:
    """Half the multi-class Brier score of one answer (`oracle.core.scoring.brier`)."""
    return scoring.brier(result.outcome, result.confidence, outcomes, final)


# --- second opinion on other proposers (`oracle backtest --second-opinion`) ---------------
#
# On a venue where someone else proposes first (UMA, Reality.eth), the daemon researches the
# market as usual and judges the answers with the same consensus and decision policy; it
# would put an answer on the venue only for a `submit` verdict, and when the answer already
# there differs from that verdict the venue's receipt carries a disagreement and a review
# item opens (`oracle.daemon.service`, `Receipt.disagreement`). A `review` verdict goes to a
# person anyway, and `research_again` waits: neither raises a disagreement. The backtest
# replays that rule on recordings: every recording has one correct proposal (its
# `final_outcome`) and one wrong proposal for each other outcome of the market.


@dataclass(frozen=True)
class SecondOpinionFigures:
    """What the second opinion would have said about other proposers' answers.

    `false_alarms` of `correct_proposals` (the final outcome proposed) were contradicted:
    a person asked to look at an answer that was right. `caught` of `wrong_proposals` were
    contradicted, `caught_right` of them with the final outcome as our verdict. Proposals
    our verdict sent to a person, or to research again, are counted apart: they raise no
    disagreement, but a person (or a later run) still sees the market."""

    threshold: float
    min_confidence: float
    correct_proposals: int
    false_alarms: int
    wrong_proposals: int
    caught: int
    caught_right: int
    confirmed: int  # correct proposals our verdict agreed with
    reviewed: int  # markets whose verdict went to a person
    research_again: int
    false_alarm_rate: float
    catch_rate: float | None  # None: no wrong proposal (every market has one outcome only)


def contradicts(verdict: ConsensusResult, proposed: str) -> bool:
    """The daemon's verdict opens a disagreement with an answer proposed by someone else:
    it is an answer the policy would submit (`action` submit: the quorum reached, every
    check of `oracle.core.decision` passed) and a different outcome."""
    return verdict.action == "submit" and verdict.outcome != proposed


def second_opinion_figures(
    recordings: Sequence[Recording], params: ConsensusParams, thresholds: SourceThresholds
) -> SecondOpinionFigures:
    """The false-alarm and catch rates of the policy `params` on `recordings`."""
    false_alarms = wrong = caught = caught_right = confirmed = reviewed = research_again = 0
    for recording in recordings:
        verdict = evaluate(recording.consensus_input, params, thresholds)
        final = recording.final_outcome
        if verdict.action == "review":
            reviewed += 1
        elif verdict.action == "research_again":
            research_again += 1
        if contradicts(verdict, final):
            false_alarms += 1
        elif verdict.action == "submit":
            confirmed += 1
        for proposed in recording.consensus_input.market.outcomes:
            if proposed == final:
                continue
            wrong += 1
            if contradicts(verdict, proposed):
                caught += 1
                caught_right += verdict.outcome == final
    correct = len(recordings)
    return SecondOpinionFigures(
        threshold=params.threshold,
        min_confidence=params.min_confidence,
        correct_proposals=correct,
        false_alarms=false_alarms,
        wrong_proposals=wrong,
        caught=caught,
        caught_right=caught_right,
        confirmed=confirmed,
        reviewed=reviewed,
        research_again=research_again,
        false_alarm_rate=false_alarms / correct,
        catch_rate=caught / wrong if wrong else None,
    )


@dataclass(frozen=True)
class SecondOpinionReport:
    policy: SecondOpinionFigures
    sweep: tuple[SecondOpinionFigures, ...]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_second_opinion(
    recordings: Sequence[Recording],
    params: ConsensusParams,
    thresholds: SourceThresholds,
    sweep_thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    sweep_min_confidences: Sequence[float] = DEFAULT_MIN_CONFIDENCES,
) -> SecondOpinionReport:
    """The second-opinion figures for `params` and for each point of the sweep."""
    base = params.model_dump()
    return SecondOpinionReport(
        policy=second_opinion_figures(recordings, params, thresholds),
        sweep=tuple(
            second_opinion_figures(
                recordings,
                ConsensusParams.model_validate({**base, "threshold": t, "min_confidence": c}),
                thresholds,
            )
            for t in sweep_thresholds
            for c in sweep_min_confidences
        ),
    )


def render_second_opinion(report: SecondOpinionReport) -> str:
    """The second-opinion section of the text report."""
    p = report.policy
    lines = [
        f"second opinion on other proposers (threshold {p.threshold:g}, "
        f"min_confidence {p.min_confidence:g}):",
        f"false alarms: {p.false_alarms} of {p.correct_proposals} correct proposals "
        f"contradicted  false-alarm rate {_percent(p.false_alarm_rate)}",
        f"caught: {p.caught} of {p.wrong_proposals} wrong proposals contradicted  "
        f"catch rate {_percent(p.catch_rate)}  ({p.caught_right} with the final outcome)",
        f"verdicts: {p.confirmed} confirm the correct proposal, {p.reviewed} to review, "
        f"{p.research_again} research again",
        "",
        "threshold  min_confidence  false-alarm rate  catch rate",
    ]
    for s in report.sweep:
        lines.append(
            f"{s.threshold:>9g}  {s.min_confidence:>14g}  {_percent(s.false_alarm_rate):>16}  "
            f"{_percent(s.catch_rate):>10}"
        )
    return "\n".join(lines) + "\n"


@dataclass(frozen=True)
class PolicyFigures:
    threshold: float
    min_confidence: float
    markets: int
    submitted: int
    correct: int
    wrong: int
    reviewed: int
    research_again: int
    coverage: float
    accuracy: float | None
    wrong_submission_rate: float


@dataclass(frozen=True)
class ForecasterFigures:
    name: str
    answers: int
    failures: int
    brier: float | None
    definite_accuracy: float | None  # right share of its non-UNDETERMINED answers
    log_loss: float | None
    calibration_error: float | None


@dataclass(frozen=True)
class ConflictRun:
    """One recording judged under one conflict resolution mode."""

    action: str  # the final verdict's: submit, review, research_again
    outcome: str
    conflict: bool  # the independent answers conflicted
    flips: tuple[Flip, ...] = ()  # a debate's changes of mind, counted or not
    proposed: str | None = None  # majority: the weighted plurality proposed for review


@dataclass(frozen=True)
class ModeFigures:
    mode: str  # escalate, majority, debate
    topology: str | None  # debate: the critique topology
    markets: int
    conflicts: int
    submitted: int
    correct: int
    wrong: int
    reviewed: int
    research_again: int
    accuracy: float | None  # of the auto-submitted answers
    review_rate: float
    wrong_submission_rate: float
    flips_to_right: int  # counted flips (new evidence) to the final outcome
    flips_to_wrong: int  # counted flips to another outcome
    marked_to_right: int  # flips without new evidence (marked, not counted)
    marked_to_wrong: int
    proposed_right: int | None  # majority: conflicts whose proposed answer was final
    proposed_wrong: int | None

    @property
    def label(self) -> str:
        return self.mode if self.topology is None else f"{self.mode} ({self.topology})"


def mode_figures(
    mode: str,
    topology: str | None,
    recordings: Sequence[Recording],
    runs: Sequence[ConflictRun],
) -> ModeFigures:
    """The figures of one mode over `runs` (one per recording, in the same order)."""
    submitted = correct = reviewed = research_again = conflicts = 0
    to_right = to_wrong = marked_right = marked_wrong = proposed_right = proposed_wrong = 0
    for recording, run in zip(recordings, runs, strict=True):
        final = recording.final_outcome
        conflicts += run.conflict
        if run.action == "submit":
            submitted += 1
            correct += run.outcome == final
        elif run.action == "review":
            reviewed += 1
        else:
            research_again += 1
        for flip in run.flips:
            right = flip.after == final
            if flip.supported:
                to_right += right
                to_wrong += not right
            else:
                marked_right += right
                marked_wrong += not right
        if run.proposed is not None:
            proposed_right += run.proposed == final
            proposed_wrong += run.proposed != final
    markets = len(recordings)
    majority = mode == "majority"
    return ModeFigures(
        mode=mode,
        topology=topology,
        markets=markets,
        conflicts=conflicts,
        submitted=submitted,
        correct=correct,
        wrong=submitted - correct,
        reviewed=reviewed,
        research_again=research_again,
        accuracy=correct / submitted if submitted else None,
        review_rate=reviewed / markets if markets else 0.0,
        wrong_submission_rate=(submitted - correct) / markets if markets else 0.0,
        flips_to_right=to_right,
        flips_to_wrong=to_wrong,
        marked_to_right=marked_right,
        marked_to_wrong=marked_wrong,
        proposed_right=proposed_right if majority else None,
        proposed_wrong=proposed_wrong if majority else None,
    )


@dataclass(frozen=True)
class BacktestReport:
    policy: PolicyFigures
    agents: tuple[ForecasterFigures, ...]
    families: tuple[ForecasterFigures, ...]
    sweep: tuple[PolicyFigures, ...]
    # With reputation weights (`run_backtest(reputation=...)`), walk-forward: the same
    # figures, and each agent's reputation after the last recording.
    reputation_policy: PolicyFigures | None = None
    reputation_sweep: tuple[PolicyFigures, ...] = ()
    reputations: tuple[Reputation, ...] = ()
    # The conflict resolution modes compared (`oracle.daemon.conflict_backtest`).
    conflict_modes: tuple[ModeFigures, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def policy_figures(
    recordings: Sequence[Recording],
    params: ConsensusParams,
    thresholds: SourceThresholds,
    weights: Sequence[Mapping[str, float]] | None = None,
) -> PolicyFigures:
    """The policy's figures; `weights`: per recording, a reputation multiplier per agent."""
    submitted = correct = reviewed = research_again = 0
    for index, recording in enumerate(recordings):
        reputation = weights[index] if weights is not None else None
        verdict = evaluate(recording.consensus_input, params, thresholds, reputation)
        if verdict.action == "submit":
            submitted += 1
            correct += verdict.outcome == recording.final_outcome
        elif verdict.action == "review":
            reviewed += 1
        else:
            research_again += 1
    markets = len(recordings)
    return PolicyFigures(
        threshold=params.threshold,
        min_confidence=params.min_confidence,
        markets=markets,
        submitted=submitted,
        correct=correct,
        wrong=submitted - correct,
        reviewed=reviewed,
        research_again=research_again,
        coverage=submitted / markets,
        accuracy=correct / submitted if submitted else None,
        wrong_submission_rate=(submitted - correct) / markets,
    )


def scored_markets(recordings: Sequence[Recording]) -> list[scoring.ScoredMarket]:
    """The recordings as `oracle.core.scoring` scores them; a failed agent is counted
    under the model family it answers with elsewhere in the set."""
    family_of = {
        result.agent_id: result.model_family
        for recording in recordings
        for result in recording.consensus_input.results
        if result.model_family
    }
    return [
        scoring.ScoredMarket(
            market_id=recording.consensus_input.market.id,
            venue="backtest",
            outcomes=recording.consensus_input.market.outcomes,
            final_outcome=recording.final_outcome,
            finality=scoring.Finality.TIME,
            final_at=0.0,
            forecasts=(
                *(
                    scoring.Forecast(r.agent_id, r.model_family, r.outcome, r.confidence)
                    for r in recording.consensus_input.results
                ),
                *(
                    scoring.Forecast(f.agent_id, family_of.get(f.agent_id), None, None)
                    for f in recording.consensus_input.failures
                ),
            ),
        )
        for recording in recordings
    ]


def _forecasters(recordings: Sequence[Recording], by_family: bool) -> tuple[ForecasterFigures, ...]:
    key = scoring.by_family if by_family else scoring.by_agent
    return tuple(
        ForecasterFigures(
            name=score.name,
            answers=score.answers,
            failures=score.failures,
            brier=score.brier,
            definite_accuracy=score.accuracy,
            log_loss=score.log_loss,
            calibration_error=score.calibration_error,
        )
        for score in scoring.forecaster_scores(scored_markets(recordings), key)
    )


def walk_forward_weights(
    recordings: Sequence[Recording], params: ReputationParams
) -> list[dict[str, float]]:
    """For each recording, the reputation multipliers earned on the recordings before it
    (in file-name order): what a live oracle would have known then, never the future."""
    scored = scored_markets(recordings)
    return [multipliers(reputations(scored[:index], params)) for index in range(len(scored))]


def run_backtest(
    recordings: Sequence[Recording],
    params: ConsensusParams,
    thresholds: SourceThresholds,
    sweep_thresholds: Sequence[float] = DEFAULT_THRESHOLDS,
    sweep_min_confidences: Sequence[float] = DEFAULT_MIN_CONFIDENCES,
    *,
    reputation: ReputationParams | None = None,
) -> BacktestReport:
    """The report for `params`, and for each (threshold, min_confidence) of the sweep;
    with `reputation`, also with reputation weights, to compare."""
    base = params.model_dump()
    grid = [
        ConsensusParams.model_validate({**base, "threshold": t, "min_confidence": c})
        for t in sweep_thresholds
        for c in sweep_min_confidences
    ]
    weights = walk_forward_weights(recordings, reputation) if reputation is not None else None
    return BacktestReport(
        policy=policy_figures(recordings, params, thresholds),
        agents=_forecasters(recordings, by_family=False),
        families=_forecasters(recordings, by_family=True),
        sweep=tuple(policy_figures(recordings, point, thresholds) for point in grid),
        reputation_policy=(
            policy_figures(recordings, params, thresholds, weights) if weights else None
        ),
        reputation_sweep=(
            tuple(policy_figures(recordings, point, thresholds, weights) for point in grid)
            if weights
            else ()
        ),
        reputations=(
            tuple(reputations(scored_markets(recordings), reputation).values())
            if reputation is not None
            else ()
        ),
    )


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.4f}"


def render_text(report: BacktestReport) -> str:
    p = report.policy
    lines = [
        f"markets: {p.markets}  (threshold {p.threshold:g}, min_confidence {p.min_confidence:g})",
        f"auto-submitted: {p.submitted}  coverage {_percent(p.coverage)}",
        f"accuracy of auto-submitted answers: {_percent(p.accuracy)}  "
        f"({p.correct} right, {p.wrong} wrong)",
        f"wrong-submission rate: {_percent(p.wrong_submission_rate)} of all markets",
        f"to review: {p.reviewed}  research again: {p.research_again}",
        "",
    ]
    for title, rows in (("agent", report.agents), ("model family", report.families)):
        width = max([len(title), *(len(r.name) for r in rows)])
        lines.append(
            f"{title:<{width}}  answers  failures  brier   definite accuracy  log loss  "
            "calibration error"
        )
        for r in rows:
            lines.append(
                f"{r.name:<{width}}  {r.answers:>7}  {r.failures:>8}  {_score(r.brier):>6}  "
                f"{_percent(r.definite_accuracy):>17}  {_score(r.log_loss):>8}  "
                f"{_score(r.calibration_error):>17}"
            )
        lines.append("")
    lines.append("threshold  min_confidence  coverage  accuracy  wrong-submission rate")
    for s in report.sweep:
        lines.append(
            f"{s.threshold:>9g}  {s.min_confidence:>14g}  {_percent(s.coverage):>8}  "
            f"{_percent(s.accuracy):>8}  {_percent(s.wrong_submission_rate):>21}"
        )
    if report.conflict_modes:
        lines += _render_conflict_modes(report.conflict_modes)
    if report.reputation_policy is not None:
        lines += _render_reputation(report)
    return "\n".join(lines) + "\n"


def _render_conflict_modes(modes: Sequence[ModeFigures]) -> list[str]:
    first = modes[0]
    width = max(len(m.label) for m in modes)
    lines = [
        "",
        f"conflict resolution ({first.conflicts} of {first.markets} markets conflict; "
        "consensus.conflict_resolution):",
        f"{'mode':<{width}}  submitted  accuracy  review rate  wrong-submission rate  "
        "flips right / wrong  marked right / wrong  proposed right / wrong",
    ]
    for m in modes:
        proposed = "-" if m.proposed_right is None else f"{m.proposed_right} / {m.proposed_wrong}"
        lines.append(
            f"{m.label:<{width}}  {m.submitted:>9}  {_percent(m.accuracy):>8}  "
            f"{_percent(m.review_rate):>11}  {_percent(m.wrong_submission_rate):>21}  "
            f"{f'{m.flips_to_right} / {m.flips_to_wrong}':>19}  "
            f"{f'{m.marked_to_right} / {m.marked_to_wrong}':>20}  {proposed:>22}"
        )
    return lines


def _render_reputation(report: BacktestReport) -> list[str]:
    r = report.reputation_policy
    assert r is not None
    lines = [
        "",
        "with reputation weights (walk-forward; oracle/core/reputation.py):",
        f"auto-submitted: {r.submitted}  coverage {_percent(r.coverage)}  accuracy "
        f"{_percent(r.accuracy)}  ({r.correct} right, {r.wrong} wrong)  wrong-submission "
        f"rate {_percent(r.wrong_submission_rate)}",
        "",
        "agent                answers  rating  calibration error  multiplier",
    ]
    for rep in report.reputations:
        lines.append(
            f"{rep.agent_id:<20} {rep.answers:>7}  {rep.rating:>6.0f}  "
            f"{_score(rep.calibration_error):>17}  {rep.multiplier:>10.3f}"
        )
    lines += [
        "",
        "threshold  min_confidence  coverage plain / reputation  accuracy plain / reputation"
        "  wrong plain / reputation",
    ]
    for plain, weighted in zip(report.sweep, report.reputation_sweep, strict=True):
        lines.append(
            f"{plain.threshold:>9g}  {plain.min_confidence:>14g}  "
            f"{_percent(plain.coverage):>14} / {_percent(weighted.coverage):<10}  "
            f"{_percent(plain.accuracy):>14} / {_percent(weighted.accuracy):<10}  "
            f"{plain.wrong:>11} / {weighted.wrong}"
        )
    return lines
