"""Through the real path: `daemon.window_model` names an `llm` agent, `assemble` wires its
model (the OpenAI provider, against the local fake server) into the daemon, and the
daemon's polls store each new market with the window the model read where the venue and
the words name no time; once per market, however often the venue lists it again."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from oracle.app import assemble, open_store
from oracle.config import Settings
from oracle.core.markets import MarketSpec
from oracle.core.timetext import read_window
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import Deliver

from .fakes import Internet, serve, text

NOW = datetime(2025, 3, 1, 12, 0, tzinfo=UTC).timestamp()
HORNETS = MarketSpec(
    source="listing",
    external_id="hornets",
    question="Will the Hornets make the NBA Playoffs?",
    criteria="Resolves Yes if the Charlotte Hornets qualify for the NBA Playoffs.",
    outcomes=("Yes", "No"),
    resolve_after=NOW + 90 * 86400,
)
DATED = MarketSpec(
    source="listing",
    external_id="dated",
    question="Will the Fed cut rates by March 31, 2025?",
    resolve_after=NOW + 60 * 86400,
)
BRIEFING = MarketSpec(
    source="listing",
    external_id="briefing",
    question='Will Leavitt say "tariff" during the next White House press briefing?',
    resolve_after=NOW + 30 * 86400,
)


@dataclass
class Listing:
    """A venue that lists its markets on every poll, with no window of its own (as a UMA
    request that is event-based, or a Reality.eth question open from the start)."""

    markets: list[MarketSpec]
    name: str = "listing"

    async def start(self) -> None:
        pass

    async def poll(self, deliver: Deliver) -> list[str]:
        await deliver(list(self.markets))
        return []

    async def aclose(self) -> None:
        pass


def window_answer(**document: Any) -> dict[str, Any]:
    return text(json.dumps(document))


def settings(tmp_path: Path, internet: Internet) -> Settings:
    return Settings(
        database={"url": f"sqlite:///{tmp_path / 'oracle.db'}"},
        daemon={"proofs_dir": str(tmp_path / "proofs"), "window_model": "timekeeper"},
        metrics={"enabled": False},
        agents=[
            {
                "name": "timekeeper",
                "kind": "llm",
                "base_url": f"{internet.url}/v1",
                "model": "gpt-4.1-nano",
                "max_retries": 0,
                "request_timeout_seconds": 10,
                "search": [{"kind": "searxng", "base_url": f"{internet.url}/searx"}],
            }
        ],
    )


def test_a_new_market_whose_words_name_no_time_gets_the_window_the_model_read(
    tmp_path: Path,
) -> None:
    # The premise: the deterministic reader finds nothing in these two, and finds DATED's.
    for spec in (HORNETS, BRIEFING):
        assert read_window(f"{spec.question}\n{spec.criteria}", asked_at=NOW, outcomes=()) is None
    assert read_window(DATED.question, asked_at=NOW, outcomes=()) is not None
    internet = Internet()
    internet.openai.script = [
        window_answer(
            closes_at="2025-04-13T23:59:59-04:00",
            opens_at=None,
            early_outcomes=["YES"],
            evidence="qualify for the NBA Playoffs",
        ),
        # Words the market does not have: refused, the market keeps the default window.
        window_answer(
            closes_at="2025-03-03T13:30:00-05:00",
            opens_at="2025-03-03T13:00:00-05:00",
            early_outcomes=[],
            evidence="the briefing scheduled for Monday at 1 PM",
        ),
    ]
    listing = Listing([HORNETS, DATED])
    metrics = DaemonMetrics()

    async def scenario() -> None:
        async with serve(internet):
            assembly = assemble(
                settings(tmp_path, internet),
                extra_sources=[listing],
                metrics=metrics,
                clock=lambda: NOW,
            )
            try:
                await assembly.daemon.poll()
                await assembly.daemon.poll()  # the venue lists them again: nothing asked
                listing.markets.append(BRIEFING)
                await assembly.daemon.poll()
                await assembly.daemon.poll()
            finally:
                await assembly.close()

    asyncio.run(scenario())
    requests = internet.openai.requests
    assert len(requests) == 2  # one per market the words could not place, over four polls
    assert "Hornets" in requests[0]["messages"][1]["content"]
    assert "Leavitt" in requests[1]["messages"][1]["content"]
    first = requests[0]
    assert "Hornets" not in first["messages"][0]["content"]  # the system prompt
    assert "tools" not in first
    assert first["response_format"]["json_schema"]["strict"] is True

    store = open_store(settings(tmp_path, internet))
    try:
        hornets = store.get_market(HORNETS.market_id)
        dated = store.get_market(DATED.market_id)
        briefing = store.get_market(BRIEFING.market_id)
        discovered = store.audit(HORNETS.market_id)[0].reason
    finally:
        store.engine.dispose()
    assert hornets.answer_window == {
        "closes_at": datetime(2025, 4, 14, 3, 59, 59, tzinfo=UTC).timestamp(),
        "opens_at": None,
        "early_outcomes": ["Yes"],
        "origin": "model",
        "evidence": "qualify for the NBA Playoffs",
    }
    assert "answerable: model (qualify for the NBA Playoffs)" in discovered
    assert dated.answer_window is not None
    assert dated.answer_window["origin"] == "question"
    assert briefing.answer_window is not None
    assert briefing.answer_window["origin"] == "default"
    counted = {
        result: metrics.registry.get_sample_value("oracle_window_reads_total", {"result": result})
        for result in ("read", "evidence_not_in_text")
    }
    assert counted == {"read": 1.0, "evidence_not_in_text": 1.0}
