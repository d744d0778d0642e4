"""Debate on conflict through the daemon's real path: an HTTP venue, replay agents that
replay recorded debate rounds, the verdict judged by the same policy, the rounds in the
proof."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from oracle.app import open_store
from oracle.config import Settings
from oracle.core.lifecycle import MarketState
from oracle.core.proof import verify_proof
from oracle.daemon.metrics import DaemonMetrics
from oracle.testing import consensus_document, result_dict, source_dicts
from tests.commands import run_oracle
from tests.console.helpers import PASSWORD, sign_in
from tests.console.helpers import run as run_console
from tests.daemon.test_pipeline import Venue, market, one_pass, run, serve, settings_for

AGENTS = ("alpha", "beta", "gamma", "delta")
QUESTION = "Did the bridge reopen before 1 June?"
REOPENED = "The bridge reopened to traffic on 28 May"


def write(directory: Path, results: list[dict[str, Any]]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    document = consensus_document(results, market_id="bridge", question=QUESTION)
    (directory / "bridge.json").write_text(json.dumps(document))


def recordings(root: Path, round_one: list[dict[str, Any]]) -> Path:
    """Two against two, then what round one brings."""
    write(
        root,
        [
            result_dict("alpha", "YES", 0.8, 60),
            result_dict("beta", "YES", 0.8, 55),
            result_dict("gamma", "NO", 0.7, 55),
            result_dict("delta", "NO", 0.7, 50),
        ],
    )
    write(root / "debate" / "round-1", round_one)
    return root


def settings(
    tmp_path: Path,
    venue: Venue,
    replays: Path,
    mode: str,
    *,
    round_timeout: float = 300.0,
    latency: float = 0.0,
) -> Settings:
    """The pipeline tests' settings with four agents and `mode` for conflicts."""
    base = settings_for(f"sqlite:///{tmp_path / 'oracle.db'}", tmp_path, venue, replays)
    agents = [
        {"name": a, "kind": "replay", "directory": str(replays), "latency_seconds": latency}
        for a in AGENTS
    ]
    return Settings(
        database=base.database,
        daemon=base.daemon,
        metrics=base.metrics,
        market_sources=base.market_sources,
        consensus={"conflict_resolution": mode, "debate": {"round_timeout": round_timeout}},
        agents=agents,
    )


def debate_once(
    tmp_path: Path, round_one: list[dict[str, Any]], mode: str = "debate", **timing: float
) -> tuple[Venue, Settings, DaemonMetrics]:
    replays = recordings(tmp_path / "replays", round_one)
    metrics = DaemonMetrics()

    async def scenario() -> tuple[Venue, Settings]:
        markets = [{"id": "bridge", "question": QUESTION, "resolve_after": 100}]
        async with serve(Venue(markets)) as venue:
            configured = settings(tmp_path, venue, replays, mode, **timing)
            await one_pass(configured, metrics)
            return venue, configured

    venue, configured = run(scenario)
    return venue, configured, metrics


def proof_of(tmp_path: Path) -> dict[str, Any]:
    (path,) = (tmp_path / "proofs" / "venue_bridge").glob("*.json")
    document: dict[str, Any] = json.loads(path.read_text())
    assert verify_proof(document)[0]
    return document


def test_new_evidence_in_a_debate_settles_a_conflict(tmp_path: Path) -> None:
    # gamma researched again and found sources nobody had shown it; delta keeps NO.
    informed = result_dict("gamma", "YES", 0.85, 55)
    informed["sources"] = source_dicts("gamma-second-look", 55, quote=REOPENED)
    venue, configured, metrics = debate_once(
        tmp_path, [informed, result_dict("delta", "NO", 0.7, 50)]
    )
    assert [(a["market_id"], a["outcome"]) for a in venue.answers] == [("bridge", "YES")]
    assert market(configured, "venue:bridge").state == MarketState.FINAL
    debate = proof_of(tmp_path)["debate"]
    assert debate["initial"] == {"alpha": "YES", "beta": "YES", "delta": "NO", "gamma": "NO"}
    assert debate["stop"] == "converged"
    (first,) = debate["rounds"]
    assert first["standing"]["gamma"] == "YES"
    assert [(f["agent"], f["from"], f["to"], f["counted"]) for f in first["flips"]] == [
        ("gamma", "NO", "YES", True)
    ]
    assert len(first["flips"][0]["new_sources"]) == 55
    assert ["alpha", "gamma"] in first["challenges"]  # gamma was shown alpha's answer
    assert debate["strength"] == {"before": "contested", "after": "moderate"}
    registry = metrics.registry
    assert (
        registry.get_sample_value("oracle_debates_total", {"stop": "converged", "action": "submit"})
        == 1
    )
    assert registry.get_sample_value("oracle_debate_flips_total", {"counted": "true"}) == 1


