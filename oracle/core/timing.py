"""When a question can be answered: its answer window, the rule that holds an outcome that
can still change, and the research schedule (a table with no I/O, as the lifecycle).

A market's :class:`AnswerWindow` says when each of its outcomes becomes final::

    asked ........ opens_at ............................ closes_at ......... + grace
                   the event can first happen            every outcome final  a person looks
                   |-- early outcomes final once seen --|                     if still undecided

- "Will X happen by D?": `closes_at` is D; YES is an early outcome (known once X happens),
  NO is final only after D.
- A scheduled event ("scheduled for April 19 at 2:20PM ET"): `opens_at` is its start,
  `closes_at` its usual end; no outcome is early.
- A venue's own time (Reality.eth's `opening_ts`, the own contract's `resolve_after`, a
  non-event-based UMA request's timestamp): every outcome final from `closes_at`.

The window comes with its `origin` (venue, question text, venue metadata, a model, or the
default when nothing named a time) and its `evidence` (the words or field it came from),
which the proof, `oracle review show` and the console show.

The schedule: the first research at `closes_at + settle_margin` (at `closes_at` for a
venue's own time, which the venue has settled); before that, where some
outcome is early, at most `early_checks` checks, `early_check_every` apart; after a verdict
that cannot be submitted yet (the agents agree it is undetermined, or they name an outcome
that can still change), the next check per the table below; another party's answer on the
market, or a person sending it back, starts research at once. A person sees the market
only when its window has closed, `grace` has passed, and the agents still cannot decide::

    phase \\ event   discovered        not_yet            other_answered   sent_back
    waiting          first research    first research     now              now
    early            early check       early check*       now              now
    closed           first research    back off           now              now
    overdue          now               person             now              now

    * an early check while the budget lasts, else the first research after the window
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from oracle.core.outcomes import INVALID, RESERVED_OUTCOMES, UNDETERMINED

WindowOrigin = Literal["venue", "question", "metadata", "model", "default"]
Seconds = float
HOUR = 3600.0
DAY = 86400.0


class AnswerWindow(BaseModel):
    """When a market's outcomes become final, and what said so."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    closes_at: float = Field(
        allow_inf_nan=False, description="Every outcome is final from this epoch second on."
    )
    opens_at: float | None = Field(
        None,
        allow_inf_nan=False,
        description="When the event can first happen (a period's start, a game's kick-off).",
    )
    early_outcomes: tuple[str, ...] = Field(
        (), description="Outcomes final as soon as they are observed, before closes_at."
    )
    origin: WindowOrigin
    evidence: str = Field("", description="The words or field the times came from (market text).")

    @field_validator("evidence")
    @classmethod
    def _plain_text(cls, value: str) -> str:
        # Market text: hidden characters (format, control) never reach a reader or a model.
        kept = "".join(c for c in value if unicodedata.category(c) not in {"Cf", "Cc", "Co"})
        return " ".join(kept.split())[:500]

    @model_validator(mode="after")
    def _ordered(self) -> AnswerWindow:
        if self.opens_at is not None and self.opens_at > self.closes_at:
            raise ValueError("opens_at is after closes_at")
        return self

    def final(self, outcome: str, now: float) -> bool:
        """Whether `outcome`, answered at `now`, can no longer change."""
        return now >= self.closes_at or outcome in self.early_outcomes

    def started(self, now: float) -> bool:
        return self.opens_at is None or now >= self.opens_at


def hold_reason(window: AnswerWindow | None, outcome: str, now: float) -> str | None:
    """Why a verdict of `outcome` at `now` must wait (it can still change); None when
    it is final. The rule holds whatever the agents say: a NO on "by D" before D waits."""
    if window is None or window.final(outcome, now):
        return None
    return (
        f"{outcome} can still change until the question's window closes at "
        f"{_iso(window.closes_at)} ({window.origin}: {window.evidence or 'no words recorded'})"
    )


