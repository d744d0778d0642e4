"""`oracle_market_attention_timestamp_seconds`: one series per market awaiting a person,
with what an alert about it shows (deploy/prometheus/rules.yml, deploy/alertmanager)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from oracle.app import assemble
from oracle.core.lifecycle import MarketState
from oracle.daemon.metrics import ATTENTION_LIMIT, LABEL_MAX, DaemonMetrics
from oracle.daemon.ports import MarketRef, Resolution, ResolutionStatus
from oracle.daemon.service import proof_directory
from oracle.store.tables import MarketRow
from tests.daemon.test_pipeline import (
    Venue,
    one_pass,
    recordings,
    run,
    serve,
    settings_for,
    venue_markets,
)

METRIC = "oracle_market_attention_timestamp_seconds"


def attention(metrics: DaemonMetrics) -> list[tuple[dict[str, str], float]]:
    return [
        (sample.labels, sample.value)
        for family in metrics.registry.collect()
        if family.name == METRIC
        for sample in family.samples
    ]


def test_an_open_review_item_shows_its_market_question_answers_and_proof(
    database_url: str, tmp_path: Path
) -> None:
    replays = recordings(tmp_path / "replays")
    metrics = DaemonMetrics()

    async def scenario() -> list[Any]:
        async with serve(Venue(venue_markets()[1:2])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            await one_pass(settings, metrics)
            shown = attention(metrics)
            assembly = assemble(settings)
            [item] = assembly.daemon.store.reviews()
            consensus = assembly.daemon.store.latest_consensus("venue:contest")
            assembly.daemon.store.decide_review(item.id, "NO", "the record says no", "alice")
            await assembly.close()
            await one_pass(settings, metrics)
            return [shown, item, consensus, attention(metrics)]

    shown, item, consensus, after = run(scenario)
    [(labels, since)] = shown
    assert since == item.created_at
    assert labels == {
        "market": "venue:contest",
        "venue": "venue",
        "reason": "review",
        "question": "Did B happen?",
        "answer": consensus.proof["verdict"]["leading_outcome"],
        "answers": "YES: alpha; NO: beta; UNDETERMINED: gamma",
        "review": str(item.id),
        "proof": f"venue_contest/{consensus.checksum}",
    }
    assert (tmp_path / "proofs" / f"{labels['proof']}.md").is_file()
    assert after == []  # decided: nobody is waited for any more


def test_the_series_are_bounded_and_their_labels_short() -> None:
    metrics = DaemonMetrics()
    long_question = "Will it? " * 100
    metrics.show_attention(
        {"market": f"m{i}", "reason": "review", "question": long_question, "since": float(i)}
        for i in range(ATTENTION_LIMIT + 50)
    )
    shown = attention(metrics)
    assert len(shown) == ATTENTION_LIMIT
    assert min(value for _, value in shown) == 0  # the oldest are kept
    for labels, _ in shown:
        assert len(labels["question"]) == LABEL_MAX
        assert "\n" not in labels["question"]
    metrics.show_attention([])
    assert attention(metrics) == []


def test_the_proof_directory_is_where_the_daemon_writes_proofs() -> None:
    assert proof_directory("venue:contest") == "venue_contest"
    assert proof_directory("chain:0xAb/1") == "chain_0xAb_1"


def test_a_disputed_answer_shows_the_answer_given_and_its_proof(
    database_url: str, tmp_path: Path
) -> None:
    """The venue reports the delivered answer disputed: the watch job moves the market to
    `disputed`, and housekeeping shows it until the arbiter settles."""
    replays = recordings(tmp_path / "replays")
    metrics = DaemonMetrics()

    class Disputing:
        """The venue's resolver, except that every answer it holds is disputed."""

        def __init__(self, resolver: Any) -> None:
            self.resolver = resolver

        def __getattr__(self, name: str) -> Any:
            return getattr(self.resolver, name)

        async def state(self, market: MarketRef) -> Resolution:
            return Resolution(ResolutionStatus.DISPUTED)

    async def scenario() -> tuple[list[Any], MarketRow]:
        async with serve(Venue(venue_markets()[:1])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            assembly = assemble(settings, metrics=metrics, clock=lambda: 1_000.0)
            daemon = assembly.daemon
            try:
                daemon.resolvers["venue"] = Disputing(daemon.resolvers["venue"])  # type: ignore[assignment]
                await daemon.run_once()
                return attention(metrics), daemon.store.get_market("venue:agree")
            finally:
                await assembly.close()

    shown, row = run(scenario)
    assert row.state == MarketState.DISPUTED
    [(labels, since)] = shown
    assert since == row.state_changed_at
    assert labels == {
        "market": "venue:agree",
        "venue": "venue",
        "reason": "disputed",
        "question": "Did A happen?",
        "answer": "YES",
        "answers": "YES: alpha, beta; NO: gamma",
        "review": "",
        "proof": f"venue_agree/{row.proof_checksum}",
    }
    assert (tmp_path / "proofs" / f"{labels['proof']}.json").is_file()
