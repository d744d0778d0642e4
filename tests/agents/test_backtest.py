"""`oracle backtest`: recorded answers with known outcomes through consensus and policy."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from oracle.backtest import (
    brier,
    contradicts,
    load_recordings,
    run_backtest,
    run_second_opinion,
    second_opinion_figures,
)
from oracle.core import ConsensusParams, SourceThresholds
from oracle.core.consensus import evaluate
from oracle.core.models import AgentResult
from oracle.errors import InputError
from oracle.testing import consensus_document, result, result_dict, source_dicts

from ..commands import oracle_in_process


def vote(agent: str, outcome: str, confidence: float, family: str) -> dict[str, Any]:
    return {**result_dict(agent, outcome, confidence), "model_family": family}


def write(
    directory: Path, name: str, votes: list[dict[str, Any]], final: str, **failures: str
) -> None:
    document = consensus_document(
        votes, market_id=name, failures=[{"agent_id": a, "error": e} for a, e in failures.items()]
    )
    (directory / f"{name}.json").write_text(json.dumps({**document, "final_outcome": final}))


@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    # m1: unanimous, confident, right.  m2: unanimous, confident, WRONG.
    # m3: 2 of 3 at middling confidence (0.65), right.  m4: split: review.
    write(
        tmp_path,
        "m1",
        [
            vote("gpt", "YES", 0.95, "gpt"),
            vote("claude", "YES", 0.9, "claude"),
            vote("llama", "YES", 0.9, "llama"),
        ],
        "YES",
    )
    write(
        tmp_path,
        "m2",
        [
            vote("gpt", "YES", 0.9, "gpt"),
            vote("claude", "YES", 0.9, "claude"),
            vote("llama", "YES", 0.9, "llama"),
        ],
        "NO",
    )
    write(
        tmp_path,
        "m3",
        [
            vote("gpt", "NO", 0.65, "gpt"),
            vote("claude", "NO", 0.65, "claude"),
            vote("llama", "YES", 0.6, "llama"),
        ],
        "NO",
    )
    write(
        tmp_path,
        "m4",
        [vote("gpt", "YES", 0.8, "gpt"), vote("claude", "NO", 0.8, "claude")],
        "NO",
        llama="timed out",
    )
    return tmp_path


def test_brier_scores() -> None:
    outcomes = ("YES", "NO")
    assert brier(result("a", "YES", 1.0), outcomes, "YES") == 0.0
    assert brier(result("a", "YES", 1.0), outcomes, "NO") == 1.0
    assert brier(result("a", "YES", 0.8), outcomes, "YES") == pytest.approx(0.04)
    assert brier(result("a", "UNDETERMINED", 0.9), outcomes, "NO") == pytest.approx(0.25)
    three = ("A", "B", "C")
    answer = AgentResult.model_validate({**result_dict("a", "A", 0.6), "outcome": "A"})
    assert brier(answer, three, "A") == pytest.approx(((0.4) ** 2 + 2 * 0.2**2) / 2)


def test_policy_figures_and_forecasters(recordings: Path) -> None:
    report = run_backtest(
        load_recordings(recordings), ConsensusParams(), SourceThresholds(), (0.67, 1.0), (0.5, 0.7)
    )
    p = report.policy
    assert (p.markets, p.submitted, p.correct, p.wrong, p.reviewed) == (4, 3, 2, 1, 1)
    assert p.coverage == 0.75
    assert p.accuracy == pytest.approx(2 / 3)
    assert p.wrong_submission_rate == 0.25
    agents = {a.name: a for a in report.agents}
    assert agents["llama"].failures == 1
    assert agents["llama"].answers == 3
    assert agents["gpt"].brier == pytest.approx((0.05**2 + 0.9**2 + 0.35**2 + 0.8**2) / 4)
    assert {f.name for f in report.families} == {"gpt", "claude", "llama"}
    sweep = {(s.threshold, s.min_confidence): s for s in report.sweep}
    assert len(sweep) == 4
    assert sweep[(0.67, 0.7)].submitted == 2  # m3 (0.65) now goes to review
    assert sweep[(1.0, 0.5)].submitted == 2  # m3 was 2 of 3, not unanimous


def test_bad_recordings_are_named(tmp_path: Path) -> None:
    write(tmp_path, "m1", [vote("a", "YES", 0.9, "gpt")], "MAYBE")
    with pytest.raises(
        InputError, match=r"^m1\.json: final_outcome: must be one of YES, NO \(got 'MAYBE'\)$"
    ):
        load_recordings(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(InputError, match=r"empty: no \*\.json recordings"):
        load_recordings(empty)


def test_cli_text_and_json(recordings: Path) -> None:
    text = oracle_in_process(
        "backtest", str(recordings), "--thresholds", "0.67,1", "--min-confidences", "0.5"
    )
    assert text.returncode == 0, text.stderr
    assert "coverage 75.0%" in text.stdout
    assert "accuracy of auto-submitted answers: 66.7%  (2 right, 1 wrong)" in text.stdout
    assert "wrong-submission rate: 25.0% of all markets" in text.stdout
    assert "threshold  min_confidence  coverage  accuracy  wrong-submission rate" in text.stdout
    as_json = oracle_in_process("backtest", str(recordings), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    document = json.loads(as_json.stdout)
    assert document["policy"]["wrong_submission_rate"] == 0.25
    assert len(document["sweep"]) == 30
    assert {a["name"] for a in document["agents"]} == {"gpt", "claude", "llama"}


def test_cli_errors_exit_2(recordings: Path, tmp_path: Path) -> None:
    bad = oracle_in_process("backtest", str(recordings), "--thresholds", "0.4")
    assert bad.returncode == 2
    assert bad.stderr.startswith("error: sweep: consensus.threshold: must be between 0.5 and 1")
    missing = oracle_in_process("backtest", str(tmp_path / "nope"))
    assert missing.returncode == 2
    assert "not a directory" in missing.stderr


def test_config_check_warns_about_model_families(tmp_path: Path) -> None:
    config = tmp_path / "oracle.yaml"
    config.write_text(
        # A source too, so that the families are the one thing to warn about.
        "market_sources:\n  - {name: v, kind: http, url: 'http://127.0.0.1:9/markets', "
        "result_url: 'http://127.0.0.1:9/results'}\n"
        "agents:\n"
        + "".join(
            f"  - {{name: {n}, kind: replay, directory: {tmp_path}, model_family: gpt}}\n"
            for n in ("a", "b", "c")
        )
    )
    checked = oracle_in_process("config", "check", "--config", str(config))
    assert checked.returncode == 0, checked.stderr
    assert checked.stderr == (
        "warning: consensus.min_model_families is 2 but the configured agents come from 1 "
        "model family (gpt): every consensus they reach will go to review\n"
    )
    config.write_text(
        config.read_text().replace("model_family: gpt}\n", "model_family: claude}\n", 1)
    )
    assert oracle_in_process("config", "check", "--config", str(config)).stderr == ""


def write_round(directory: Path, name: str, round_: int, revisions: list[dict[str, Any]]) -> None:
    """What the agents that change their answer answer in round `round_` of a debate."""
    rounds = directory / "debate" / f"round-{round_}"
    rounds.mkdir(parents=True, exist_ok=True)
    (rounds / f"{name}.json").write_text(json.dumps(consensus_document(revisions, market_id=name)))


@pytest.fixture
def contested(tmp_path: Path) -> Path:
    """Three conflicts (two against two) with recorded debate rounds, and a clear market.

    herd: d, sure of itself and wrong, talks b over without new evidence.
    evidence: c researches again, finds new sources and rightly changes to YES.
    misled: the same, but the new sources are wrong (the market settled NO).
    """
    report = source_dicts("report", 30)
    write(
        tmp_path,
        "clear",
        [vote("a", "YES", 0.9, "fa"), vote("b", "YES", 0.9, "fb"), vote("c", "YES", 0.8, "fc")],
        "YES",
    )
    herd = [
        vote("a", "YES", 0.7, "fa"),
        vote("b", "YES", 0.65, "fb"),
        {**result_dict("c", "NO", 0.7, shared=report), "model_family": "fc"},
        {**result_dict("d", "NO", 0.95, shared=report), "model_family": "fd"},
    ]
    write(tmp_path, "herd", herd, "YES")
    persuaded = {**herd[1], "outcome": "NO", "confidence": 0.85}
    persuaded["sources"] = [*herd[1]["sources"], *report]
    write_round(tmp_path, "herd", 1, [persuaded])
    split = [
        vote("a", "YES", 0.8, "fa"),
        vote("b", "YES", 0.8, "fb"),
        vote("c", "NO", 0.6, "fc"),
        vote("d", "NO", 0.6, "fd"),
    ]
    second_look = {**split[2], "outcome": "YES", "confidence": 0.85}
    # Read, and quoting words about the question ("Did the event happen?").
    second_look["sources"] = source_dicts("c-second-look", 50, quote="The event went ahead")
    for name, final in (("evidence", "YES"), ("misled", "NO")):
        write(tmp_path, name, split, final)
        write_round(tmp_path, name, 1, [second_look])
    return tmp_path


def test_conflict_modes_compared_through_the_cli(contested: Path) -> None:
    run = oracle_in_process("backtest", str(contested), "--format", "json")
    assert run.returncode == 0, run.stderr
    document = json.loads(run.stdout)
    modes = {
        m["mode"] + (f" ({m['topology']})" if m["topology"] else ""): m
        for m in document["conflict_modes"]
    }
    assert list(modes) == [
        "escalate",
        "majority",
        *(f"debate ({t})" for t in ("all-to-all", "round-robin", "ring", "star", "sparse")),
    ]
    figures = ("submitted", "correct", "wrong", "reviewed", "conflicts")
    escalate, majority = modes["escalate"], modes["majority"]
    policy = document["policy"]
    # escalate is today's policy; majority is the same verdicts with a proposal each.
    assert [escalate[k] for k in figures[:4]] == [policy[k] for k in figures[:4]]
    assert [escalate[k] for k in figures] == [1, 1, 0, 3, 3]
    assert [majority[k] for k in figures] == [escalate[k] for k in figures]
    assert (majority["proposed_right"], majority["proposed_wrong"]) == (1, 2)
    assert escalate["proposed_right"] is None
    everyone = modes["debate (all-to-all)"]
    # The herded flip is marked and stays uncounted: herd goes to a person. New evidence
    # settles evidence rightly and misled wrongly: debate lowers the review rate and
    # raises the wrong-submission rate.
    assert [everyone[k] for k in figures] == [3, 2, 1, 1, 3]
    assert (everyone["flips_to_right"], everyone["flips_to_wrong"]) == (1, 1)
    assert (everyone["marked_to_right"], everyone["marked_to_wrong"]) == (0, 1)
    assert everyone["review_rate"] == 0.25 < escalate["review_rate"] == 0.75
    assert everyone["wrong_submission_rate"] == 0.25 > escalate["wrong_submission_rate"] == 0
    text = oracle_in_process("backtest", str(contested))
    assert text.returncode == 0, text.stderr
    assert "conflict resolution (3 of 4 markets conflict; consensus.conflict_resolution):" in (
        text.stdout
    )
    row = next(line for line in text.stdout.splitlines() if line.startswith("debate (all-to-all)"))
    assert row.split() == [
        *("debate", "(all-to-all)", "3", "66.7%", "25.0%", "25.0%"),
        *("1", "/", "1", "0", "/", "1", "-"),
    ]


def test_without_recorded_rounds_a_debate_changes_nothing(recordings: Path) -> None:
    # m4 conflicts; nothing is recorded for a debate, so every agent keeps its answer.
    run = oracle_in_process("backtest", str(recordings), "--format", "json")
    assert run.returncode == 0, run.stderr
    modes = json.loads(run.stdout)["conflict_modes"]
    keys = ("submitted", "wrong", "reviewed", "flips_to_right", "marked_to_wrong")
    assert {tuple(m[k] for k in keys) for m in modes} == {(3, 1, 1, 0, 0)}
    assert modes[0]["conflicts"] == 1


def test_second_opinion_false_alarms_and_catches(recordings: Path) -> None:
    loaded = load_recordings(recordings)
    figures = second_opinion_figures(loaded, ConsensusParams(), SourceThresholds())
    # m1 (YES, right) and m3 (NO, right) confirm the correct proposal and contradict the
    # wrong one; m2 submits a wrong YES: it contradicts the correct NO (a false alarm) and
    # agrees with the wrong YES (missed); m4 goes to a person.
    assert (figures.correct_proposals, figures.false_alarms) == (4, 1)
    assert (figures.wrong_proposals, figures.caught, figures.caught_right) == (4, 2, 2)
    assert (figures.confirmed, figures.reviewed, figures.research_again) == (2, 1, 0)
    assert figures.false_alarm_rate == 0.25
    assert figures.catch_rate == 0.5
    # Unanimity sends m3 (2 of 3) to a person: one catch fewer, the false alarm stays.
    report = run_second_opinion(loaded, ConsensusParams(), SourceThresholds(), (1.0,), (0.5,))
    (unanimous,) = report.sweep
    assert (unanimous.threshold, unanimous.false_alarms, unanimous.caught) == (1.0, 1, 1)
    assert unanimous.reviewed == 2


def test_second_opinion_uses_the_policy_verdict(tmp_path: Path) -> None:
    """A contradiction is a `submit` verdict with another outcome: on a three-outcome market
    a confident wrong verdict contradicts the correct proposal and one of the two wrong
    ones (caught, but not with the final outcome)."""
    document = consensus_document(
        [vote(a, "B", 0.9, a) for a in ("gpt", "claude", "llama")],
        market_id="cup",
        outcomes=["A", "B", "C"],
    )
    (tmp_path / "cup.json").write_text(json.dumps({**document, "final_outcome": "A"}))
    loaded = load_recordings(tmp_path)
    verdict = evaluate(loaded[0].consensus_input, ConsensusParams(), SourceThresholds())
    assert (verdict.action, verdict.outcome) == ("submit", "B")
    assert contradicts(verdict, "A")
    assert contradicts(verdict, "C")
    assert not contradicts(verdict, "B")
    figures = second_opinion_figures(loaded, ConsensusParams(), SourceThresholds())
    assert (figures.false_alarms, figures.wrong_proposals, figures.caught) == (1, 2, 1)
    assert figures.caught_right == 0
    # Not confident enough to submit: a person looks, and nothing is contradicted.
    cautious = ConsensusParams(min_confidence=0.95)
    assert evaluate(loaded[0].consensus_input, cautious, SourceThresholds()).action == "review"
    quiet = second_opinion_figures(loaded, cautious, SourceThresholds())
    assert (quiet.false_alarms, quiet.caught, quiet.reviewed) == (0, 0, 1)


def test_cli_second_opinion_text_and_json(recordings: Path) -> None:
    plain = oracle_in_process("backtest", str(recordings))
    assert "second opinion" not in plain.stdout
    text = oracle_in_process(
        "backtest",
        str(recordings),
        "--second-opinion",
        "--thresholds",
        "0.67,1",
        "--min-confidences",
        "0.5",
    )
    assert text.returncode == 0, text.stderr
    assert (
        "false alarms: 1 of 4 correct proposals contradicted  false-alarm rate 25.0%" in text.stdout
    )
    assert (
        "caught: 2 of 4 wrong proposals contradicted  catch rate 50.0%  "
        "(2 with the final outcome)" in text.stdout
    )
    assert "        1             0.5             25.0%       25.0%" in text.stdout
    as_json = oracle_in_process("backtest", str(recordings), "--second-opinion", "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    opinion = json.loads(as_json.stdout)["second_opinion"]
    assert opinion["policy"]["false_alarm_rate"] == 0.25
    assert opinion["policy"]["catch_rate"] == 0.5
    assert len(opinion["sweep"]) == 30
    assert "second_opinion" not in json.loads(
        oracle_in_process("backtest", str(recordings), "--format", "json").stdout
    )