class ScheduleParams(BaseModel):
    """When a market is researched (`daemon.schedule.*`); every time on the venue's clock."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    settle_margin: Seconds = Field(
        2 * HOUR,
        ge=0,
        allow_inf_nan=False,
        description="After the window closes, the time results take to be published.",
    )
    early_checks: int = Field(
        1, ge=0, description="Checks before the window closes, for outcomes that can be early."
    )
    early_check_every: Seconds = Field(
        3 * DAY, gt=0, allow_inf_nan=False, description="Time between early checks."
    )
    # Measured on real Polymarket requests (`oracle backtest --timing`, bench/timing_sweep.py):
    # the back-off moves the research runs most, at almost no cost in lag.
    backoff_first: Seconds = Field(
        8 * HOUR, gt=0, allow_inf_nan=False, description="Wait after the first 'not yet'."
    )
    backoff_factor: float = Field(3.0, ge=1.0, le=10.0, allow_inf_nan=False)
    backoff_max: Seconds = Field(2 * DAY, gt=0, allow_inf_nan=False)
    grace: Seconds = Field(
        7 * DAY,
        ge=0,
        allow_inf_nan=False,
        description="After the window closes, how long the agents may stay undecided "
        "before a person looks.",
    )
    default_wait: Seconds = Field(
        DAY,
        ge=0,
        allow_inf_nan=False,
        description="Where nothing names a time: the window taken to close this long "
        "after the market was asked.",
    )


class Phase(StrEnum):
    WAITING = "waiting"  # nothing can be known yet
    EARLY = "early"  # only the early outcomes can be known
    CLOSED = "closed"  # every outcome is final; the agents should be able to tell
    OVERDUE = "overdue"  # closed for longer than the grace


class ScheduleEvent(StrEnum):
    DISCOVERED = "discovered"
    NOT_YET = "not_yet"  # a verdict that cannot be submitted yet (undetermined, or held)
    OTHER_ANSWERED = "other_answered"  # another party proposed or answered on the market
    SENT_BACK = "sent_back"  # a person sent the market back for research


class Step(StrEnum):
    FIRST_RESEARCH = "first_research"  # closes_at + settle_margin
    EARLY_CHECK = "early_check"  # the next early check, while the budget lasts
    BACK_OFF = "back_off"  # a growing wait after the window closed
    NOW = "now"
    PERSON = "person"  # the window is long over and the agents still cannot decide


P, V, T = Phase, ScheduleEvent, Step
SCHEDULE: dict[tuple[Phase, ScheduleEvent], Step] = {
    (P.WAITING, V.DISCOVERED): T.FIRST_RESEARCH,
    (P.WAITING, V.NOT_YET): T.FIRST_RESEARCH,
    (P.EARLY, V.DISCOVERED): T.EARLY_CHECK,
    (P.EARLY, V.NOT_YET): T.EARLY_CHECK,
    (P.CLOSED, V.DISCOVERED): T.FIRST_RESEARCH,
    (P.CLOSED, V.NOT_YET): T.BACK_OFF,
    (P.OVERDUE, V.DISCOVERED): T.NOW,
    (P.OVERDUE, V.NOT_YET): T.PERSON,
    **{(phase, V.OTHER_ANSWERED): T.NOW for phase in Phase},
    **{(phase, V.SENT_BACK): T.NOW for phase in Phase},
}


@dataclass(frozen=True)
class Progress:
    """What the schedule needs of a market's past: checks made before its window closed,
    and 'not yet' verdicts after it."""

    early_checks: int = 0
    late_deferrals: int = 0


@dataclass(frozen=True)
class Plan:
    """The schedule's answer: research at `at` (`step` says why), or a person looks now."""

    step: Step
    at: float
    progress: Progress
    reason: str

    @property
    def to_person(self) -> bool:
        return self.step is Step.PERSON


def phase(window: AnswerWindow, now: float, params: ScheduleParams) -> Phase:
    if now >= window.closes_at + params.grace:
        return Phase.OVERDUE
    if now >= window.closes_at:
        return Phase.CLOSED
    if window.early_outcomes and window.started(now):
        return Phase.EARLY
    return Phase.WAITING


def plan(
    window: AnswerWindow,
    event: ScheduleEvent,
    now: float,
    progress: Progress,
    params: ScheduleParams,
) -> Plan:
    """The next research of a market after `event` at `now` (the venue's clock)."""
    current = phase(window, now, params)
    step = SCHEDULE[(current, event)]
    # A venue that names the time answers may come has settled it; a time read elsewhere
    # (the question's words) leaves results a while to be published.
    first = window.closes_at + (0.0 if window.origin == "venue" else params.settle_margin)
    if step is Step.EARLY_CHECK:
        start = max(now, window.opens_at or now)
        at = start + params.early_check_every
        if progress.early_checks < params.early_checks and at < window.closes_at:
            done = Progress(progress.early_checks + 1, progress.late_deferrals)
            return Plan(step, at, done, f"early check {done.early_checks} of {params.early_checks}")
        step = Step.FIRST_RESEARCH
    if step is Step.FIRST_RESEARCH:
        return Plan(step, max(first, now), progress, "after the window closes")
    if step is Step.BACK_OFF:
        n = progress.late_deferrals
        wait = min(params.backoff_first * params.backoff_factor**n, params.backoff_max)
        # Never later than the grace's end: the person should not wait on a long back-off.
        at = min(now + wait, max(window.closes_at + params.grace, now))
        done = Progress(progress.early_checks, n + 1)
        return Plan(step, at, done, f"not decidable yet; check {n + 1} after the window")
    if step is Step.PERSON:
        return Plan(
            step,
            now,
            progress,
            f"the window closed at {_iso(window.closes_at)} and the agents still cannot "
            f"decide after {progress.late_deferrals + 1} checks",
        )
    return Plan(Step.NOW, now, progress, str(event.value).replace("_", " "))


