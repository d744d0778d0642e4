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