def test_a_flip_on_the_shown_pages_respelled_is_not_new_evidence(tmp_path: Path) -> None:
    """The full daemon once let this flip turn 2-2 into 3-1 and submitted the verdict:
    gamma cites alpha's pages (which it was shown) with `?ref=debate` or a fragment
    appended, each read and quoting the question's subject."""
    shown = source_dicts("alpha", 60, quote=REOPENED)
    respelled = [
        {**s, "url": s["url"] + ("?ref=debate" if i % 2 else "#frag")} for i, s in enumerate(shown)
    ]
    herded = result_dict("gamma", "YES", 0.9, 0)
    herded["sources"] = respelled
    venue, configured, _ = debate_once(tmp_path, [herded, result_dict("delta", "NO", 0.7, 50)])
    assert venue.answers == []
    assert market(configured, "venue:bridge").state == MarketState.NEEDS_REVIEW
    (first,) = proof_of(tmp_path)["debate"]["rounds"]
    assert first["flips"][0]["counted"] is False
    assert first["standing"]["gamma"] == "NO"


def test_a_flip_to_a_page_about_something_else_is_not_new_evidence(tmp_path: Path) -> None:
    recipes = result_dict("gamma", "YES", 0.9, 0)
    recipes["sources"] = source_dicts("recipes", 55, quote="Bake the cake for 30 minutes")
    venue, configured, _ = debate_once(tmp_path, [recipes, result_dict("delta", "NO", 0.7, 50)])
    assert venue.answers == []
    assert market(configured, "venue:bridge").state == MarketState.NEEDS_REVIEW


def test_a_flip_without_new_evidence_is_marked_and_goes_to_a_person(tmp_path: Path) -> None:
    # gamma takes alpha's side citing only alpha's sources (what it was shown): herding.
    herded = result_dict("gamma", "YES", 0.9, 60, shared=source_dicts("alpha", 60))
    venue, configured, metrics = debate_once(
        tmp_path, [herded, result_dict("delta", "NO", 0.7, 50)]
    )
    assert venue.answers == []
    assert market(configured, "venue:bridge").state == MarketState.NEEDS_REVIEW
    proof = proof_of(tmp_path)
    debate = proof["debate"]
    assert debate["stop"] == "stalled"
    assert debate["unsupported_flips"] == ["gamma"]
    (first,) = debate["rounds"]
    assert first["standing"]["gamma"] == "NO"  # its vote stays with its evidence
    assert first["flips"][0]["counted"] is False
    assert first["flips"][0]["new_sources"] == []
    assert proof["verdict"]["action"] == "review"
    assert metrics.registry.get_sample_value("oracle_debate_flips_total", {"counted": "false"}) == 1
    # The person reviewing it sees the rounds: `oracle review show` and the console.
    url = str(configured.database.url)
    shown = run_oracle("review", "show", "1", env={"ORACLE__DATABASE__URL": url})
    assert shown.returncode == 0, shown.stderr
    assert "debate: stopped stalled after 1 round(s); agreement contested -> contested" in (
        shown.stdout
    )
    assert "gamma NO -> YES (not counted: no new evidence)" in shown.stdout
    store = open_store(configured)
    try:
        store.add_user("rita", "reviewer", PASSWORD)

        async def page(client) -> None:  # type: ignore[no-untyped-def]
            assert (await sign_in(client, "rita")).status == 303
            html = await (await client.get("/reviews/1")).text()
            assert "<h2>Debate</h2>" in html
            assert (
                "gamma <bdi>NO</bdi> &rarr; <bdi>YES</bdi> (not counted: no new evidence)" in html
            )
            assert "Changed their answer without new evidence (not counted):\n    gamma" in html

        run_console(store, page)
    finally:
        store.engine.dispose()


def test_escalate_by_default_asks_no_agent_again(tmp_path: Path) -> None:
    informed = result_dict("gamma", "YES", 0.85, 55)
    informed["sources"] = source_dicts("gamma-second-look", 55, quote=REOPENED)
    venue, configured, metrics = debate_once(tmp_path, [informed], mode="escalate")
    assert venue.answers == []
    assert market(configured, "venue:bridge").state == MarketState.NEEDS_REVIEW
    assert "debate" not in proof_of(tmp_path)
    assert metrics.registry.get_sample_value("oracle_debate_rounds_total") == 0


def test_a_round_that_runs_out_of_time_keeps_every_standing_answer(tmp_path: Path) -> None:
    # Each agent takes 0.5 s: inside the research timeout, beyond the round's 0.2 s.
    informed = result_dict("gamma", "YES", 0.85, 55)
    informed["sources"] = source_dicts("gamma-second-look", 55)
    venue, configured, _ = debate_once(tmp_path, [informed], round_timeout=0.2, latency=0.5)
    assert venue.answers == []
    assert market(configured, "venue:bridge").state == MarketState.NEEDS_REVIEW
    debate = proof_of(tmp_path)["debate"]
    (first,) = debate["rounds"]
    assert first["failures"] == dict.fromkeys(AGENTS, "timed out after 0.2 s")
    assert first["standing"] == debate["initial"]
    assert debate["stop"] == "stalled"