TimedKind = Literal["submit", "review", "wait", "person"]


@dataclass(frozen=True)
class Timed:
    """A verdict's action with time applied: `wait` (research again at `plan.at`) or
    `person` (the schedule gave up) replace `submit` and `review` when the time has not
    come; `code` names why, for metrics and the audit log."""

    kind: TimedKind
    code: str
    reason: str
    plan: Plan | None = None


def timed_action(
    window: AnswerWindow,
    *,
    outcome: str,
    action: Literal["submit", "review", "research_again"],
    now: float,
    progress: Progress,
    params: ScheduleParams,
) -> Timed:
    """The decision policy's action on a verdict of `outcome` at `now`, with time applied.

    - A definite outcome on a window nothing named (`default`) goes to a person, who
      confirms it can no longer change (`window_unknown`).
    - A definite outcome that is final goes as the policy says (submitted, or reviewed).
    - Before the window closes anything else waits, whatever the agents say: an outcome
      that can still change (`hold_reason`), the agents' "not yet", a verdict with no
      quorum or too little evidence. None of that reaches a person: their time has not come.
    - After the window, "not yet" backs off, then goes to a person once the grace is over;
      any other verdict goes as the policy says.

    INVALID is definite only when the policy would submit it: the agents agreed on it
    where the venue takes it (`oracle.core.outcomes`), so it waits for the window and is
    confirmed by a person on a default window, as any answer. The consensus's own INVALID
    (too few trustworthy answers) always has the action `review`, and is never submitted.
    """
    definite = outcome not in RESERVED_OUTCOMES or (outcome == INVALID and action == "submit")
    if definite and window.origin == "default" and window.final(outcome, now):
        return Timed(
            "review",
            "window_unknown",
            "nothing says when this question's outcome becomes final: a person confirms "
            f"{outcome} can no longer change",
        )
    if definite and window.final(outcome, now):
        return Timed("submit" if action == "submit" else "review", action, "")
    if now < window.closes_at:
        held = hold_reason(window, outcome, now) if definite else None
        code = "held" if held else ("not_yet" if outcome == UNDETERMINED else "too_soon")
        why = held or (
            "the agents agree it cannot be decided yet"
            if outcome == UNDETERMINED
            else f"a verdict of {outcome} before the window closes at "
            f"{_iso(window.closes_at)} waits for it"
        )
        next_ = plan(window, ScheduleEvent.NOT_YET, now, progress, params)
        return Timed("wait", code, f"{why}; {next_.reason}", next_)
    if action == "research_again":
        next_ = plan(window, ScheduleEvent.NOT_YET, now, progress, params)
        if next_.to_person:
            return Timed("person", "still_undecidable", next_.reason, next_)
        return Timed(
            "wait", "not_yet", f"the agents agree it cannot be decided yet; {next_.reason}", next_
        )
    # A reserved outcome is never submitted unless it is definite (an agreed INVALID).
    kind: TimedKind = "submit" if action == "submit" and definite else "review"
    return Timed(kind, action if kind == action else "review", "")


def venue_window(at: float, evidence: str) -> AnswerWindow:
    """The window of a venue that says when its question may be answered: every outcome
    final from `at`."""
    return AnswerWindow(closes_at=at, origin="venue", evidence=evidence)


def default_window(asked_at: float, params: ScheduleParams) -> AnswerWindow:
    """The window where neither the venue nor the question names a time."""
    return AnswerWindow(
        closes_at=asked_at + params.default_wait,
        origin="default",
        evidence=f"no time found; {params.default_wait / HOUR:g} h after it was asked",
    )


def _iso(seconds: float) -> str:
    try:
        return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="minutes")
    except (OverflowError, ValueError, OSError):
        return f"{seconds:g}"
