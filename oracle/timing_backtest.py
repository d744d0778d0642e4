"""Timing backtest: real Polymarket requests replayed through the research schedule.

Questions arrive long before they can be answered. `oracle backtest --timing FILE` asks
how the daemon's schedule and hold rule (`oracle.core.timing`: `plan`, `timed_action`)
would have met real requests: how often each market is researched, whether anything is
proposed before its time, how many markets end with a person because the agents could
not decide, and how long after the question became answerable we would propose.

The input is a JSON list (gzip or plain) of requests, one object each: `query_id`,
`request_timestamp` (when asked), `proposal_time` (the first real proposal: by then the
answer was known), `ancillary_data_hex` (the question as UMA carries it), the recorded
outcome (`resolved_price_outcome`, else `proposed_price_outcome`: `p1`..`p4`), and
Polymarket's own `end_date_iso` and `game_start_time`. A row that cannot be used is
skipped and counted by reason; a file that cannot be read is one `InputError`.

Each market's window comes from its question text (`oracle.core.timetext.read_window`),
else from the metadata (a game's start and a usual length, else the end date), else
`default_window`. The replay runs on a simulated clock from the request's time: the first
research where the schedule puts it on discovery, then each research's modelled verdict
through `timed_action` (submit, wait until `plan.at`, or a person). Two models of the
agents (`Mode`):

- `known`: they cannot tell before the recorded proposal (UNDETERMINED, research again);
  from then on they answer the recorded outcome, to submit.
- `guess`: before the answer could be known they answer, sure enough to submit, an
  outcome that can still change (the non-early outcome of a question with early ones, the
  "not yet" side; else the other label); from then on, the recorded outcome. An early
  outcome could be known at the recorded proposal; any other at the window's close or the
  recorded proposal, whichever is first. The model trusts the window for when a non-early
  outcome is knowable: a window that closes too early shows in the lag (proposals well
  ahead of the human's), not as a wrong proposal.

Everything here but `load_requests` is pure: the replay of a row depends on the row and
the parameters alone.
"""

from __future__ import annotations

import gzip
import math
import re
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal, Protocol

from oracle.core.ancillary import TOO_EARLY, UNKNOWN
from oracle.core.markets import window_that_holds
from oracle.core.outcomes import INVALID  # the 50-50 price, as the daemon names it
from oracle.core.timetext import read_window
from oracle.core.timing import (
    HOUR,
    AnswerWindow,
    Progress,
    ScheduleEvent,
    ScheduleParams,
    WindowOrigin,
    default_window,
    plan,
    timed_action,
)
from oracle.errors import ConfigError, InputError, JsonError
from oracle.safe_json import loads

Mode = Literal["known", "guess"]
MODES: tuple[Mode, ...] = ("known", "guess")
GAME_LENGTH = 3 * HOUR  # a game's usual length where the metadata gives only its start
# A market researched this often has a schedule that never ends: a configuration error.
MAX_RUNS = 10_000
PREMATURE_LISTED = 10
ORIGINS: tuple[WindowOrigin, ...] = ("venue", "question", "metadata", "model", "default")
TIME_NOT_COME = "time had not come"  # still undecidable after the window and its grace


# --- the rows ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Request:
    """One usable row: the question, its outcomes and what really happened."""

    query_id: str
    asked_at: float
    proposed_at: float  # the first real proposal: the answer was known by then
    question: str
    outcomes: tuple[str, ...]  # the labels a verdict can take (p1, p2, ...), not 50-50
    recorded: str  # one of `outcomes`, or INVALID (50-50)
    game_start: float | None = None
    end_date: float | None = None


