"""The bundled backtest set (oracle/examples/backtest/): what its generator writes, shipped
with the package, and `oracle backtest` on it shows the failure modes it holds."""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import tomllib
from pathlib import Path

from oracle.backtest import load_recordings, run_backtest
from oracle.core import ConsensusParams, SourceThresholds, evaluate
from tests.agents.test_backtest import oracle

ROOT = Path(__file__).resolve().parents[2]
SET = ROOT / "oracle" / "examples" / "backtest"
_spec = importlib.util.spec_from_file_location(
    "make_backtest_set", ROOT / "scripts" / "make_backtest_set.py"
)
assert _spec is not None
assert _spec.loader is not None
make_backtest_set = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make_backtest_set)


def test_the_committed_set_is_what_the_generator_writes() -> None:
    expected = {
        name: make_backtest_set.render(document)
        for name, document in make_backtest_set.recordings().items()
    }
    on_disk = {path.name: path.read_text(encoding="utf-8") for path in SET.glob("*.json")}
    assert sorted(on_disk) == sorted(expected), "run: .venv/bin/python scripts/make_backtest_set.py"
    for name, text in expected.items():
        assert on_disk[name] == text, f"{name}: run .venv/bin/python scripts/make_backtest_set.py"
    assert make_backtest_set.main(["--check"]) == 0


def test_the_set_is_package_data() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["oracle"]
    for path in SET.glob("*.json"):
        relative = str(path.relative_to(ROOT / "oracle"))
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative


def test_oracle_backtest_runs_on_the_bundled_set() -> None:
    text = oracle("backtest", str(SET))
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("markets: 40  (threshold 0.67, min_confidence 0.5)\n")
    as_json = oracle("backtest", str(SET), "--format", "json")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    families = {f["name"]: f for f in report["families"]}
    assert set(families) == {"claude", "gpt", "gemini", "llama"}
    # The confidently wrong family scores worst on every measure.
    worst = max(families.values(), key=lambda f: f["brier"])
    assert worst["name"] == "llama"
    assert worst["log_loss"] == max(f["log_loss"] for f in families.values())
    assert worst["definite_accuracy"] == min(f["definite_accuracy"] for f in families.values())
    sweep = {(s["threshold"], s["min_confidence"]): s for s in report["sweep"]}
    # A stricter threshold trades coverage for fewer wrong answers on-chain.
    assert sweep[(0.67, 0.5)]["wrong"] > sweep[(0.8, 0.5)]["wrong"]
    assert sweep[(0.67, 0.5)]["coverage"] > sweep[(0.8, 0.5)]["coverage"]


def test_each_failure_mode_does_what_it_is_there_for() -> None:
    recordings = {r.name: r for r in load_recordings(SET)}
    kinds = {name.split("-", 1)[1].removesuffix(".json") for name in recordings}
    assert kinds == {"clear", "herding", "too-early", "multi", "outage"}
    default, strict = ConsensusParams(), ConsensusParams(threshold=0.8)
    thresholds = SourceThresholds()
    for name, recording in recordings.items():
        verdict = evaluate(recording.consensus_input, default, thresholds)
        if "herding" in name:
            # Three agents on one wrong report agree: submitted wrong by default, and the
            # overlap check does not see it (the fourth agent's sources are its own).
            assert verdict.action == "submit", name
            assert verdict.outcome != recording.final_outcome, name
            assert verdict.overlap.average <= default.max_source_overlap, name
            strict_verdict = evaluate(recording.consensus_input, strict, thresholds)
            assert strict_verdict.action == "review", name
        elif "too-early" in name:
            assert verdict.action == "research_again", name
        elif "outage" in name:
            assert recording.consensus_input.failures, name
        elif "multi" in name:
            assert len(recording.consensus_input.market.outcomes) == 3, name
    report = run_backtest(list(recordings.values()), default, thresholds, (0.67,), (0.5,))
    assert report.policy.research_again == sum("too-early" in n for n in recordings)


def test_the_docs_show_the_current_report_and_sweep() -> None:
    shown = oracle(
        "backtest",
        str(SET),
        "--thresholds",
        "0.67,0.75,0.8,1",
        "--min-confidences",
        "0.5,0.8,0.9",
    )
    assert shown.returncode == 0, shown.stderr
    docs = (ROOT / "docs" / "backtest.md").read_text(encoding="utf-8")
    assert f"```\n{shown.stdout}```" in docs, "docs/backtest.md shows an outdated report"


def test_reputation_weights_are_measured_against_plain_weights() -> None:
    run = oracle("backtest", str(SET), "--reputation", "--format", "json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["reputation_policy"]["markets"] == 40
    assert len(report["reputation_sweep"]) == len(report["sweep"])
    multipliers = {r["agent_id"]: r["multiplier"] for r in report["reputations"]}
    assert set(multipliers) == {f"{f}-researcher" for f in ("claude", "gpt", "gemini", "llama")}
    assert all(0.5 <= m <= 1.5 for m in multipliers.values())
    # The confidently wrong agent ends with the lowest weight.
    assert min(multipliers, key=multipliers.__getitem__) == "llama-researcher"
    plain = oracle("backtest", str(SET), "--format", "json")
    assert json.loads(plain.stdout)["reputation_policy"] is None
    shown = oracle(
        "backtest",
        str(SET),
        "--reputation",
        "--thresholds",
        "0.67,0.75,0.8",
        "--min-confidences",
        "0.5",
    )
    docs = (ROOT / "docs" / "backtest.md").read_text(encoding="utf-8")
    section = shown.stdout[shown.stdout.index("with reputation weights") :]
    assert f"```\n{section}```" in docs, "docs/backtest.md shows an outdated comparison"
