"""The bundled backtest set (oracle/examples/backtest/): what its generator writes, shipped
with the package, and `oracle backtest` on it shows the failure modes it holds."""

from __future__ import annotations

import asyncio
import fnmatch
import functools
import importlib.util
import json
import tomllib
from pathlib import Path

from oracle.agents.replay import ReplayAgent
from oracle.backtest import Recording, load_recordings, run_backtest
from oracle.core import ConsensusParams, SourceThresholds, evaluate
from oracle.core.debate import StopReason, Topology
from oracle.daemon.debate import DebateOutcome, run_debate
from oracle.daemon.research import AgentPool
from tests.commands import oracle_in_process

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
    on_disk = {
        str(path.relative_to(SET)): path.read_text(encoding="utf-8") for path in SET.rglob("*.json")
    }
    assert sorted(on_disk) == sorted(expected), "run: .venv/bin/python scripts/make_backtest_set.py"
    for name, text in expected.items():
        assert on_disk[name] == text, f"{name}: run .venv/bin/python scripts/make_backtest_set.py"
    assert make_backtest_set.main(["--check"]) == 0


def test_the_set_is_package_data() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"
    ]["oracle"]
    paths = list(SET.rglob("*.json"))
    assert any(path.parent.name == "round-1" for path in paths)
    for path in paths:
        relative = str(path.relative_to(ROOT / "oracle"))
        assert any(fnmatch.fnmatch(relative, p) for p in patterns), relative


def test_oracle_backtest_runs_on_the_bundled_set() -> None:
    text = oracle_in_process("backtest", str(SET))
    assert text.returncode == 0, text.stderr
    assert text.stdout.startswith("markets: 50  (threshold 0.67, min_confidence 0.5)\n")
    as_json = oracle_in_process("backtest", str(SET), "--format", "json")
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
    assert kinds == {
        *("clear", "herding", "too-early", "multi", "outage"),
        *(f"contested-{k}" for k in ("evidence", "herding", "misled", "stalemate")),
    }
    default, strict = ConsensusParams(), ConsensusParams(threshold=0.8)
    thresholds = SourceThresholds()
    for name, recording in recordings.items():
        verdict = evaluate(recording.consensus_input, default, thresholds)
        if name.split("-", 1)[1] == "herding.json":
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
        elif "contested" in name:
            assert verdict.action == "review", name
            assert "no_consensus" in verdict.review_codes, name
    report = run_backtest(list(recordings.values()), default, thresholds, (0.67,), (0.5,))
    assert report.policy.research_again == sum("too-early" in n for n in recordings)


def test_the_docs_show_the_current_report_and_sweep() -> None:
    shown = oracle_in_process(
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
    run = oracle_in_process("backtest", str(SET), "--reputation", "--format", "json")
    assert run.returncode == 0, run.stderr
    report = json.loads(run.stdout)
    assert report["reputation_policy"]["markets"] == 50
    assert len(report["reputation_sweep"]) == len(report["sweep"])
    multipliers = {r["agent_id"]: r["multiplier"] for r in report["reputations"]}
    assert set(multipliers) == {f"{f}-researcher" for f in ("claude", "gpt", "gemini", "llama")}
    assert all(0.5 <= m <= 1.5 for m in multipliers.values())
    # The confidently wrong agent ends with the lowest weight.
    assert min(multipliers, key=multipliers.__getitem__) == "llama-researcher"
    plain = oracle_in_process("backtest", str(SET), "--format", "json")
    assert json.loads(plain.stdout)["reputation_policy"] is None
    shown = oracle_in_process(
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


@functools.cache
def _replay(agent: str) -> ReplayAgent:
    return ReplayAgent(agent, SET)  # reading the set once per agent, not per debate


@functools.cache
def _recordings() -> dict[str, Recording]:
    return {r.name: r for r in load_recordings(SET)}


def _debate(name: str, topology: Topology) -> DebateOutcome:
    """The daemon's debate on one bundled recording, its agents replaying the set."""
    recording = _recordings()[name]
    params = ConsensusParams(conflict_resolution="debate", debate={"topology": topology})  # type: ignore[arg-type]
    first = evaluate(recording.consensus_input, params, SourceThresholds())
    agents = [_replay(r.agent_id) for r in recording.consensus_input.results]
    pool = AgentPool.of(agents, params.agent_timeout)
    return asyncio.run(
        run_debate(pool, recording.consensus_input, first, params, SourceThresholds())
    )


def test_the_contested_markets_debate_as_they_are_there_for() -> None:
    finals = {name: r.final_outcome for name, r in _recordings().items()}
    contested = sorted(n for n in finals if "contested" in n)
    assert len(contested) == 10
    for name in contested:
        kind = name.split("-", 2)[2].removesuffix(".json")
        for topology in Topology:
            debate = _debate(name, topology)
            if kind == "herding":
                # Talked over without evidence: marked, not counted; a person decides.
                assert debate.result.action == "review", (name, topology)
                assert all(not flip.supported for flip in debate.flips), (name, topology)
                assert all(flip.after != finals[name] for flip in debate.flips)
            elif kind == "stalemate":
                assert debate.result.action == "review", (name, topology)
                assert debate.flips == (), (name, topology)
                assert debate.stop == StopReason.STALLED, (name, topology)
            elif topology == Topology.ALL_TO_ALL:
                # Every wrong agent hears the other side: the one with new sources moves.
                (flip,) = debate.flips
                assert flip.supported, name
                assert debate.result.action == "submit", name
                right = debate.result.outcome == finals[name]
                assert right is (kind == "evidence"), name
        if kind == "herding":
            assert _debate(name, Topology.ALL_TO_ALL).record["unsupported_flips"], name


def test_another_seed_draws_another_set_of_the_same_kinds(tmp_path: Path) -> None:
    out = tmp_path / "set"
    assert make_backtest_set.main(["--seed", "7", "--out", str(out)]) == 0

    def kinds(directory: Path) -> list[str]:
        return sorted(p.name.split("-", 1)[1] for p in directory.glob("*.json"))

    assert kinds(out) == kinds(SET)
    drawn = {p.name: p.read_text() for p in out.glob("*.json")}
    assert drawn != {p.name: p.read_text() for p in SET.glob("*.json")}
    assert set(drawn) >= {p.name for p in out.glob("debate/round-3/*.json")} != set()
    assert make_backtest_set.main(["--seed", "x", "--out", str(out)]) == 2
    assert make_backtest_set.main(["--seed", "7", "--out", str(SET)]) == 2
    assert make_backtest_set.main(["--out"]) == 2
