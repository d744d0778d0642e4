"""`oracle backtest --timing`: real requests replayed through the research schedule."""

from __future__ import annotations

import gzip
import json
import os
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from oracle.core.markets import window_that_holds
from oracle.core.timing import DAY, HOUR, AnswerWindow, ScheduleParams
from oracle.errors import ConfigError, InputError
from oracle.timing_backtest import (
    GAME_LENGTH,
    TIME_NOT_COME,
    Request,
    load_requests,
    outcome_labels,
    read_request,
    render_timing_text,
    replay,
    run_timing_backtest,
)

from .commands import oracle_in_process

ET = ZoneInfo("America/New_York")
ASKED = datetime(2025, 3, 1, 12, tzinfo=ET)
CLOSES = datetime(2025, 3, 31, 23, 59, tzinfo=ET)  # "by March 31, 2025, 11:59 PM ET"
GAME_START = datetime(2025, 3, 5, 19, 30, tzinfo=ET)
YES_NO = "Where p1 corresponds to No, p2 to Yes, p3 to unknown/50-50."
ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("ORACLE_SHARED_DATA") or ROOT.parent / "shared" / "data")
REAL_FILE = SHARED / "polymarket-requests-2025-03-04.json.gz"
# The schedule docs/backtest.md recommends ("Timing"): a longer back-off than the default,
# as the first proposal on Polymarket often comes a day or more after the window.


def ancillary(title: str, description: str, labels: str = YES_NO) -> str:
    text = (
        f"q: title: {title}, description: {description} res_data: p1: 0, p2: 1, p3: 0.5. "
        f"{labels} Updates made by the question creator via the bulletin board should be "
        "considered.,initializer:91430cad2d3975766499717fa0d66a78d814e5c5"
    )
    return "0x" + text.encode().hex()


def row(
    query_id: str,
    hex_text: str,
    *,
    asked: datetime,
    proposed: datetime,
    outcome: str,
    labels: str = YES_NO,
    **metadata: str | None,
) -> dict[str, Any]:
    return {
        "query_id": query_id,
        "request_timestamp": int(asked.timestamp()),
        "proposal_time": int(proposed.timestamp()),
        "ancillary_data_hex": hex_text,
        "resolution_conditions": f"res_data:p1: 0, p2: 1, p3: 0.5. {labels}",
        "proposed_price_outcome": outcome,
        "resolved_price_outcome": outcome,
        "end_date_iso": metadata.get("end_date_iso"),
        "game_start_time": metadata.get("game_start_time"),
        "tags": [],
    }


def iso(moment: datetime) -> str:
    return moment.astimezone(ZoneInfo("UTC")).isoformat().replace("+00:00", "Z")


BY_DATE_TITLE = "Will the Fed cut rates by March 31, 2025?"
BY_DATE = (
    'This market will resolve to "Yes" if the Federal Reserve announces a cut to its target '
    'rate by March 31, 2025, 11:59 PM ET. Otherwise, this market will resolve to "No".'
)
NO_TIME = (
    'This market will resolve to "Yes" if the next iPhone Apple announces has a titanium '
    'frame. Otherwise, this market will resolve to "No".'
)
GAME_LABELS = "Where p1 corresponds to Lakers, p2 to Celtics, p3 to unknown/50-50."


