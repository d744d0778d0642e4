"""Debate on conflict with `llm` agents: four agents, each with its own local model server
speaking the real wire format (three OpenAI-compatible, one Anthropic) and its own pages,
researched and judged by the daemon's real path (an HTTP venue, `run_once`), the debate
rounds asked through `AgentPool.revise` and the agents' `revise`, and the verdict judged
by the same policy as any other.

Two agents find the candidate won, two that no winner was declared yet; what each model
says in each debate round is its script."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import pytest

from oracle.app import open_store
from oracle.config import Settings
from oracle.core.lifecycle import MarketState
from oracle.core.proof import verify_proof
from oracle.core.urls import normalize_url
from oracle.daemon.metrics import DaemonMetrics
from tests.commands import run_oracle
from tests.console.helpers import PASSWORD, sign_in
from tests.console.helpers import run as run_console
from tests.daemon.test_pipeline import Venue, market, one_pass, run
from tests.daemon.test_pipeline import serve as serve_venue

from .fakes import (
    RECOUNT,
    Internet,
    ScriptedModel,
    Step,
    answer,
    cite,
    hang,
    serve,
    text,
    tools,
)

QUESTION = "Did the candidate win the 2024 election?"
AGENTS = {  # name: (api, model), four model families
    "alpha": ("openai", "gpt-4.1-mini"),
    "beta": ("anthropic", "claude-opus-4-6"),
    "gamma": ("openai", "llama-3.3-70b"),
    "delta": ("openai", "mistral-large-2"),
}
Scripts = dict[str, list[Step]]


# The words each fake page says (tests/agents/fakes.py), quoted as an agent would.
WORDS = {
    "election": "The candidate won the election, officials said.",
    "official": "The commission certified the results today.",
    "no-winner": "No winner of the election has been declared; counting goes on.",
    "counting": "Three counties are still counting votes.",
    "recount": RECOUNT,
}


def finds(internet: Internet, page: str, outcome: str, confidence: float) -> list[Step]:
    """Open one of its pages, stop, answer citing it."""
    url = internet.page(page)
    return [
        tools(("open_page", {"url": url})),
        text("Read it."),
        answer(outcome, confidence, [cite(url, WORDS[page])]),
    ]


def keeps(internet: Internet, page: str, outcome: str, confidence: float) -> list[Step]:
    """A debate round in which it checks nothing new and keeps its answer."""
    return [
        text("Their answers bring nothing my sources do not answer."),
        answer(outcome, confidence, [cite(internet.page(page), WORDS[page])]),
    ]


def independent(net: dict[str, Internet], delta_confidence: float = 0.7) -> Scripts:
    """The independent research: two against two."""
    return {
        "alpha": finds(net["alpha"], "election", "YES", 0.8),
        "beta": finds(net["beta"], "official", "YES", 0.8),
        "gamma": finds(net["gamma"], "no-winner", "NO", 0.7),
        "delta": finds(net["delta"], "no-winner", "NO", delta_confidence),
    }


def agent_config(name: str, internet: Internet) -> dict[str, Any]:
    api, model = AGENTS[name]
    return {
        "name": name,
        "kind": "llm",
        "api": api,
        "base_url": f"{internet.url}/v1" if api == "openai" else f"{internet.url}/anthropic",
        "model": model,
        "api_key_env": "DEBATE_LLM_KEY",
        "max_retries": 0,
        "request_timeout_seconds": 20,
        "search": [{"kind": "searxng", "base_url": f"{internet.url}/searx"}],
        "pages": {"allowed_networks": ["127.0.0.1/32"], "timeout_seconds": 5},
        "budget": {"wall_seconds": 30, "answer_reserve_seconds": 3},
    }


def settings(
    tmp_path: Path,
    venue: Venue,
    net: dict[str, Internet],
    sources: dict[str, int] | None = None,
    **debate: Any,
) -> Settings:
    return Settings(
        database={"url": f"sqlite:///{tmp_path / 'oracle.db'}"},
        daemon={"proofs_dir": str(tmp_path / "proofs"), "retry_backoff": 0},
        metrics={"enabled": False},
        # One page per agent is its evidence here; the gates under test are the debate's.
        sources={"min_total": 1, "min_categories": 1, "min_official": 0, "min_news": 0}
        | (sources or {}),
        consensus={"conflict_resolution": "debate", "debate": debate},
        agents=[agent_config(name, net[name]) for name in AGENTS],
        market_sources=[
            {
                "name": "venue",
                "kind": "http",
                "url": f"{venue.url}/markets",
                "result_url": f"{venue.url}/results",
                "items_path": "data.markets",
            }
        ],
    )


def model_of(name: str, internet: Internet) -> ScriptedModel:
    """The model server `name` talks to on its `internet`."""
    return internet.anthropic if AGENTS[name][0] == "anthropic" else internet.openai


class Debate:
    """One daemon pass over the contested market; what it left behind."""

    def __init__(self, tmp_path: Path, net: dict[str, Internet], venue: Venue, config: Settings):
        self.tmp_path, self.net, self.venue, self.settings = tmp_path, net, venue, config
        self.metrics = DaemonMetrics()

    @property
    def state(self) -> MarketState:
        return market(self.settings, "venue:election").state

    def proof(self) -> dict[str, Any]:
        (path,) = (self.tmp_path / "proofs" / "venue_election").glob("*.json")
        document: dict[str, Any] = json.loads(path.read_text())
        assert verify_proof(document)[0]
        return document

    def requests(self, name: str) -> list[dict[str, Any]]:
        return model_of(name, self.net[name]).requests

    def metric(self, name: str, labels: dict[str, str] | None = None) -> float | None:
        return self.metrics.registry.get_sample_value(name, labels or {})


def debate(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    rounds: Callable[[dict[str, Internet]], Scripts],
    *,
    delta_confidence: float = 0.7,
    first: Callable[[dict[str, Internet]], Scripts] | None = None,
    sources: dict[str, int] | None = None,
    **params: Any,
) -> Debate:
    """Run the daemon once; each agent's model follows the independent research, then
    what `rounds` scripts for its debate rounds (`first`: other independent research)."""
    monkeypatch.setenv("DEBATE_LLM_KEY", "sk-debate-test-key")
    net = {name: Internet() for name in AGENTS}

    async def scenario() -> Debate:
        async with AsyncExitStack() as stack:
            for internet in net.values():
                await stack.enter_async_context(serve(internet))
            research = first(net) if first else independent(net, delta_confidence)
            later = rounds(net)
            for name in AGENTS:
                model_of(name, net[name]).script = [*research[name], *later.get(name, [])]
            markets = [{"id": "election", "question": QUESTION, "resolve_after": 100}]
            venue = await stack.enter_async_context(serve_venue(Venue(markets)))
            configured = settings(tmp_path, venue, net, sources, **params)
            outcome = Debate(tmp_path, net, venue, configured)
            await one_pass(outcome.settings, outcome.metrics)
            return outcome

    outcome: Debate = run(scenario)
    return outcome


def url_of(internet: Internet, page: str) -> str:
    return normalize_url(internet.page(page))


def flips_of(round_: dict[str, Any]) -> list[tuple[str, str, str, bool]]:
    return [(f["agent"], f["from"], f["to"], f["counted"]) for f in round_["flips"]]


def test_a_two_round_debate_converges_and_the_policy_submits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rounds(net: dict[str, Internet]) -> Scripts:
        return {
            # Round 1: gamma finds the recount and changes its mind; the others keep theirs.
            # Round 2: delta, alone now, reads the recount on its own and follows (the
            # certified results page would not do: it does not name the candidate or
            # the election, so it is not about the question).
            "alpha": [*keeps(net["alpha"], "election", "YES", 0.8)] * 2,
            "beta": [*keeps(net["beta"], "official", "YES", 0.8)] * 2,
            "gamma": [
                *finds(net["gamma"], "recount", "YES", 0.8),
                *keeps(net["gamma"], "recount", "YES", 0.8),
            ],
            "delta": [
                *keeps(net["delta"], "no-winner", "NO", 0.7),
                *finds(net["delta"], "recount", "YES", 0.8),
            ],
        }

    # 3 against 1 after round 1 is not yet the 0.95 posterior this test stops at.
    outcome = debate(tmp_path, monkeypatch, rounds, stop_posterior=0.95)
    assert [(a["market_id"], a["outcome"]) for a in outcome.venue.answers] == [("election", "YES")]
    assert outcome.state == MarketState.FINAL
    proof = outcome.proof()
    record = proof["debate"]
    assert record["initial"] == {"alpha": "YES", "beta": "YES", "delta": "NO", "gamma": "NO"}
    assert record["stop"] == "converged"
    first, second = record["rounds"]
    assert flips_of(first) == [("gamma", "NO", "YES", True)]
    assert first["standing"] == {"alpha": "YES", "beta": "YES", "delta": "NO", "gamma": "YES"}
    assert first["posterior"]["YES"] < 0.95
    # Round 2: only delta disagrees, so everyone examines delta and delta everyone.
    assert sorted(second["challenges"]) == sorted(
        [[a, "delta"] for a in ("alpha", "beta", "gamma")]
        + [["delta", a] for a in ("alpha", "beta", "gamma")]
    )
    assert flips_of(second) == [("delta", "NO", "YES", True)]
    assert second["posterior"]["YES"] >= 0.95
    assert record["strength"] == {"before": "contested", "after": "unanimous"}
    assert record["unsupported_flips"] == []
    assert (proof["verdict"]["action"], proof["verdict"]["outcome"]) == ("submit", "YES")
    assert {v["agent_id"]: v["outcome"] for v in proof["votes"]} == dict.fromkeys(AGENTS, "YES")
    # Every agent answered through its model: research (3 requests), two rounds.
    assert [len(outcome.requests(a)) for a in AGENTS] == [7, 7, 8, 8]
    round_two = outcome.requests("delta")[5]["messages"]
    assert any(str(m.get("content", "")).startswith("Debate round 2.") for m in round_two)
    assert outcome.metric("oracle_debates_total", {"stop": "converged", "action": "submit"}) == 1
    assert outcome.metric("oracle_debate_rounds_total") == 2
    assert outcome.metric("oracle_debate_flips_total", {"counted": "true"}) == 2
    # A debate round is a research run: counted, its tokens (1000 in per request) too.
    assert outcome.metric("oracle_agent_runs_total", {"agent": "gamma", "result": "answered"}) == 3
    tokens = {"agent": "gamma", "provider": "127.0.0.1", "model": "llama-3.3-70b"}
    assert outcome.metric("oracle_agent_tokens_total", {**tokens, "direction": "input"}) == 8000


def test_a_debate_that_does_not_converge_goes_to_a_person(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rounds(net: dict[str, Internet]) -> Scripts:
        # Round 1: gamma and beta each find something new and cross over; round 2 holds.
        return {
            "alpha": [*keeps(net["alpha"], "election", "YES", 0.8)] * 2,
            "beta": [
                *finds(net["beta"], "no-winner", "NO", 0.7),
                *keeps(net["beta"], "no-winner", "NO", 0.7),
            ],
            "gamma": [
                *finds(net["gamma"], "recount", "YES", 0.8),
                *keeps(net["gamma"], "recount", "YES", 0.8),
            ],
            "delta": [*keeps(net["delta"], "no-winner", "NO", 0.7)] * 2,
        }

    outcome = debate(tmp_path, monkeypatch, rounds, max_rounds=2)
    assert outcome.venue.answers == []
    assert outcome.state == MarketState.NEEDS_REVIEW
    proof = outcome.proof()
    record = proof["debate"]
    assert record["stop"] == "exhausted"
    first, second = record["rounds"]
    assert flips_of(first) == [("beta", "YES", "NO", True), ("gamma", "NO", "YES", True)]
    assert first["standing"] == {"alpha": "YES", "beta": "NO", "delta": "NO", "gamma": "YES"}
    assert flips_of(second) == []
    assert second["standing"] == first["standing"]
    assert record["strength"] == {"before": "contested", "after": "contested"}
    assert proof["verdict"]["action"] == "review"
    assert proof["verdict"]["review_codes"] == ["no_consensus"]
    assert outcome.metric("oracle_debates_total", {"stop": "exhausted", "action": "review"}) == 1
    shown = run_oracle(
        "review", "show", "1", env={"ORACLE__DATABASE__URL": str(outcome.settings.database.url)}
    )
    assert shown.returncode == 0, shown.stderr
    assert "debate: stopped exhausted after 2 round(s); agreement contested -> contested" in (
        shown.stdout
    )
    assert "beta YES -> NO (counted, 1 new source(s))" in shown.stdout
    # The reviewer sees which page changed each mind, as the proof records it.
    for flip in first["flips"]:
        (url,) = flip["new_sources"]
        assert f"      new evidence: {url}\n" in shown.stdout
    store = open_store(outcome.settings)
    try:
        store.add_user("rita", "reviewer", PASSWORD)

        async def page(client) -> None:  # type: ignore[no-untyped-def]
            assert (await sign_in(client, "rita")).status == 303
            html = await (await client.get("/reviews/1")).text()
            for flip in first["flips"]:
                (url,) = flip["new_sources"]
                link = f'<a href="{url}" rel="noopener noreferrer nofollow"><bdi>{url}</bdi></a>'
                assert link in html

        run_console(store, page)
    finally:
        store.engine.dispose()


def test_a_confident_wrong_agent_cannot_talk_the_others_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rounds(net: dict[str, Internet]) -> Scripts:
        delta_page = net["delta"].page("no-winner")
        return {
            # alpha opens delta's page and takes its side: nothing it was not shown.
            "alpha": [
                tools(("open_page", {"url": delta_page})),
                text("delta is certain, and its page says no winner."),
                answer("NO", 0.95, [cite(delta_page, WORDS["no-winner"])]),
            ],
            # beta gives in, citing only what it had before.
            "beta": [
                text("delta is very confident; I defer."),
                answer("NO", 0.9, [cite(net["beta"].page("official"), "certified")]),
            ],
            "gamma": keeps(net["gamma"], "no-winner", "NO", 0.7),
            "delta": keeps(net["delta"], "no-winner", "NO", 0.99),
        }

    outcome = debate(tmp_path, monkeypatch, rounds, delta_confidence=0.99)
    # Four NO answers were given in round 1; none of the flips counted, so the verdict is
    # on the standing two against two, and nothing goes to the venue.
    assert outcome.venue.answers == []
    assert outcome.state == MarketState.NEEDS_REVIEW
    proof = outcome.proof()
    record = proof["debate"]
    (first,) = record["rounds"]
    assert {a: r["outcome"] for a, r in first["answers"].items()} == dict.fromkeys(AGENTS, "NO")
    assert flips_of(first) == [("alpha", "YES", "NO", False), ("beta", "YES", "NO", False)]
    assert all(flip["new_sources"] == [] for flip in first["flips"])
    assert first["standing"] == record["initial"]
    assert record["stop"] == "stalled"
    assert record["unsupported_flips"] == ["alpha", "beta"]
    assert {v["agent_id"]: v["outcome"] for v in proof["votes"]} == record["initial"]
    assert proof["verdict"]["action"] == "review"
    # The delta prompt's claims reached alpha as fenced data, not as instructions.
    brief = outcome.requests("alpha")[3]["messages"][2]["content"]
    assert brief.startswith("Debate round 1.")
    assert "kind=other_answer" in brief
    assert outcome.metric("oracle_debate_flips_total", {"counted": "false"}) == 2
    assert outcome.metric("oracle_debates_total", {"stop": "stalled", "action": "review"}) == 1


def test_a_round_two_timeout_keeps_standing_answers_and_records_the_failure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rounds(net: dict[str, Internet]) -> Scripts:
        return {
            "alpha": [*keeps(net["alpha"], "election", "YES", 0.8)] * 2,
            "beta": [*keeps(net["beta"], "official", "YES", 0.8)] * 2,
            "gamma": [
                *finds(net["gamma"], "recount", "YES", 0.8),
                *keeps(net["gamma"], "recount", "YES", 0.8),
            ],
            # Round 2: delta's model does not answer within the round.
            "delta": [*keeps(net["delta"], "no-winner", "NO", 0.7), hang(15)],
        }

    outcome = debate(tmp_path, monkeypatch, rounds, stop_posterior=0.95, round_timeout=3)
    record = outcome.proof()["debate"]
    first, second = record["rounds"]
    assert flips_of(first) == [("gamma", "NO", "YES", True)]
    assert second["failures"] == {"delta": "timed out after 3 s"}
    assert sorted(second["answers"]) == ["alpha", "beta", "gamma"]
    assert second["standing"] == first["standing"]  # delta's NO stands
    assert second["standing"]["delta"] == "NO"
    assert record["stop"] == "stalled"
    # Three of four with three model families pass the quorum: the policy submits.
    assert [(a["market_id"], a["outcome"]) for a in outcome.venue.answers] == [("election", "YES")]
    votes = {v["agent_id"]: v["outcome"] for v in outcome.proof()["votes"]}
    assert votes == {"alpha": "YES", "beta": "YES", "gamma": "YES", "delta": "NO"}
    assert outcome.metric("oracle_debate_rounds_total") == 2
    assert outcome.metric("oracle_agent_runs_total", {"agent": "delta", "result": "failed"}) == 1


def test_new_research_in_a_debate_changes_an_answer_and_the_proof_names_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def rounds(net: dict[str, Internet]) -> Scripts:
        return {
            "alpha": keeps(net["alpha"], "election", "YES", 0.8),
            "beta": keeps(net["beta"], "official", "YES", 0.8),
            "gamma": finds(net["gamma"], "recount", "YES", 0.85),  # fetched during revise
            "delta": keeps(net["delta"], "no-winner", "NO", 0.7),
        }

    outcome = debate(tmp_path, monkeypatch, rounds)
    recount = url_of(outcome.net["gamma"], "recount")
    proof = outcome.proof()
    record = proof["debate"]
    (first,) = record["rounds"]
    assert flips_of(first) == [("gamma", "NO", "YES", True)]
    (flip,) = first["flips"]
    assert flip["new_sources"] == [recount]
    assert record["stop"] == "converged"
    assert first["answers"]["gamma"] == {"outcome": "YES", "confidence": 0.85}
    # The page was fetched by gamma's tool in the round: its text went back to the model.
    after_tool = outcome.requests("gamma")[4]["messages"]
    assert any(RECOUNT in str(m.get("content", "")) for m in after_tool)
    # The evidence is among the proof's sources, cited by gamma.
    cited = {s["url"]: s for s in proof["sources"]}
    evidence = cited[outcome.net["gamma"].page("recount")]
    assert (evidence["title"], evidence["cited_by"]) == ("Recount confirms the result", ["gamma"])
    assert (proof["verdict"]["action"], proof["verdict"]["outcome"]) == ("submit", "YES")
    assert [(a["market_id"], a["outcome"]) for a in outcome.venue.answers] == [("election", "YES")]


def reads(internet: Internet, pages: list[str], outcome: str, confidence: float) -> list[Step]:
    """Open these pages, stop, answer citing all of them."""
    urls = [internet.page(page) for page in pages]
    return [
        tools(*(("open_page", {"url": url}) for url in urls)),
        text("Read them."),
        answer(
            outcome,
            confidence,
            [cite(url, WORDS[page]) for url, page in zip(urls, pages, strict=True)],
        ),
    ]


def test_an_agent_that_keeps_its_answer_keeps_the_evidence_it_had(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two sources per vote are needed. Each agent found two; in the round, the agents that
    # keep their answer cite only the source they discuss. Their earlier evidence for the
    # same outcome is still theirs: their votes must not drop out of the verdict.
    def first(net: dict[str, Internet]) -> Scripts:
        return {
            "alpha": reads(net["alpha"], ["election", "official"], "YES", 0.8),
            "beta": reads(net["beta"], ["election", "official"], "YES", 0.8),
            "gamma": reads(net["gamma"], ["no-winner", "counting"], "NO", 0.7),
            "delta": reads(net["delta"], ["no-winner", "counting"], "NO", 0.7),
        }

    def rounds(net: dict[str, Internet]) -> Scripts:
        return {
            "alpha": keeps(net["alpha"], "official", "YES", 0.8),
            "beta": keeps(net["beta"], "election", "YES", 0.8),
            "gamma": reads(net["gamma"], ["recount", "official"], "YES", 0.85),
            "delta": keeps(net["delta"], "counting", "NO", 0.7),
        }

    outcome = debate(tmp_path, monkeypatch, rounds, first=first, sources={"min_total": 2})
    proof = outcome.proof()
    assert flips_of(proof["debate"]["rounds"][0]) == [("gamma", "NO", "YES", True)]
    votes = {v["agent_id"]: (v["outcome"], v["source_count"], v["counted"]) for v in proof["votes"]}
    assert votes == {
        "alpha": ("YES", 2, True),
        "beta": ("YES", 2, True),
        "gamma": ("YES", 2, True),
        "delta": ("NO", 2, True),
    }
    assert (proof["verdict"]["action"], proof["verdict"]["outcome"]) == ("submit", "YES")
    assert [(a["market_id"], a["outcome"]) for a in outcome.venue.answers] == [("election", "YES")]