def test_majority_proposes_the_weighted_plurality_to_a_person(tmp_path: Path) -> None:
    # Two against two: YES's voters are surer. `majority` asks nobody again, submits
    # nothing (the conflict has no quorum) and shows the reviewer YES as the proposal.
    informed = result_dict("gamma", "YES", 0.85, 55)
    informed["sources"] = source_dicts("gamma-second-look", 55, quote=REOPENED)
    venue, configured, metrics = debate_once(tmp_path, [informed], mode="majority")
    assert venue.answers == []
    assert market(configured, "venue:bridge").state == MarketState.NEEDS_REVIEW
    proof = proof_of(tmp_path)
    assert "debate" not in proof
    assert proof["verdict"]["action"] == "review"
    assert "no_consensus" in proof["verdict"]["review_codes"]
    majority = proof["majority"]
    assert majority["proposed"] == "YES"
    assert majority["weights"]["YES"] > majority["weights"]["NO"]
    assert metrics.registry.get_sample_value("oracle_debate_rounds_total") == 0
    url = str(configured.database.url)
    shown = run_oracle("review", "show", "1", env={"ORACLE__DATABASE__URL": url})
    assert shown.returncode == 0, shown.stderr
    assert f"majority: proposes YES ({majority['share']:.0%} of the vote weight" in shown.stdout
    store = open_store(configured)
    try:
        store.add_user("rita", "reviewer", PASSWORD)

        async def page(client) -> None:  # type: ignore[no-untyped-def]
            assert (await sign_in(client, "rita")).status == 303
            html = await (await client.get("/reviews/1")).text()
            assert "<h2>Majority</h2>" in html
            assert "proposes\n    <strong><bdi>YES</bdi></strong>" in html

        run_console(store, page)
    finally:
        store.engine.dispose()


def test_sources_seen_not_read_and_hidden_characters_are_shown_to_the_reviewer(
    tmp_path: Path,
) -> None:
    # alpha also cites two search hits it never opened: official, 0.95, unread.
    alpha = result_dict("alpha", "YES", 0.8, 60)
    hits = [
        {
            "url": f"https://www.sec.gov/hit/{index}",
            "title": "SEC filing (search result)",
            "category": "official",
            "credibility_score": 0.95,
            "relevance_score": 0.9,
            "read": False,
        }
        for index in range(2)
    ]
    alpha["sources"] = [*alpha["sources"], *hits]
    replays = tmp_path / "replays"
    others = [
        result_dict("beta", "YES", 0.8, 55),
        result_dict("gamma", "NO", 0.7, 55),
        result_dict("delta", "NO", 0.7, 50),
    ]
    write(replays, [alpha, *others])

    # The venue's question hides three zero-width characters: the proof says so.
    hidden = QUESTION.replace("bridge", "bri\u200bd\u200bg\u200be")

    async def scenario() -> Settings:
        markets = [{"id": "bridge", "question": hidden, "resolve_after": 100}]
        async with serve(Venue(markets)) as venue:
            configured = settings(tmp_path, venue, replays, "escalate")
            await one_pass(configured, DaemonMetrics())
            return configured

    configured = run(scenario)
    proof = proof_of(tmp_path)
    (vote,) = [v for v in proof["votes"] if v["agent_id"] == "alpha"]
    assert vote["source_count"] == 60
    assert vote["seen_not_read"] == [f"https://www.sec.gov/hit/{i}" for i in range(2)]
    assert all("sec.gov" not in s["url"] for s in proof["sources"])
    assert (proof["market"]["question"], proof["market"]["hidden_characters"]) == (QUESTION, 3)
    (markdown,) = (tmp_path / "proofs" / "venue_bridge").glob("*.md")
    assert "This question contained 3 invisible characters" in markdown.read_text()
    assert "## Seen, not read (counted for nothing)" in markdown.read_text()
    url = str(configured.database.url)
    shown = run_oracle("review", "show", "1", env={"ORACLE__DATABASE__URL": url})
    assert shown.returncode == 0, shown.stderr
    assert "2 seen, not read: counted for nothing" in shown.stdout  # concise: counted
    full = run_oracle("review", "show", "1", "--full", env={"ORACLE__DATABASE__URL": url})
    assert full.returncode == 0, full.stderr
    assert full.stdout.count("[seen, not read: counted for nothing]") == 2
    store = open_store(configured)
    try:
        store.add_user("rita", "reviewer", PASSWORD)

        async def page(client) -> None:  # type: ignore[no-untyped-def]
            assert (await sign_in(client, "rita")).status == 303
            html = await (await client.get("/reviews/1")).text()
            assert html.count("seen, not read: counted for nothing") == 2

        run_console(store, page)
    finally:
        store.engine.dispose()