def synthetic_rows() -> list[dict[str, Any]]:
    """A game (metadata window), a "by D" question resolved Yes early and one resolved No
    after D (the question's window), and two with no time in their words (the default
    window), one answered a day later and one ten days later."""
    return [
        row(
            "game",
            ancillary(
                "Lakers vs. Celtics",
                "In the upcoming NBA game, if the Lakers win the market will resolve to "
                '"Lakers"; if the Celtics win, to "Celtics".',
                GAME_LABELS,
            ),
            asked=GAME_START - timedelta(days=2),
            proposed=GAME_START + timedelta(hours=2.5),
            outcome="p2",
            labels=GAME_LABELS,
            game_start_time=iso(GAME_START),
            end_date_iso=iso(GAME_START + timedelta(days=7)),
        ),
        row(
            "by-date-yes",
            ancillary(BY_DATE_TITLE, BY_DATE),
            asked=ASKED,
            proposed=ASKED + timedelta(days=2),
            outcome="p2",
        ),
        row(
            "by-date-no",
            ancillary(BY_DATE_TITLE, BY_DATE),
            asked=ASKED,
            proposed=CLOSES + timedelta(hours=1),
            outcome="p1",
        ),
        row(
            "no-time",
            ancillary("Will the next iPhone have a titanium frame?", NO_TIME),
            asked=ASKED,
            proposed=ASKED + timedelta(hours=30),
            outcome="p2",
        ),
        row(
            "no-time-late",
            ancillary("Will the next iPhone have a titanium frame?", NO_TIME),
            asked=ASKED,
            proposed=ASKED + timedelta(days=10),
            outcome="p1",
        ),
    ]


@pytest.fixture
def requests_file(tmp_path: Path) -> Path:
    path = tmp_path / "requests.json.gz"
    path.write_bytes(gzip.compress(json.dumps(synthetic_rows()).encode()))
    return path


# The schedule these cases were worked out for: a short back-off, easy to count by hand.
SHORT_BACKOFF = ScheduleParams(backoff_first=2 * HOUR, backoff_factor=2.0, backoff_max=DAY)


def test_synthetic_requests_in_both_modes(requests_file: Path) -> None:
    report = run_timing_backtest(load_requests(requests_file), SHORT_BACKOFF)
    assert (report.rows, report.markets, report.skipped) == (5, 5, {})
    assert report.windows == {"question": 2, "metadata": 1, "default": 2}
    known, guess = report.modes
    runs = {mode: {r.query_id: r.runs for r in report.replays[mode]} for mode in report.replays}
    # game: once, 2 h after its 3 h; by-date-yes: the early check (day 3) finds it; by-date-no:
    # the early check, then after the window; no-time: 2 h after the default day, then 2 h
    # and 4 h back-offs, then a person confirms (nothing named its time); no-time-late:
    # back-offs until the grace is over, then a person.
    assert runs["known"] == {
        "game": 1,
        "by-date-yes": 1,
        "by-date-no": 2,
        "no-time": 3,
        "no-time-late": 11,
    }
    assert (known.runs.mean, known.runs.p50, known.runs.p90, known.runs.max) == (3.6, 2, 11, 11)
    assert (known.proposals, known.premature, known.wrong) == (3, 0, 0)
    assert (known.to_person, known.time_not_come, known.time_not_come_share) == (2, 1, 0.2)
    assert known.to_person_by_reason == {TIME_NOT_COME: 1, "review: window_unknown": 1}
    assert (known.lag_hours.p50, known.lag_hours.p90) == (2.5, 24.0)
    assert (known.ahead_of_human, known.ahead_not_early) == (0, 0)
    # Guessing agents: held before the window closes (No on "by D" at the early check),
    # right from its close on; the no-time questions' answers go to a person at the first
    # research (nothing named their time), none ahead of the human.
    assert runs["guess"] == {
        "game": 1,
        "by-date-yes": 1,
        "by-date-no": 2,
        "no-time": 1,
        "no-time-late": 1,
    }
    assert (guess.runs.mean, guess.runs.p50, guess.runs.p90, guess.runs.max) == (1.2, 1, 2, 2)
    assert (guess.proposals, guess.premature, guess.wrong, guess.to_person) == (3, 0, 0, 2)
    assert guess.to_person_by_reason == {"review: window_unknown": 2}
    assert (guess.lag_hours.p50, guess.lag_hours.p90) == (2.5, 24.0)
    assert (guess.ahead_of_human, guess.ahead_not_early) == (0, 0)


