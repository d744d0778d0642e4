"""The daemon's pipeline through its real path: an HTTP venue (market list and result
webhook served by a real aiohttp server), replay agents reading recordings from disk,
the store on SQLite and on PostgreSQL, proofs written to disk."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from oracle.app import assemble, open_store
from oracle.config import Settings
from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.models import Market
from oracle.core.proof import verify_proof
from oracle.core.timing import ScheduleParams
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import MarketRef, Resolution, ResolutionStatus
from oracle.store.tables import MarketRow
from oracle.testing import consensus_document, result_dict

AGENTS = ("alpha", "beta", "gamma")


@dataclass
class Venue:
    """A prediction-market venue: serves its markets and receives answers."""

    markets: list[dict[str, Any]]
    answers: list[dict[str, Any]] = field(default_factory=list)
    fail_next_answers: int = 0
    url: str = ""


@asynccontextmanager
async def serve(venue: Venue) -> AsyncIterator[Venue]:
    async def markets(_: web.Request) -> web.Response:
        return web.json_response({"data": {"markets": venue.markets}})

    async def results(request: web.Request) -> web.Response:
        if venue.fail_next_answers:
            venue.fail_next_answers -= 1
            return web.Response(status=503)
        venue.answers.append(
            {**await request.json(), "idempotency_key": request.headers["Idempotency-Key"]}
        )
        return web.json_response({"ok": True})

    app = web.Application()
    app.router.add_get("/markets", markets)
    app.router.add_post("/results", results)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    venue.url = f"http://127.0.0.1:{port}"
    try:
        yield venue
    finally:
        await runner.cleanup()


def record(
    directory: Path, market_id: str, question: str, votes: list[tuple[str, str, float, int]]
) -> None:
    document = consensus_document(
        [result_dict(agent, outcome, conf, sources) for agent, outcome, conf, sources in votes],
        market_id=market_id,
        question=question,
    )
    (directory / f"{market_id}.json").write_text(json.dumps(document))


def venue_markets() -> list[dict[str, Any]]:
    return [
        {"id": "agree", "question": "Did A happen?", "resolve_after": 100},
        {"id": "contest", "question": "Did B happen?", "resolve_after": "1970-01-01T00:01:40Z"},
        {"id": "future", "question": "Will C happen?", "resolve_after": 10**10},
        {"id": "broken", "resolve_after": 100},  # no question: skipped, others unaffected
    ]


def recordings(directory: Path) -> Path:
    directory.mkdir()
    record(
        directory,
        "agree",
        "Did A happen?",
        [("alpha", "YES", 0.9, 60), ("beta", "YES", 0.85, 55), ("gamma", "NO", 0.6, 50)],
    )
    record(
        directory,
        "contest",
        "Did B happen?",
        [("alpha", "YES", 0.7, 60), ("beta", "NO", 0.7, 55), ("gamma", "UNDETERMINED", 0.5, 50)],
    )
    return directory


def settings_for(database_url: str, tmp_path: Path, venue: Venue, replays: Path) -> Settings:
    return Settings(
        database={"url": database_url},
        daemon={"proofs_dir": str(tmp_path / "proofs"), "retry_backoff": 0},
        metrics={"enabled": False},
        agents=[{"name": a, "kind": "replay", "directory": str(replays)} for a in AGENTS],
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


async def one_pass(
    settings: Settings, metrics: DaemonMetrics | None = None, now: float = 1_000.0
) -> None:
    assembly = assemble(settings, metrics=metrics, clock=lambda: now)
    try:
        await assembly.daemon.run_once()
    finally:
        await assembly.close()


def market(settings: Settings, market_id: str) -> MarketRow:
    store = open_store(settings)
    try:
        return store.get_market(market_id)
    finally:
        store.engine.dispose()


def run(scenario: Callable[[], Any]) -> Any:
    return asyncio.run(scenario())


def test_pass_submits_agreement_reviews_contest_and_waits_for_future(
    database_url: str, tmp_path: Path
) -> None:
    replays = recordings(tmp_path / "replays")
    metrics = DaemonMetrics()

    async def scenario() -> tuple[Venue, Settings]:
        async with serve(Venue(venue_markets())) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            await one_pass(settings, metrics)
            await one_pass(settings, metrics)  # a second pass must not answer again
            return venue, settings

    venue, settings = run(scenario)
    assert [a["market_id"] for a in venue.answers] == ["agree"]
    answer = venue.answers[0]
    assert answer["outcome"] == "YES"
    agreed = market(settings, "venue:agree")
    assert agreed.state == MarketState.FINAL
    assert agreed.proof_checksum == answer["proof_checksum"]
    # Released by the move to submitted itself, and by the end of the work on the others.
    for market_id in ("venue:agree", "venue:contest"):
        released = market(settings, market_id)
        assert (released.lease_owner, released.lease_expires_at) == (None, 0.0)
    proof_file = tmp_path / "proofs" / "venue_agree" / f"{answer['proof_checksum']}.json"
    proof = json.loads(proof_file.read_text())
    assert verify_proof(proof) == (True, answer["proof_checksum"])
    assert proof_file.with_suffix(".md").read_text().startswith("# Consensus proof")
    assert market(settings, "venue:contest").state == MarketState.NEEDS_REVIEW
    assert market(settings, "venue:future").state == MarketState.DISCOVERED
    registry = metrics.registry
    assert (
        registry.get_sample_value("oracle_consensus_total", {"action": "submit", "reached": "true"})
        == 1
    )
    assert registry.get_sample_value("oracle_review_reasons_total", {"reason": "no_consensus"}) == 1
    assert (
        registry.get_sample_value(
            "oracle_source_errors_total", {"source": "venue", "kind": "malformed"}
        )
        == 2
    )
    assert registry.get_sample_value("oracle_markets", {"state": "final"}) == 1
    assert registry.get_sample_value("oracle_source_polls_total", {"source": "venue"}) == 2
    # Primed at zero so that the first failure shows in rate().
    assert registry.get_sample_value("oracle_submissions_total", {"result": "failed"}) == 0
    assert (
        registry.get_sample_value(
            "oracle_agent_answers_total", {"agent": "alpha", "result": "answered"}
        )
        == 2
    )


def test_review_decision_is_delivered_with_a_decision_proof(
    database_url: str, tmp_path: Path
) -> None:
    replays = recordings(tmp_path / "replays")

    async def scenario() -> tuple[Venue, Settings]:
        async with serve(Venue(venue_markets()[1:2])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            await one_pass(settings)
            assembly = assemble(settings)
            [item] = assembly.daemon.store.reviews()
            assembly.daemon.store.decide_review(
                item.id, "NO", "the official record says no", "alice"
            )
            await assembly.close()
            await one_pass(settings)
            return venue, settings

    venue, settings = run(scenario)
    [answer] = venue.answers
    assert answer["outcome"] == "NO"
    decided = market(settings, "venue:contest")
    assert decided.state == MarketState.FINAL
    proof = json.loads(
        (tmp_path / "proofs" / "venue_contest" / f"{answer['proof_checksum']}.json").read_text()
    )
    assert proof["kind"] == "human_decision"
    assert proof["decision"]["decided_by"] == "alice"
    assert verify_proof(proof)[0]


def test_a_decision_awaiting_approval_is_not_delivered_until_another_person_approves(
    database_url: str, tmp_path: Path
) -> None:
    replays = recordings(tmp_path / "replays")

    async def scenario() -> tuple[Venue, Settings, list[MarketState]]:
        async with serve(Venue(venue_markets()[1:2])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            await one_pass(settings)
            assembly = assemble(settings)
            store = assembly.daemon.store
            store.add_user("bob", "approver", "correct horse battery")
            [item] = store.reviews()
            store.decide_review(item.id, "INVALID", "the question is ambiguous", "alice")
            await assembly.close()
            await one_pass(settings)  # four-eyes: nothing to deliver yet
            states = [market(settings, "venue:contest").state]
            assert venue.answers == []
            assembly = assemble(settings)
            assembly.daemon.store.approve_review(item.id, "bob")
            await assembly.close()
            await one_pass(settings)
            states.append(market(settings, "venue:contest").state)
            return venue, settings, states

    venue, _, states = run(scenario)
    assert states == [MarketState.NEEDS_REVIEW, MarketState.FINAL]
    [answer] = venue.answers
    assert answer["outcome"] == "INVALID"
    proof = json.loads(
        (tmp_path / "proofs" / "venue_contest" / f"{answer['proof_checksum']}.json").read_text()
    )
    assert (proof["decision"]["decided_by"], proof["decision"]["approved_by"]) == ("alice", "bob")
    assert verify_proof(proof)[0]


def test_failed_delivery_is_retried_without_new_research(database_url: str, tmp_path: Path) -> None:
    replays = recordings(tmp_path / "replays")

    async def scenario() -> tuple[Venue, Settings]:
        async with serve(Venue(venue_markets()[:1], fail_next_answers=1)) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            await one_pass(settings)
            first_state = market(settings, "venue:agree").state
            await one_pass(settings)
            assert first_state == MarketState.FAILED_RETRY
            return venue, settings

    venue, settings = run(scenario)
    assert len(venue.answers) == 1
    store = open_store(settings)
    events = [a.event for a in store.audit("venue:agree")]
    store.engine.dispose()
    assert events.count(MarketEvent.RESEARCH_STARTED) == 1
    assert MarketEvent.RETRY_SUBMISSION in events
    assert events[-1] == MarketEvent.WINDOW_PASSED


@pytest.mark.parametrize("died_in", [MarketState.RESEARCHING, MarketState.CONSENSUS])
def test_work_abandoned_by_a_dead_replica_is_resumed_once(
    database_url: str, tmp_path: Path, died_in: MarketState
) -> None:
    replays = recordings(tmp_path / "replays")

    async def scenario() -> tuple[Venue, list[str]]:
        async with serve(Venue(venue_markets()[:1])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            assembly = assemble(settings, clock=lambda: 1_000.0)
            store = assembly.daemon.store
            await assembly.daemon.poll()
            await assembly.daemon.promote()
            # Another replica leases the market, starts its research, and dies.
            [row] = store.claim("dead-replica", [MarketState.DUE], 1, lease_seconds=10)
            _, run_id = store.start_research(row.id, "dead-replica", 1, "attempt 1")
            if died_in is MarketState.CONSENSUS:  # it finished researching, then died
                answers = await assembly.daemon.pool.research(
                    Market(id=row.id, question=row.question)
                )
                store.finish_research(
                    row.id,
                    "dead-replica",
                    run_id,
                    [(a.answer, a.latency_seconds) for a in answers],
                    lease_seconds=10,
                    reason="finished",
                )
            await assembly.close()
            states = []
            for now in (1_005.0, 1_011.0):  # before and after the dead replica's lease ends
                await one_pass(settings, now=now)
                states.append(market(settings, "venue:agree").state)
            return venue, states

    venue, states = run(scenario)
    assert states == [died_in, MarketState.FINAL]
    assert len(venue.answers) == 1


def test_a_poll_that_finds_due_markets_starts_them_at_once(
    database_url: str, tmp_path: Path
) -> None:
    replays = recordings(tmp_path / "replays")

    async def scenario() -> tuple[Venue, list[str]]:
        async with serve(Venue(venue_markets())) as venue:
            assembly = assemble(
                settings_for(database_url, tmp_path, venue, replays), clock=lambda: 1_000.0
            )
            daemon = assembly.daemon
            try:
                assert await daemon.poll(start_due=True) == 3
                assert daemon._promotion is not None
                await daemon._promotion  # promote and dispatch, started by the poll
                started = sorted(t.get_name() for t in daemon._tasks)
                await daemon.wait_idle()
                assert await daemon.poll(start_due=True) == 0  # nothing new: nothing started
                assert daemon._promotion.done()
                assert not daemon._tasks
            finally:
                await assembly.close()
            return venue, started

    venue, started = run(scenario)
    # Both due markets were leased and driven by that one poll; the future one waits.
    assert started == ["market:venue:agree", "market:venue:contest"]
    assert [a["market_id"] for a in venue.answers] == ["agree"]
    assert market(settings_for(database_url, tmp_path, venue, replays), "venue:future").state == (
        MarketState.DISCOVERED
    )


def test_a_promotion_stuck_on_a_venue_does_not_hold_the_stop(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A promotion waiting on a venue's clock (a chain whose nodes are all down retries for
    # `chain.rpc.call_deadline`, minutes) is bounded by the drain timeout like a market.
    replays = recordings(tmp_path / "replays")

    async def scenario() -> float:
        async with serve(Venue([])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            daemon_settings = settings.daemon.model_copy(update={"drain_timeout": 0.5})
            settings = settings.model_copy(update={"daemon": daemon_settings})
            assembly = assemble(settings, clock=lambda: 1_000.0)
            daemon = assembly.daemon
            stuck = asyncio.Event()

            async def waits_on_the_venue() -> None:
                stuck.set()
                await asyncio.sleep(30)  # a regression fails the bound below, not hangs

            monkeypatch.setattr(daemon, "promote_then_start", waits_on_the_venue)
            try:
                daemon._promote_soon()
                await stuck.wait()
                started = asyncio.get_running_loop().time()
                await daemon.drain()
                assert daemon._promotion is not None
                assert daemon._promotion.cancelled()
                return asyncio.get_running_loop().time() - started
            finally:
                await assembly.close()

    assert run(scenario) < 5


def test_not_decidable_yet_is_deferred_then_handed_over_as_such(
    database_url: str, tmp_path: Path
) -> None:
    """After its window, a market the agents still cannot decide backs off; once the
    schedule's grace is over a person looks, as 'still undecidable', nothing failed."""
    replays = tmp_path / "replays"
    replays.mkdir()
    record(
        replays,
        "later",
        "Has D happened yet?",
        [(a, "UNDETERMINED", 0.9, 60) for a in AGENTS],
    )
    metrics = DaemonMetrics()

    def with_schedule(base: Settings, grace: float) -> Settings:
        schedule = ScheduleParams(backoff_first=0.5, grace=grace)
        daemon = base.daemon.model_copy(update={"schedule": schedule, "max_attempts": 1})
        return base.model_copy(update={"daemon": daemon})

    async def scenario() -> Settings:
        markets = [{"id": "later", "question": "Has D happened yet?", "resolve_after": 100}]
        async with serve(Venue(markets)) as venue:
            base = settings_for(database_url, tmp_path, venue, replays)
            within_grace = with_schedule(base, grace=1e12)
            await one_pass(within_grace, metrics, now=1_000)
            assert market(within_grace, "venue:later").state == MarketState.DEFERRED
            await one_pass(within_grace, metrics, now=1_001)
            assert market(within_grace, "venue:later").late_deferrals == 2
            grace_over = with_schedule(base, grace=0)  # as if the grace had passed
            await one_pass(grace_over, metrics, now=1_010)
            return grace_over

    settings = run(scenario)
    later = market(settings, "venue:later")
    assert later.state == MarketState.NEEDS_REVIEW
    assert (later.deferrals, later.failures) == (2, 0), "nothing failed"
    store = open_store(settings)
    try:
        [item] = store.reviews()
        [reason] = item.reasons
        assert reason.startswith("the window closed at 1970-01-01T00:01")
        assert reason.endswith("the agents still cannot decide after 3 checks")
        events = [a.event for a in store.audit("venue:later")]
    finally:
        store.engine.dispose()
    assert MarketEvent.FAILED not in events
    assert events.count(MarketEvent.CONSENSUS_RESEARCH_AGAIN) == 2
    assert events[-1] == MarketEvent.CONSENSUS_REVIEW
    reasons = metrics.registry.get_sample_value
    assert reasons("oracle_review_reasons_total", {"reason": "still_undecidable"}) == 1