def load_requests(path: Path) -> list[object]:
    """The rows of a request file (gzip or plain JSON); InputError for a file that cannot
    be used at all. Rows are checked one by one by `read_request`."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except OSError as error:
        raise InputError(f"{path}: cannot be read ({error.strerror})") from None
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError) as error:
            raise InputError(f"{path}: not a readable gzip file ({error})") from None
    try:
        rows = loads(data)
    except JsonError as error:
        raise InputError(f"{path}: {error}") from None
    if not isinstance(rows, list):
        raise InputError(f"{path}: expected a JSON list of requests")
    return rows


def read_request(row: object) -> Request | str:
    """The row as a `Request`, or why it cannot be replayed (a short reason, counted)."""
    if not isinstance(row, dict):
        return "not a JSON object"
    query_id = row.get("query_id")
    if not isinstance(query_id, str) or not query_id:
        return "no query_id"
    asked_at, proposed_at = _epoch(row.get("request_timestamp")), _epoch(row.get("proposal_time"))
    if asked_at is None:
        return "no request_timestamp"
    if proposed_at is None:
        return "no proposal_time"
    if proposed_at < asked_at:
        return "proposed before it was asked"
    question = question_text(row.get("ancillary_data_hex"))
    if question is None:
        return "no question text"
    conditions = row.get("resolution_conditions")
    labels = outcome_labels(conditions) if isinstance(conditions, str) else None
    if labels is None:
        return "no outcome labels"
    key = row.get("resolved_price_outcome") or row.get("proposed_price_outcome")
    if not isinstance(key, str):
        return "no outcome recorded"
    # p4 is the too-early answer: the human proposed too soon and the answer is unknown.
    if key == "p4" or _meaning(labels.get(key, "")) == TOO_EARLY:
        return "resolved too early (p4)"
    if key not in labels:
        return "outcome not labelled"
    outcomes = tuple(label for label in labels.values() if _meaning(label) is None)
    if len(set(outcomes)) < 2:
        return "fewer than two outcomes"
    return Request(
        query_id=query_id,
        asked_at=asked_at,
        proposed_at=proposed_at,
        question=question,
        outcomes=outcomes,
        recorded=INVALID if _meaning(labels[key]) == UNKNOWN else labels[key],
        game_start=_iso_epoch(row.get("game_start_time")),
        end_date=_iso_epoch(row.get("end_date_iso")),
    )


def question_text(ancillary_hex: object) -> str | None:
    """The question as UMA carries it (`q: title: ..., description: ...`): the text the
    reader is given; None when the field is not hex of UTF-8 text."""
    if not isinstance(ancillary_hex, str):
        return None
    try:
        text = bytes.fromhex(ancillary_hex.removeprefix("0x")).decode("utf-8")
    except ValueError:  # UnicodeDecodeError is one
        return None
    return text.strip() or None


# "p1 corresponds to No", ", p2 to Yes", ", and p3 to unknown/50-50": where a label starts.
_LABEL_START = re.compile(r"(?:^|,\s*(?:and\s+)?)(p\d)\s+(?:corresponds\s+)?to\s+")


def outcome_labels(conditions: str) -> dict[str, str] | None:
    """The labels the sentence "Where p1 corresponds to No, p2 to Yes, p3 to
    unknown/50-50." names, by key; None when there is no such sentence. It ends the
    field, so a label may hold a full stop ("St. Louis Cardinals")."""
    at = conditions.find("Where ")
    if at < 0:
        return None
    sentence = conditions[at + len("Where ") :].strip().removesuffix(".")
    starts = list(_LABEL_START.finditer(sentence))
    if not starts or starts[0].start() != 0:
        return None
    labels: dict[str, str] = {}
    for start, following in zip(starts, [*starts[1:], None], strict=True):
        label = sentence[start.end() : following.start() if following else len(sentence)]
        if not label.strip() or start[1] in labels:
            return None
        labels[start[1]] = label.strip()
    return labels


def _meaning(label: str) -> str | None:
    """UNKNOWN for the 50-50 label, TOO_EARLY for UMA's too-early one, else None."""
    words = label.strip().casefold()
    if words.startswith(("unknown", "50-50", "50/50")):
        return UNKNOWN
    if words in ("early request", "an early request", "too early"):
        return TOO_EARLY
    return None


def _epoch(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) and value >= 0 else None


