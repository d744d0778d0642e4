from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from oracle.agents import replay
from oracle.agents.metrics import AgentMetrics
from oracle.agents.replay import ReplayAgent
from oracle.agents.settings import ReplayAgentConfig
from oracle.app import build_agent
from oracle.core.models import ConsensusInput, Market
from oracle.daemon.research import _check
from oracle.errors import AgentError
from oracle.testing import consensus_document, result_dict


@pytest.fixture
def recordings(tmp_path: Path) -> Path:
    document = consensus_document(
        [result_dict("alpha", "YES", 0.9, 5), result_dict("beta", "NO", 0.6, 5)],
        market_id="m-7",
        question="Did it  RAIN in Paris?",
        failures=[{"agent_id": "gamma", "error": "search quota exhausted"}],
    )
    (tmp_path / "m-7.json").write_text(json.dumps(document))
    return tmp_path


def market(market_id: str = "other-id", question: str = "did it rain in paris?") -> Market:
    return Market(id=market_id, question=question)


def test_answers_by_question_text_as_itself(recordings: Path) -> None:
    agent = ReplayAgent("replayer", recordings, replay_as="alpha", model_family="claude")
    answer = asyncio.run(agent.research(market()))
    assert answer.agent_id == "replayer"
    assert answer.outcome == "YES"
    assert answer.model_family == "claude"
    assert len(answer.sources) == 5


def test_answers_by_market_id(recordings: Path) -> None:
    agent = ReplayAgent("beta", recordings)
    assert asyncio.run(agent.research(market("m-7", "unrelated"))).outcome == "NO"


def test_recorded_failure_is_replayed(recordings: Path) -> None:
    with pytest.raises(AgentError, match="search quota exhausted"):
        asyncio.run(ReplayAgent("gamma", recordings).research(market()))


def test_missing_recording_and_missing_agent(recordings: Path) -> None:
    with pytest.raises(AgentError, match="no recording for market 'x'"):
        asyncio.run(ReplayAgent("alpha", recordings).research(market("x", "Unknown?")))
    with pytest.raises(AgentError, match="has no answer from delta"):
        asyncio.run(ReplayAgent("delta", recordings).research(market()))


def test_bad_recording_is_named(tmp_path: Path) -> None:
    (tmp_path / "broken.json").write_text('{"market": {"id": "m"}, "results": []}')
    with pytest.raises(AgentError, match=r"broken\.json: market\.question: is required"):
        ReplayAgent("a", tmp_path)
    with pytest.raises(AgentError, match="is not a directory"):
        ReplayAgent("a", tmp_path / "nope")


def test_built_from_config(recordings: Path) -> None:
    agent = build_agent(
        ReplayAgentConfig(name="alpha", kind="replay", directory=recordings), AgentMetrics()
    )
    assert agent.kind == "replay"
    assert asyncio.run(agent.research(market())).outcome == "YES"


def test_a_recorded_invalid_is_replayed_and_judged_against_the_live_market(
    tmp_path: Path,
) -> None:
    """A canceled game recorded as INVALID (its market says nothing of INVALID) is
    replayed; the daemon's check then takes it where the venue does, and refuses it
    where the venue takes no INVALID."""
    document = consensus_document(
        [result_dict("alpha", "INVALID", 0.9, 5)], market_id="uma:7", question="Lakers?"
    )
    (tmp_path / "uma-7.json").write_text(json.dumps(document))
    agent = ReplayAgent("alpha", tmp_path)
    takes = Market(id="uma:7", question="Lakers?", invalid="propose")
    answer = asyncio.run(agent.research(takes))
    assert answer.outcome == "INVALID"
    assert _check(agent, takes, answer) is None
    refuses = Market(id="uma:7", question="Lakers?")
    problem = _check(agent, refuses, asyncio.run(agent.research(refuses)))
    assert problem is not None
    assert "unknown outcome 'INVALID'" in problem


def test_agents_over_one_directory_parse_each_recording_once_and_a_changed_one_again(
    recordings: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    parsed: list[str] = []
    parse = replay.parse_consensus_input

    def counting(document: object) -> ConsensusInput:
        result = parse(document)
        parsed.append(result.market.id)
        return result

    monkeypatch.setattr(replay, "_PARSED", {})
    monkeypatch.setattr(replay, "parse_consensus_input", counting)
    alpha, beta = ReplayAgent("alpha", recordings), ReplayAgent("beta", recordings)
    assert parsed == ["m-7"]
    assert asyncio.run(alpha.research(market())).outcome == "YES"
    assert asyncio.run(beta.research(market())).outcome == "NO"

    document = consensus_document([result_dict("alpha", "NO", 0.9, 5)], market_id="m-7")
    (recordings / "m-7.json").write_text(json.dumps(document))
    assert asyncio.run(ReplayAgent("alpha", recordings).research(market("m-7"))).outcome == "NO"
    assert parsed == ["m-7", "m-7"]