def test_bad_rows_are_skipped_and_counted(tmp_path: Path) -> None:
    good = synthetic_rows()[1]
    rows: list[object] = [
        good,
        42,
        {**good, "query_id": "x1", "request_timestamp": "yesterday"},
        {**good, "query_id": "x2", "ancillary_data_hex": "0xnothex"},
        {**good, "query_id": "x3", "resolution_conditions": "p1: 0, p2: 1"},
        {**good, "query_id": "x4", "resolved_price_outcome": "p4"},
        {**good, "query_id": "x5", "resolved_price_outcome": None, "proposed_price_outcome": None},
        {**good, "query_id": "x6", "proposal_time": good["request_timestamp"] - 1},
        good,
    ]
    report = run_timing_backtest(rows, ScheduleParams())
    assert (report.rows, report.markets) == (9, 1)
    assert report.skipped == {
        "not a JSON object": 1,
        "no request_timestamp": 1,
        "no question text": 1,
        "no outcome labels": 1,
        "resolved too early (p4)": 1,
        "no outcome recorded": 1,
        "proposed before it was asked": 1,
        "query_id repeated": 1,
    }


def test_rows_read_as_the_venue_wrote_them() -> None:
    labels = "Where p1 corresponds to St. Louis Cardinals, p2 to Boston Red Sox, p3 to 50-50."
    assert outcome_labels(f"res_data:p1: 0, p2: 1, p3: 0.5. {labels}") == {
        "p1": "St. Louis Cardinals",
        "p2": "Boston Red Sox",
        "p3": "50-50",
    }
    fifty_fifty = read_request({**synthetic_rows()[0], "resolved_price_outcome": "p3"})
    assert isinstance(fifty_fifty, Request)
    assert (fifty_fifty.outcomes, fifty_fifty.recorded) == (("Lakers", "Celtics"), "INVALID")
    proposed_only = read_request({**synthetic_rows()[0], "resolved_price_outcome": None})
    assert isinstance(proposed_only, Request)
    assert proposed_only.recorded == "Celtics"


def _request(asked: float, proposed: float, recorded: str = "Yes") -> Request:
    return Request("q", asked, proposed, "", ("No", "Yes"), recorded)


def test_a_market_found_after_its_window_waits_for_results_and_an_all_early_window_holds() -> None:
    params = ScheduleParams()
    by_date = AnswerWindow(closes_at=CLOSES.timestamp(), early_outcomes=("Yes",), origin="question")
    # Found just after its window closed: first researched after the settle margin, as any
    # other market, not at once before the results are out.
    found_late = _request(CLOSES.timestamp() + 600, CLOSES.timestamp() + 3600)
    guessed = replay(found_late, by_date, "guess", params)
    assert (guessed.runs, guessed.premature, guessed.wrong) == (1, False, False)
    assert guessed.ended_at == CLOSES.timestamp() + params.settle_margin
    # A window that calls every outcome early would hold nothing; the window the daemon
    # (and this backtest) uses keeps none early, so a guess waits for the window.
    all_early = by_date.model_copy(update={"early_outcomes": ("No", "Yes")})
    held = window_that_holds(all_early, ("No", "Yes"))
    assert held.early_outcomes == ()
    early = _request(ASKED.timestamp(), ASKED.timestamp() + 10 * DAY)
    guessed = replay(early, held, "guess", params)
    assert guessed.premature is False
    assert guessed.ended_at >= CLOSES.timestamp()


def test_a_schedule_that_never_lets_go_is_a_configuration_error() -> None:
    endless = ScheduleParams(backoff_first=1, backoff_factor=1.0, backoff_max=1, grace=30 * DAY)
    window = AnswerWindow(closes_at=ASKED.timestamp(), origin="default")
    late = _request(ASKED.timestamp(), ASKED.timestamp() + 20 * DAY)
    with pytest.raises(ConfigError, match="more than 10000 research runs"):
        replay(late, window, "known", endless)