def _iso_epoch(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


# --- the window ----------------------------------------------------------------------------


def metadata_window(request: Request, game_length: float = GAME_LENGTH) -> AnswerWindow | None:
    """The window Polymarket's own fields imply: a game from its start for `game_length`,
    else every outcome final at the end date; None without either."""
    if request.game_start is not None:
        return AnswerWindow(
            opens_at=request.game_start,
            closes_at=request.game_start + game_length,
            origin="metadata",
            evidence=f"game_start_time {_iso(request.game_start)}, "
            f"a game taken to last {game_length / HOUR:g} h",
        )
    if request.end_date is not None:
        return AnswerWindow(
            closes_at=request.end_date,
            origin="metadata",
            evidence=f"end_date_iso {_iso(request.end_date)}",
        )
    return None


class WindowReader(Protocol):
    """`oracle.core.timetext.read_window`'s signature (a cached one, in a sweep)."""

    def __call__(
        self, text: str, *, asked_at: float, outcomes: tuple[str, ...]
    ) -> AnswerWindow | None: ...


def request_window(
    request: Request,
    params: ScheduleParams,
    game_length: float = GAME_LENGTH,
    reader: WindowReader = read_window,
) -> AnswerWindow:
    """The market's window as the daemon would have it: the question's words, else the
    metadata, else the default."""
    found = reader(request.question, asked_at=request.asked_at, outcomes=request.outcomes)
    if found is not None:
        return window_that_holds(found, request.outcomes)
    return metadata_window(request, game_length) or default_window(request.asked_at, params)


# --- the replay ----------------------------------------------------------------------------


def could_be_known(request: Request, window: AnswerWindow) -> float:
    """When the `guess` agents stop guessing: an early outcome once someone saw it (the
    recorded proposal), any other once the window closed or someone proposed it."""
    if request.recorded in window.early_outcomes:
        return request.proposed_at
    return min(request.proposed_at, window.closes_at)


def guess(request: Request, window: AnswerWindow) -> str:
    """The `guess` agents' answer before it could be known: one that can still change."""
    not_early = [o for o in request.outcomes if o not in window.early_outcomes]
    if window.early_outcomes and not_early:
        return not_early[0]
    return next(o for o in request.outcomes if o != request.recorded)


def verdict(
    request: Request, window: AnswerWindow, mode: Mode, now: float
) -> tuple[str, Literal["submit", "research_again"]]:
    """The modelled consensus of a research at `now`: an outcome and the policy's action."""
    if mode == "known":
        if now < request.proposed_at:
            return "UNDETERMINED", "research_again"
        return request.recorded, "submit"
    if now < could_be_known(request, window):
        return guess(request, window), "submit"
    return request.recorded, "submit"


@dataclass(frozen=True)
class MarketReplay:
    """One market's replay: research runs, and how it ended (a proposal, or a person)."""

    query_id: str
    origin: WindowOrigin
    runs: int
    ended_at: float
    kind: Literal["submit", "review", "person"]
    code: str  # `timed_action`'s: why it ended so
    outcome: str
    premature: bool = False
    wrong: bool = False
    lag_hours: float | None = None  # from the recorded proposal to ours (proposals only)
    early_outcome: bool = False  # the outcome proposed is one of the window's early ones


def replay(
    request: Request, window: AnswerWindow, mode: Mode, params: ScheduleParams
) -> MarketReplay:
    """The schedule and the policy on a simulated clock, from the request's discovery."""
    first = plan(window, ScheduleEvent.DISCOVERED, request.asked_at, Progress(), params)
    assert first.at is not None  # discovery never hands a market to a person
    now, progress = first.at, first.progress
    for runs in range(1, MAX_RUNS + 1):
        outcome, action = verdict(request, window, mode, now)
        timed = timed_action(
            window, outcome=outcome, action=action, now=now, progress=progress, params=params
        )
        if timed.kind == "wait":
            assert timed.plan is not None  # a wait always comes with its plan
            assert timed.plan.at is not None
            now, progress = timed.plan.at, timed.plan.progress
            continue
        ended = MarketReplay(
            request.query_id, window.origin, runs, now, timed.kind, timed.code, outcome
        )
        if timed.kind != "submit":
            return ended
        early = outcome in window.early_outcomes
        wrong = outcome != request.recorded
        premature = (now < request.proposed_at and wrong) or (not early and now < window.closes_at)
        return replace(
            ended,
            premature=premature,
            wrong=wrong,
            lag_hours=(now - request.proposed_at) / HOUR,
            early_outcome=early,
        )
    raise ConfigError(
        f"{request.query_id}: more than {MAX_RUNS} research runs; the schedule "
        "(daemon.schedule) never lets the market go"
    )


# --- the report ----------------------------------------------------------------------------


@dataclass(frozen=True)
class Spread:
    mean: float | None
    p50: float | None
    p90: float | None
    max: float | None


@dataclass(frozen=True)
class ModeFigures:
    """One agent model's figures over every replayed market."""

    mode: Mode
    markets: int
    runs: Spread
    proposals: int
    premature: int
    premature_ids: tuple[str, ...]  # the first PREMATURE_LISTED, in file order
    wrong: int
    to_person: int
    to_person_by_reason: dict[str, int]
    time_not_come: int
    time_not_come_share: float
    lag_hours: Spread  # p50 and p90 of (our proposal - the recorded proposal)
    ahead_of_human: int  # proposals before the recorded one
    ahead_not_early: int  # of those, of an outcome that was not early: the window's trust

    @property
    def to_person_share(self) -> float:
        return self.to_person / self.markets if self.markets else 0.0


@dataclass(frozen=True)
class TimingReport:
    rows: int
    markets: int
    skipped: dict[str, int]
    windows: dict[str, int]
    params: ScheduleParams
    game_length: float
    modes: tuple[ModeFigures, ...]
    source: str = ""
    replays: dict[Mode, tuple[MarketReplay, ...]] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "rows": self.rows,
            "markets": self.markets,
            "skipped": self.skipped,
            "windows": self.windows,
            "params": self.params.model_dump(),
            "game_length": self.game_length,
            "modes": {
                m.mode: {**asdict(m), "to_person_share": m.to_person_share} for m in self.modes
            },
        }


