"""The live accuracy ledger through its real paths: the daemon (HTTP venue, replay agents,
a person's review decision) records each final outcome with how it became final, and
`oracle accuracy` reports the scores from that database."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from oracle.app import assemble, open_store
from oracle.config import Settings
from oracle.core.lifecycle import MarketState
from oracle.core.scoring import DisputeEnd, Finality
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketRef, Receipt, Resolution, ResolutionStatus
from oracle.daemon.settings import MetricsSettings
from oracle.errors import StoreError
from oracle.store.engine import make_engine
from oracle.store.migrate import upgrade
from tests.commands import one_error_line, run_oracle
from tests.daemon.test_pipeline import Venue, recordings, run, serve, settings_for, venue_markets

NOW = 1_000.0


@dataclass
class ScriptedVenue:
    """A venue whose answers are accepted with a window, and which says of each market
    what the test sets (default: proposed, window running)."""

    said: dict[str, Resolution] = field(default_factory=dict)
    proposed: list[tuple[str, str]] = field(default_factory=list)

    async def start(self) -> None:
        return None

    async def propose(self, market: MarketRef, outcome: str, proof_checksum: str) -> Receipt:
        self.proposed.append((market.market_id, outcome))
        return Receipt(reference=f"tx-{market.market_id}", final_after=NOW - 100)

    async def state(self, market: MarketRef) -> Resolution:
        return self.said.get(market.market_id, Resolution(ResolutionStatus.PROPOSED))

    async def settle(self, market: MarketRef) -> str | None:
        return None

    async def aclose(self) -> None:
        return None


def ledger_scenario(database_url: str, tmp_path: Path) -> Settings:
    """`agree` is auto-submitted (YES), disputed, and UMA settles NO; `contest` goes to
    review, alice decides NO, and it becomes final by time."""
    replays = recordings(tmp_path / "replays")
    venue_side = ScriptedVenue()

    async def scenario() -> Settings:
        async with serve(Venue(venue_markets()[:2])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            assembly = assemble(settings, extra_resolvers={"venue": venue_side}, clock=lambda: NOW)
            daemon, store = assembly.daemon, assembly.daemon.store
            try:
                await daemon.run_once()
                [item] = store.reviews()
                store.decide_review(item.id, "NO", "the official record says no", "alice")
                await daemon.run_once()
                venue_side.said["venue:agree"] = Resolution(ResolutionStatus.DISPUTED)
                venue_side.said["venue:contest"] = Resolution(ResolutionStatus.FINAL)
                assert await daemon.watch() == 2
                venue_side.said["venue:agree"] = Resolution(
                    ResolutionStatus.FINAL, "NO", finality=Finality.UMA_SETTLEMENT
                )
                assert await daemon.watch() == 1
            finally:
                await assembly.close()
            return settings

    settings: Settings = run(scenario)
    assert venue_side.proposed == [("venue:agree", "YES"), ("venue:contest", "NO")]
    return settings


def test_final_outcomes_are_stored_with_how_they_became_final(
    database_url: str, tmp_path: Path
) -> None:
    settings = ledger_scenario(database_url, tmp_path)
    store = open_store(settings)
    try:
        agree = store.final_outcome("venue:agree")
        contest = store.final_outcome("venue:contest")
        assert agree is not None
        assert contest is not None
        assert (agree.outcome, agree.finality, agree.delivered_outcome) == (
            "NO",
            "uma-settlement",
            "YES",
        )
        assert (contest.outcome, contest.finality, contest.delivered_outcome) == (
            "NO",
            "time",
            "NO",
        )
        assert agree.final_at == NOW
        assert agree.venue == "venue"
        assert store.get_market("venue:agree").state == MarketState.FINAL
        scored = {m.market_id: m for m in store.scored_markets()}
        assert scored["venue:agree"].answered_by == "policy"
        assert scored["venue:agree"].verdict == "submit"
        assert scored["venue:contest"].answered_by == "person"
        assert scored["venue:contest"].verdict == "review"
        assert {f.agent_id for f in scored["venue:agree"].forecasts} == {"alpha", "beta", "gamma"}
        [dispute] = store.disagreements()
        assert (dispute.market_id, dispute.ours, dispute.theirs, dispute.ended) == (
            "venue:agree",
            "YES",
            "NO",
            DisputeEnd.OVERTURNED,
        )
        assert store.scored_markets(since=NOW + 1) == []
        assert store.scored_markets(venue="elsewhere") == []
        # A person corrects an outcome; a wrong one is refused, naming the choices.
        with pytest.raises(StoreError, match=r"'MAYBE' is not one of .*: YES, NO, INVALID"):
            store.record_final_outcome("venue:contest", "MAYBE", recorded_by="bob", reason="x")
        store.record_final_outcome("venue:contest", "INVALID", recorded_by="bob", reason="void")
        corrected = store.final_outcome("venue:contest")
        assert corrected is not None
        assert (corrected.outcome, corrected.finality, corrected.recorded_by) == (
            "INVALID",
            "person",
            "bob",
        )
    finally:
        store.engine.dispose()


def write_config(tmp_path: Path, settings: Settings) -> Path:
    config = tmp_path / "oracle.yaml"
    config.write_text(yaml.safe_dump({"database": {"url": settings.database.url}}))
    return config


def test_oracle_accuracy_reports_the_ledger(tmp_path: Path) -> None:
    settings = ledger_scenario(f"sqlite:///{tmp_path / 'oracle.db'}", tmp_path)
    config = str(write_config(tmp_path, settings))
    text = run_oracle("accuracy", "--config", config)
    assert text.returncode == 0, text.stderr
    assert "markets with a final outcome: 2  (final by: time 1, uma-settlement 1)" in text.stdout
    assert "auto-submitted: 1  accuracy 0.0%  (0 right, 1 wrong)" in text.stdout
    assert "decided by a person: 1  accuracy 100.0%" in text.stdout
    assert "disputes: 1  (answer stood 0, overturned 1, reopened 0, open 0)" in text.stdout

    as_json = run_oracle("accuracy", "--config", config, "--json")
    assert as_json.returncode == 0, as_json.stderr
    report = json.loads(as_json.stdout)
    policy = report["policy"]
    assert (policy["markets"], policy["auto_submitted"], policy["wrong_submissions"]) == (2, 1, 1)
    assert (policy["review_rate"], policy["wrong_submission_rate"]) == (0.5, 0.5)
    agents = {a["name"]: a for a in report["agents"]}
    # Both final NO. agree: alpha YES 0.9, beta YES 0.85, gamma NO 0.6;
    # contest: alpha YES 0.7, beta NO 0.7, gamma UNDETERMINED.
    assert agents["alpha"]["brier"] == pytest.approx((0.81 + 0.49) / 2)
    assert agents["beta"]["brier"] == pytest.approx((0.7225 + 0.09) / 2)
    assert agents["gamma"]["brier"] == pytest.approx((0.16 + 0.25) / 2)
    assert (agents["gamma"]["definite"], agents["gamma"]["accuracy"]) == (1, 1.0)
    assert report["disagreements"]["overturned"] == 1

    later = run_oracle("accuracy", "--config", config, "--json", "--since", "1970-01-01T00:20Z")
    assert json.loads(later.stdout)["policy"]["markets"] == 0
    earlier = run_oracle("accuracy", "--config", config, "--json", "--since", "1970-01-01")
    assert json.loads(earlier.stdout)["policy"]["markets"] == 2
    elsewhere = run_oracle("accuracy", "--config", config, "--json", "--venue", "elsewhere")
    assert json.loads(elsewhere.stdout)["policy"]["markets"] == 0

    recorded = run_oracle(
        "accuracy",
        "record",
        "venue:agree",
        "--outcome",
        "YES",
        "--reason",
        "the venue's page",
        "--by",
        "carol",
        "--config",
        config,
    )
    assert recorded.returncode == 0, recorded.stderr
    after = json.loads(run_oracle("accuracy", "--config", config, "--json").stdout)
    assert after["policy"]["auto_accuracy"] == 1.0
    assert after["policy"]["by_finality"] == {"person": 1, "time": 1}


def test_oracle_accuracy_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    settings = Settings(database={"url": f"sqlite:///{tmp_path / 'oracle.db'}"})
    config = str(write_config(tmp_path, settings))
    assert "no database at" in one_error_line(run_oracle("accuracy", "--config", config))
    engine = make_engine(settings.database.url, set_wal=False)
    upgrade(engine)
    engine.dispose()
    assert one_error_line(run_oracle("accuracy", "--config", config, "--since", "yesterday")) == (
        "--since: expected a date (2026-11-01), a time (2026-11-01T12:00Z) or 7d/24h, "
        "got 'yesterday'"
    )
    empty = run_oracle("accuracy", "--config", config)
    assert empty.returncode == 0, empty.stderr
    assert "markets with a final outcome: 0" in empty.stdout
    assert (
        one_error_line(
            run_oracle(
                "accuracy",
                "record",
                "nope",
                "--outcome",
                "YES",
                "--reason",
                "r",
                "--config",
                config,
            )
        )
        == "market 'nope' is not known"
    )


def test_housekeeping_exports_the_rolling_figures_and_their_bounds(tmp_path: Path) -> None:
    settings = ledger_scenario(f"sqlite:///{tmp_path / 'oracle.db'}", tmp_path)
    settings = settings.model_copy(
        update={
            "metrics": MetricsSettings(
                enabled=False,
                accuracy_min_answers=2,
                accuracy_refresh_interval=600,
                auto_submitted_accuracy_min=0.95,
                agent_brier_max=0.3,
            )
        }
    )
    metrics = DaemonMetrics()
    now = [NOW + 60]

    def sample(name: str, **labels: str) -> float | None:
        return metrics.registry.get_sample_value(name, labels)

    async def scenario() -> None:
        assembly = assemble(settings, metrics=metrics, clock=lambda: now[0])
        try:
            await assembly.daemon.housekeep()
            # Figures resting on fewer than 2 answers are not exported: one auto-submission.
            assert sample("oracle_auto_submitted_final", window="7d") == 1
            assert sample("oracle_auto_submitted_accuracy", window="7d") is None
            assert sample("oracle_agent_scored_answers", agent="alpha", window="30d") == 2
            assert sample("oracle_agent_brier", agent="alpha", window="7d") == pytest.approx(
                (0.81 + 0.49) / 2
            )
            assert sample("oracle_agent_brier", agent="gamma", window="30d") == pytest.approx(
                (0.16 + 0.25) / 2
            )
            assert sample("oracle_auto_submitted_accuracy_min") == 0.95
            assert sample("oracle_agent_brier_max") == 0.3
            # A person records `contest` as INVALID: its answers can no longer be scored,
            # which shows at the next refresh, not before.
            assembly.daemon.store.record_final_outcome(
                "venue:contest", "INVALID", recorded_by="bob", reason="voided"
            )
            now[0] += 300
            await assembly.daemon.housekeep()
            assert sample("oracle_agent_brier", agent="alpha", window="7d") is not None
            now[0] += 300
            await assembly.daemon.housekeep()
            assert sample("oracle_agent_brier", agent="alpha", window="7d") is None
            assert sample("oracle_agent_scored_answers", agent="alpha", window="7d") == 1
            # Eight days later the week holds nothing; the month still does.
            now[0] += 8 * 86_400
            await assembly.daemon.housekeep()
            assert sample("oracle_auto_submitted_final", window="7d") == 0
            assert sample("oracle_agent_scored_answers", agent="alpha", window="7d") is None
            assert sample("oracle_auto_submitted_final", window="30d") == 1
        finally:
            await assembly.close()

    run(scenario)


# name: (model family, the recorded agent it replays; "absent" is in no recording: it fails)
FAMILY_AGENTS = {
    "gpt-1": ("gpt", "alpha"),
    "gpt-2": ("gpt", "absent"),
    "claude-1": ("claude", "beta"),
    "llama-1": ("llama", "gamma"),
    "llama-2": ("llama", "absent"),
}


def families_scenario(tmp_path: Path) -> tuple[Settings, dict[str, str]]:
    """Both markets researched by FAMILY_AGENTS (two of them fail everywhere), answered (a
    review decided by a person) and final by time; the final outcome of each market."""
    replays = recordings(tmp_path / "replays")
    venue_side = ScriptedVenue()

    async def scenario() -> Settings:
        async with serve(Venue(venue_markets()[:2])) as venue:
            settings = settings_for(f"sqlite:///{tmp_path / 'oracle.db'}", tmp_path, venue, replays)
            agents = [
                {
                    "name": name,
                    "kind": "replay",
                    "directory": str(replays),
                    "replay_as": replay_as,
                    "model_family": family,
                }
                for name, (family, replay_as) in FAMILY_AGENTS.items()
            ]
            settings = Settings.model_validate(settings.model_dump() | {"agents": agents})
            assembly = assemble(settings, extra_resolvers={"venue": venue_side}, clock=lambda: NOW)
            daemon, store = assembly.daemon, assembly.daemon.store
            try:
                await daemon.run_once()
                for item in store.reviews():
                    store.decide_review(item.id, "NO", "the official record says no", "alice")
                await daemon.run_once()
                for market_id, _ in venue_side.proposed:
                    venue_side.said[market_id] = Resolution(ResolutionStatus.FINAL, "NO")
                assert await daemon.watch() == 2
            finally:
                await assembly.close()
            return settings

    settings: Settings = run(scenario)
    return settings, {"venue:agree": "NO", "venue:contest": "NO"}


def test_oracle_accuracy_counts_answers_and_failures_per_agent_and_family(
    tmp_path: Path,
) -> None:
    """A failed agent counts under its own name and its own model family, never under an
    unknown one; the figures are counted here from the recordings and the configuration."""
    settings, finals = families_scenario(tmp_path)
    recorded: dict[str, dict[str, tuple[str, float]]] = {
        "venue:agree": {"alpha": ("YES", 0.9), "beta": ("YES", 0.85), "gamma": ("NO", 0.6)},
        "venue:contest": {
            "alpha": ("YES", 0.7),
            "beta": ("NO", 0.7),
            "gamma": ("UNDETERMINED", 0.5),
        },
    }
    expected: dict[str, dict[str, dict[str, int]]] = {"agents": {}, "families": {}}
    for name, (family, replay_as) in FAMILY_AGENTS.items():
        for group, key in (("agents", name), ("families", family)):
            counts = expected[group].setdefault(key, {"answers": 0, "failures": 0, "right": 0})
            for market_id, final in finals.items():
                answer = recorded[market_id].get(replay_as)
                if answer is None:
                    counts["failures"] += 1
                else:
                    counts["answers"] += 1
                    counts["right"] += answer[0] == final
    report = run_oracle("accuracy", "--config", str(write_config(tmp_path, settings)), "--json")
    assert report.returncode == 0, report.stderr
    figures = json.loads(report.stdout)
    for group in ("agents", "families"):
        reported = {
            row["name"]: {
                "answers": row["answers"],
                "failures": row["failures"],
                "right": row["right"],
            }
            for row in figures[group]
        }
        assert reported == expected[group], group
    assert expected["families"]["llama"]["failures"] == 2  # the case that went missing