def test_a_market_never_waits_for_a_person_without_its_review_item(
    database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its last retry spent, a market moves to review and its item opens in one
    transaction: a crash between the two leaves it where it was, to try again."""
    replays = recordings(tmp_path / "replays")

    async def scenario() -> tuple[MarketState, MarketState, list[str]]:
        async with serve(Venue(venue_markets()[:1])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            assembly = assemble(settings, clock=lambda: 1_000.0)
            store = assembly.daemon.store
            await assembly.daemon.poll()
            await assembly.daemon.promote()
            for attempt in range(1, 6):  # five failed research attempts
                store.apply_event("venue:agree", MarketEvent.RESEARCH_STARTED, actor="t")
                store.apply_event(
                    "venue:agree", MarketEvent.FAILED, actor="t", updates={"failures": attempt}
                )
                if attempt < 5:
                    store.apply_event("venue:agree", MarketEvent.RETRY, actor="t")

            def killed(*args: object, **kwargs: object) -> int:
                raise RuntimeError("killed before the review item was written")

            try:
                with monkeypatch.context() as patch:
                    patch.setattr(store, "_insert_review", killed)
                    with pytest.raises(RuntimeError, match="killed"):
                        await assembly.daemon.promote()
                after_crash = store.get_market("venue:agree").state
                await assembly.daemon.promote()
                handed = store.get_market("venue:agree").state
                reasons = [r for item in store.reviews() for r in item.reasons]
            finally:
                await assembly.close()
            return after_crash, handed, reasons

    after_crash, handed, reasons = run(scenario)
    assert after_crash == MarketState.FAILED_RETRY
    assert handed == MarketState.NEEDS_REVIEW
    assert reasons == ["gave up after 5 failed research attempts"]


def test_a_dispute_and_reopening_within_the_window_send_the_market_back_to_research(
    database_url: str, tmp_path: Path
) -> None:
    replays = recordings(tmp_path / "replays")

    class Reopened:
        """A venue whose arbiter reopened the question before the watch job looked."""

        async def state(self, market: MarketRef) -> Resolution:
            return Resolution(ResolutionStatus.RESET)

    async def scenario() -> tuple[int, MarketRow]:
        async with serve(Venue(venue_markets()[:1])) as venue:
            settings = settings_for(database_url, tmp_path, venue, replays)
            assembly = assemble(settings, clock=lambda: 1_000.0)
            store = assembly.daemon.store
            try:
                await assembly.daemon.poll()
                for event in (
                    MarketEvent.DUE,
                    MarketEvent.RESEARCH_STARTED,
                    MarketEvent.RESEARCH_FINISHED,
                    MarketEvent.CONSENSUS_SUBMIT,
                ):
                    store.apply_event("venue:agree", event, actor="t")
                store.apply_event(
                    "venue:agree",
                    MarketEvent.PROPOSAL_CONFIRMED,
                    actor="t",
                    updates={"submission": {"round": 0}, "window_ends_at": 900.0},
                )
                assembly.daemon.resolvers["venue"] = Reopened()  # type: ignore[assignment]
                changed = await assembly.daemon.watch()
                return changed, store.get_market("venue:agree")
            finally:
                await assembly.close()

    changed, row = run(scenario)
    assert changed == 1
    assert (row.state, row.submission, row.window_ends_at) == (MarketState.DUE, {}, None)


def test_proofs_are_on_disk_when_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each proof file, and the directory holding its rename, is fsynced: a crash after
    the answer is delivered must not lose the proof its checksum commits to."""
    synced: set[tuple[int, int]] = set()
    fsync = os.fsync

    def recording_fsync(descriptor: int) -> None:
        status = os.fstat(descriptor)
        synced.add((status.st_dev, status.st_ino))
        fsync(descriptor)

    monkeypatch.setattr(os, "fsync", recording_fsync)
    replays = recordings(tmp_path / "replays")

    async def scenario() -> None:
        async with serve(Venue(venue_markets()[:2])) as venue:
            await one_pass(settings_for(f"sqlite:///{tmp_path / 'o.db'}", tmp_path, venue, replays))

    run(scenario)
    written = sorted((tmp_path / "proofs").glob("*/*"))
    assert {path.suffix for path in written} == {".json", ".md"}
    for path in [*written, *{path.parent for path in written}]:
        status = path.stat()
        assert (status.st_dev, status.st_ino) in synced, f"{path} was not fsynced"
    assert not list((tmp_path / "proofs").glob("*/*.tmp"))