def percentile(values: Sequence[float], share: float) -> float | None:
    """The nearest-rank percentile: the smallest value with `share` of them at or below."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(math.ceil(share * len(ordered)) - 1, 0)]


def spread(values: Sequence[float]) -> Spread:
    if not values:
        return Spread(None, None, None, None)
    return Spread(
        sum(values) / len(values), percentile(values, 0.5), percentile(values, 0.9), max(values)
    )


def mode_figures(mode: Mode, replays: Sequence[MarketReplay]) -> ModeFigures:
    proposals = [r for r in replays if r.kind == "submit"]
    people = [r for r in replays if r.kind != "submit"]
    reasons = Counter(
        TIME_NOT_COME if r.code == "still_undecidable" else f"{r.kind}: {r.code}" for r in people
    )
    lags = [r.lag_hours for r in proposals if r.lag_hours is not None]
    ahead = [r for r in proposals if r.lag_hours is not None and r.lag_hours < 0]
    premature = [r.query_id for r in proposals if r.premature]
    markets = len(replays)
    return ModeFigures(
        mode=mode,
        markets=markets,
        runs=spread([float(r.runs) for r in replays]),
        proposals=len(proposals),
        premature=len(premature),
        premature_ids=tuple(premature[:PREMATURE_LISTED]),
        wrong=sum(r.wrong for r in proposals),
        to_person=len(people),
        to_person_by_reason=dict(sorted(reasons.items())),
        time_not_come=reasons[TIME_NOT_COME],
        time_not_come_share=reasons[TIME_NOT_COME] / markets if markets else 0.0,
        lag_hours=spread(lags),
        ahead_of_human=len(ahead),
        ahead_not_early=sum(not r.early_outcome for r in ahead),
    )


def run_timing_backtest(
    rows: Iterable[object],
    params: ScheduleParams,
    modes: Sequence[Mode] = MODES,
    *,
    game_length: float = GAME_LENGTH,
    source: str = "",
    reader: WindowReader = read_window,
) -> TimingReport:
    """Replay every usable row under each agent model in `modes` (see the module doc)."""
    skipped: Counter[str] = Counter()
    markets: list[tuple[Request, AnswerWindow]] = []
    seen: set[str] = set()
    count = 0
    for row in rows:
        count += 1
        request = read_request(row)
        if isinstance(request, str):
            skipped[request] += 1
        elif request.query_id in seen:
            skipped["query_id repeated"] += 1
        else:
            seen.add(request.query_id)
            markets.append((request, request_window(request, params, game_length, reader)))
    origins = Counter(window.origin for _, window in markets)
    replays = {
        mode: tuple(replay(request, window, mode, params) for request, window in markets)
        for mode in modes
    }
    return TimingReport(
        rows=count,
        markets=len(markets),
        skipped=dict(skipped.most_common()),
        windows={origin: origins[origin] for origin in ORIGINS if origins[origin]},
        params=params,
        game_length=game_length,
        modes=tuple(mode_figures(mode, replays[mode]) for mode in modes),
        source=source,
        replays=replays,
    )


# --- text ----------------------------------------------------------------------------------


def _number(value: float | None, digits: int = 1) -> str:
    return "-" if value is None else f"{value:.{digits}f}"


def _share(count: int, markets: int) -> str:
    return f"{count} ({100 * count / markets:.1f}%)" if markets else str(count)


def _hours(seconds: float) -> str:
    return f"{seconds / HOUR:g} h"


def render_timing_text(report: TimingReport) -> str:
    p = report.params
    skipped = ", ".join(f"{reason} {n}" for reason, n in report.skipped.items())
    lines = [
        f"timing backtest{': ' + report.source if report.source else ''}",
        f"markets: {report.markets} replayed of {report.rows} rows"
        + (f"; skipped: {skipped}" if skipped else ""),
        "windows: " + ", ".join(f"{origin} {n}" for origin, n in report.windows.items()),
        f"schedule: settle_margin {_hours(p.settle_margin)}, early_checks {p.early_checks} "
        f"every {_hours(p.early_check_every)}, back-off {_hours(p.backoff_first)} "
        f"x{p.backoff_factor:g} up to {_hours(p.backoff_max)}, grace {_hours(p.grace)}, "
        f"default_wait {_hours(p.default_wait)}; a game {_hours(report.game_length)}",
        "",
    ]
    rows: list[tuple[str, Callable[[ModeFigures], str]]] = [
        ("research runs: mean", lambda m: _number(m.runs.mean, 2)),
        ("research runs: p50 / p90 / max", _runs),
        ("proposals", lambda m: str(m.proposals)),
        ("premature proposals", lambda m: str(m.premature)),
        ("wrong proposals", lambda m: str(m.wrong)),
        ("to a person", lambda m: _share(m.to_person, m.markets)),
        (f"  {TIME_NOT_COME}", lambda m: _share(m.time_not_come, m.markets)),
        ("  other reasons", lambda m: _share(m.to_person - m.time_not_come, m.markets)),
        ("lag after the human (h): p50 / p90", _lag),
        ("proposed ahead of the human", lambda m: str(m.ahead_of_human)),
        ("  of an outcome not early", lambda m: str(m.ahead_not_early)),
    ]
    width = max(len(label) for label, _ in rows)
    columns = [[render(m) for m in report.modes] for _, render in rows]
    column_width = max(
        [len(m.mode) for m in report.modes] + [len(v) for row in columns for v in row]
    )
    lines.append(" " * width + "".join(f"  {m.mode:>{column_width}}" for m in report.modes))
    for (label, _), values in zip(rows, columns, strict=True):
        lines.append(f"{label:<{width}}" + "".join(f"  {v:>{column_width}}" for v in values))
    for m in report.modes:
        other = {r: n for r, n in m.to_person_by_reason.items() if r != TIME_NOT_COME}
        if other:
            lines.append(
                f"{m.mode}: to a person for "
                + ", ".join(f"{reason} {n}" for reason, n in other.items())
            )
        if m.premature_ids:
            shown = len(m.premature_ids)
            first = f" (the first {shown} of {m.premature})" if m.premature > shown else ""
            lines.append(f"{m.mode}: premature proposals{first}:")
            lines.extend(f"  {query_id}" for query_id in m.premature_ids)
    return "\n".join(lines) + "\n"


def _runs(m: ModeFigures) -> str:
    return f"{_number(m.runs.p50, 0)} / {_number(m.runs.p90, 0)} / {_number(m.runs.max, 0)}"


def _lag(m: ModeFigures) -> str:
    return f"{_number(m.lag_hours.p50)} / {_number(m.lag_hours.p90)}"


def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).isoformat(timespec="minutes")