def test_a_game_without_words_takes_its_time_from_the_metadata(requests_file: Path) -> None:
    report = run_timing_backtest(load_requests(requests_file), ScheduleParams())
    (game,) = (r for r in report.replays["known"] if r.query_id == "game")
    assert game.origin == "metadata"
    assert game.ended_at == GAME_START.timestamp() + GAME_LENGTH + 2 * HOUR


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "not usable JSON"),
        (b"{}", "expected a JSON list of requests"),
        (b"\x1f\x8bnot gzip", "not a readable gzip file"),
    ],
)
def test_a_bad_file_is_one_error(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "requests.json"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        load_requests(path)
    with pytest.raises(InputError, match="no such file"):
        load_requests(tmp_path / "absent.json")


# --- the shared data ------------------------------------------------------------------------


@pytest.fixture(scope="module")
def real_report() -> Any:
    if not REAL_FILE.is_file():
        pytest.skip(f"{REAL_FILE}: absent (shared data: ../shared/data, or $ORACLE_SHARED_DATA)")
    return run_timing_backtest(load_requests(REAL_FILE), ScheduleParams())


def test_real_requests_meet_the_targets(real_report: Any) -> None:
    known, guess = real_report.modes
    assert real_report.markets >= 1900
    assert known.runs.mean <= 1.5
    assert known.time_not_come_share <= 0.02
    assert (known.premature, known.wrong) == (0, 0)
    assert guess.time_not_come_share <= 0.02


def test_docs_show_the_current_figures(real_report: Any) -> None:
    text = render_timing_text(real_report)
    table = text[text.index("schedule:") : text.index("  of an outcome not early")]
    docs = (ROOT / "docs" / "backtest.md").read_text(encoding="utf-8")
    assert table in docs, "docs/backtest.md (Timing) shows outdated figures"


def test_real_requests_no_premature_guess(real_report: Any) -> None:
    assert real_report.modes[1].premature == 0


# --- the command line -----------------------------------------------------------------------


def test_cli_text_and_json(requests_file: Path, tmp_path: Path) -> None:
    config = tmp_path / "oracle.yaml"
    config.write_text("daemon:\n  schedule:\n    settle_margin: 3600\n")
    text = oracle_in_process("backtest", "--timing", str(requests_file), "--config", str(config))
    assert text.returncode == 0, text.stderr
    assert "markets: 5 replayed of 5 rows" in text.stdout
    assert "windows: question 2, metadata 1, default 2" in text.stdout
    assert "settle_margin 1 h" in text.stdout
    assert "premature proposals" in text.stdout
    empty = tmp_path / "empty.yaml"
    empty.write_text("")
    options = ("--mode", "known", "--format", "json", "--config", str(empty))
    as_json = oracle_in_process("backtest", "--timing", str(requests_file), *options)
    assert as_json.returncode == 0, as_json.stderr
    document = json.loads(as_json.stdout)
    assert list(document["modes"]) == ["known"]
    assert document["params"] == ScheduleParams().model_dump()
    known = document["modes"]["known"]
    assert (known["proposals"], known["to_person"], known["runs"]["max"]) == (3, 2, 6)


def test_cli_errors_exit_2(requests_file: Path, tmp_path: Path) -> None:
    bad_config = tmp_path / "oracle.yaml"
    bad_config.write_text("daemon:\n  schedule:\n    grace: -1\n")
    not_a_list = tmp_path / "object.json"
    not_a_list.write_text("{}")
    cases = {
        ("backtest", "--timing", str(tmp_path / "absent.json.gz")): "no such file",
        ("backtest", "--timing", str(not_a_list)): "expected a JSON list of requests",
        ("backtest",): "expected DIR (recorded answers) or --timing FILE",
        ("backtest", str(tmp_path), "--timing", str(requests_file)): "not both",
        ("backtest", "--timing", str(requests_file), "--thresholds", "0.8"): "only with DIR",
        ("backtest", str(tmp_path), "--mode", "known"): "--mode applies to --timing FILE",
        (
            "backtest",
            "--timing",
            str(requests_file),
            "--config",
            str(bad_config),
        ): "daemon.schedule.grace",
    }
    for args, message in cases.items():
        outcome = oracle_in_process(*args)
        assert outcome.returncode == 2, args
        assert outcome.stderr.startswith("error: "), args
        assert message in outcome.stderr, (args, outcome.stderr)
