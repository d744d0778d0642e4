"""The store, run against SQLite and PostgreSQL alike."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import replace

import pytest
from sqlalchemy import Engine, text

from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.markets import MarketSpec
from oracle.core.models import AgentFailure, AgentResult
from oracle.errors import IllegalTransition, LeaseLost, StoreError
from oracle.store.engine import make_engine
from oracle.store.migrate import check, upgrade
from oracle.store.repository import Store
from oracle.testing import result


class FakeClock:
    def __init__(self, now: float = 1_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def engine(database_url: str) -> Iterator[Engine]:
    engine = make_engine(database_url)
    upgrade(engine)
    yield engine
    engine.dispose()


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def store(engine: Engine, clock: FakeClock) -> Store:
    return Store(engine, clock)


def spec(external_id: str, resolve_after: float = 500.0) -> MarketSpec:
    return MarketSpec(
        source="chain",
        external_id=external_id,
        question=f"Question {external_id}?",
        resolve_after=resolve_after,
        details={"question_id": external_id},
    )


def test_migrations_match_the_tables(engine: Engine) -> None:
    check(engine)  # raises when autogenerate would find a difference


def test_discovery_is_idempotent_and_audited(store: Store) -> None:
    assert store.add_discovered([spec("q1"), spec("q2")], actor="poller") == [
        "chain:q1",
        "chain:q2",
    ]
    assert store.add_discovered([spec("q1"), spec("q3")], actor="poller") == ["chain:q3"]
    market = store.get_market("chain:q1")
    assert market.state == MarketState.DISCOVERED
    assert market.details == {"question_id": "q1"}
    assert market.outcomes == ["YES", "NO"]
    [entry] = store.audit("chain:q1")
    assert (entry.from_state, entry.event, entry.to_state) == (None, "discovered", "discovered")
    assert store.count_by_state() == {"discovered": 3}


def test_an_unreadable_market_goes_straight_to_a_person_once_and_is_never_promoted(
    store: Store,
) -> None:
    reason = "unreadable: ancillary data: res_data p2: ambiguous"
    unreadable = replace(
        spec("q1"), outcomes=(), details={"unreadable": {"error": "ambiguous"}}, unreadable=reason
    )
    assert store.add_discovered([unreadable, spec("q2")], actor="poller") == [
        "chain:q1",
        "chain:q2",
    ]
    assert store.add_discovered([unreadable], actor="poller") == []  # listed again: no new item
    market = store.get_market("chain:q1")
    assert (market.state, market.outcomes) == (MarketState.NEEDS_REVIEW, [])
    [entry] = store.audit("chain:q1")
    assert (entry.from_state, entry.to_state) == (None, "needs_review")
    assert reason in entry.reason
    [item] = store.reviews()
    assert (item.market_id, item.reasons, item.status) == ("chain:q1", [reason], "open")
    # Past its time, only the readable one is promoted.
    assert store.promote_due(10_000.0, "poller") == ["chain:q2"]
    with pytest.raises(StoreError, match="a decision refused: market chain:q1 cannot be read"):
        store.decide_review(item.id, "INVALID", "looked", "alice")
    assert store.get_market("chain:q1").state == MarketState.NEEDS_REVIEW


def test_known_ids_are_those_tracked_however_many_are_asked(store: Store) -> None:
    store.add_discovered([spec("q1"), spec("q700")], actor="poller")
    # More ids than one statement takes: asked in slices, none left out.
    asked = [f"chain:q{n}" for n in range(1200)] + ["chain:q1", "other:q1"]
    assert store.known_ids(asked) == {"chain:q1", "chain:q700"}
    assert store.known_ids([]) == set()


def test_transition_is_recorded_with_time_reason_and_actor(store: Store, clock: FakeClock) -> None:
    store.add_discovered([spec("q1")], actor="poller")
    clock.now = 1_234.5
    row = store.apply_event(
        "chain:q1", MarketEvent.DUE, actor="scheduler", reason="resolve time passed"
    )
    assert row.state == MarketState.DUE
    entry = store.audit("chain:q1")[-1]
    assert (entry.at, entry.from_state, entry.event, entry.to_state, entry.reason, entry.actor) == (
        1_234.5,
        "discovered",
        "due",
        "due",
        "resolve time passed",
        "scheduler",
    )


def test_illegal_transition_changes_nothing(store: Store) -> None:
    store.add_discovered([spec("q1")], actor="poller")
    with pytest.raises(IllegalTransition):
        store.apply_event("chain:q1", MarketEvent.CONSENSUS_SUBMIT, actor="x")
    assert store.get_market("chain:q1").state == MarketState.DISCOVERED
    assert len(store.audit("chain:q1")) == 1


def test_claim_leases_and_lease_expiry(store: Store, clock: FakeClock) -> None:
    store.add_discovered([spec("q1"), spec("q2")], actor="poller")
    for market_id in ("chain:q1", "chain:q2"):
        store.apply_event(market_id, MarketEvent.DUE, actor="s")
    first = store.claim("replica-a", [MarketState.DUE], limit=10, lease_seconds=30)
    assert sorted(m.id for m in first) == ["chain:q1", "chain:q2"]
    assert store.claim("replica-b", [MarketState.DUE], limit=10, lease_seconds=30) == []
    # Only the lease holder may move the market.
    with pytest.raises(LeaseLost):
        store.apply_event(
            "chain:q1", MarketEvent.RESEARCH_STARTED, actor="b", lease_owner="replica-b"
        )
    store.apply_event("chain:q1", MarketEvent.RESEARCH_STARTED, actor="a", lease_owner="replica-a")
    clock.now += 31  # replica-a crashed; its leases expire
    taken = store.claim("replica-b", [MarketState.DUE, MarketState.RESEARCHING], 10, 30)
    assert sorted(m.id for m in taken) == ["chain:q1", "chain:q2"]
    with pytest.raises(LeaseLost):
        store.start_research("chain:q2", "replica-a", 1, "attempt 1")
    with pytest.raises(LeaseLost):
        store.apply_event("chain:q1", MarketEvent.FAILED, actor="a", lease_owner="replica-a")
    store.start_research("chain:q2", "replica-b", 1, "attempt 1")
    assert store.get_market("chain:q2").state == MarketState.RESEARCHING


def test_concurrent_claims_never_share_a_market(store: Store) -> None:
    store.add_discovered([spec(f"q{i}") for i in range(40)], actor="poller")
    for i in range(40):
        store.apply_event(f"chain:q{i}", MarketEvent.DUE, actor="s")
    claimed: dict[str, list[str]] = {}

    def worker(owner: str) -> None:
        mine: list[str] = []
        while batch := store.claim(owner, [MarketState.DUE], limit=3, lease_seconds=60):
            mine += [m.id for m in batch]
        claimed[owner] = mine

    threads = [threading.Thread(target=worker, args=(f"r{i}",)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    everything = [m for ids in claimed.values() for m in ids]
    assert sorted(everything) == sorted(f"chain:q{i}" for i in range(40))


def leased_run(store: Store, external_id: str, owner: str = "a") -> int:
    """A market of `external_id`, due, leased by `owner`, researching in the returned run."""
    store.add_discovered([spec(external_id)], actor="poller")
    store.apply_event(f"chain:{external_id}", MarketEvent.DUE, actor="s")
    store.claim(owner, [MarketState.DUE], limit=10, lease_seconds=30)
    _, run_id = store.start_research(f"chain:{external_id}", owner, 1, "attempt 1")
    return run_id


def test_research_answers_round_trip(store: Store, clock: FakeClock) -> None:
    run_id = leased_run(store, "q1")
    assert store.latest_run("chain:q1", "running") is not None
    answer = result("agent-a", "YES", 0.8, 50).model_copy(
        update={"provider": "anthropic", "model_family": "claude"}
    )
    quoted = answer.sources[0].model_copy(update={"quote": "The launch happened at 09:14."})
    answer = answer.model_copy(update={"sources": (quoted, *answer.sources[1:])})
    clock.now += 20
    row = store.finish_research(
        "chain:q1",
        "a",
        run_id,
        [(answer, 1.5), (AgentFailure(agent_id="agent-b", error="timeout"), 300.0)],
        lease_seconds=60,
        reason="run done",
    )
    assert (row.state, row.lease_expires_at) == (MarketState.CONSENSUS, clock.now + 60)
    results, failures = store.run_answers(run_id)
    assert results == [answer]
    assert failures == [AgentFailure(agent_id="agent-b", error="timeout")]
    assert store.latest_run("chain:q1", "done") is not None
    assert [e.event for e in store.audit("chain:q1")][-2:] == [
        MarketEvent.RESEARCH_STARTED,
        MarketEvent.RESEARCH_FINISHED,
    ]


def test_answers_of_a_lost_lease_are_not_stored(store: Store, clock: FakeClock) -> None:
    run_id = leased_run(store, "q1")
    clock.now += 31  # the lease ran out while the agents worked
    store.claim("b", [MarketState.RESEARCHING], limit=10, lease_seconds=30)
    with pytest.raises(LeaseLost):
        store.finish_research(
            "chain:q1", "a", run_id, [(result("x", "NO", 0.6, 3), 0.1)], lease_seconds=60, reason=""
        )
    assert store.run_answers(run_id) == ([], [])
    assert store.get_market("chain:q1").state == MarketState.RESEARCHING


def test_review_decision(store: Store) -> None:
    store.add_discovered([spec("q1")], actor="poller")
    for event in (
        MarketEvent.DUE,
        MarketEvent.RESEARCH_STARTED,
        MarketEvent.RESEARCH_FINISHED,
        MarketEvent.CONSENSUS_REVIEW,
    ):
        store.apply_event("chain:q1", event, actor="s")
    review_id = store.open_review("chain:q1", None, ["no consensus"])
    assert [r.id for r in store.reviews()] == [review_id]
    with pytest.raises(
        StoreError, match="'MAYBE' is not one of this market's outcomes: YES, NO, INVALID"
    ):
        store.decide_review(review_id, "MAYBE", "typo", "alice")
    market = store.decide_review(review_id, "NO", "official record", "alice")
    assert market.state == MarketState.REVIEWED
    assert market.decided_outcome == "NO"
    item = store.review(review_id)
    assert (item.status, item.decided_by, item.decided_reason) == (
        "decided",
        "alice",
        "official record",
    )
    assert store.reviews() == []
    with pytest.raises(StoreError, match="already decided by alice"):
        store.decide_review(review_id, "YES", "again", "bob")
    assert store.audit("chain:q1")[-1].actor == "alice"


def test_a_review_decided_on_a_market_not_awaiting_review_is_refused_and_changes_nothing(
    store: Store, clock: FakeClock
) -> None:
    store.add_discovered([spec("q1")], actor="poller")
    for event in (MarketEvent.DUE, MarketEvent.RESEARCH_STARTED, MarketEvent.RESEARCH_FINISHED):
        store.apply_event("chain:q1", event, actor="s")
    review_id = store.open_review("chain:q1", None, ["opened early"])  # still in consensus
    before, history = store.get_market("chain:q1"), store.audit("chain:q1")
    clock.now += 10
    with pytest.raises(
        IllegalTransition, match="'review_decided' is not allowed in state 'consensus'"
    ):
        store.decide_review(review_id, "NO", "official record", "alice")
    after = store.get_market("chain:q1")
    assert (after.state, after.version, after.decided_outcome, after.state_changed_at) == (
        before.state,
        before.version,
        before.decided_outcome,
        before.state_changed_at,
    )
    assert store.audit("chain:q1") == history
    item = store.review(review_id)
    assert (item.status, item.decided_outcome, item.decided_by) == ("open", None, None)
    assert [r.id for r in store.reviews()] == [review_id]


def test_a_decided_review_is_audited_as_the_tables_move(store: Store, clock: FakeClock) -> None:
    store.add_discovered([spec("q1")], actor="poller")
    store.apply_event("chain:q1", MarketEvent.DUE, actor="s")
    store.apply_event("chain:q1", MarketEvent.RESEARCH_STARTED, actor="s")
    store.apply_event("chain:q1", MarketEvent.FAILED, actor="s", updates={"next_attempt_at": 5e9})
    _, review_id = store.hand_to_person(
        "chain:q1", MarketEvent.RETRIES_EXHAUSTED, actor="s", reasons=["gave up"]
    )
    version = store.get_market("chain:q1").version
    clock.now = 2_000.0
    market = store.decide_review(review_id, "YES", "seen it", "alice")
    stored = store.get_market("chain:q1")
    assert (stored.state, stored.decided_outcome, stored.next_attempt_at) == (
        MarketState.REVIEWED,
        "YES",
        0.0,
    )
    assert (stored.state_changed_at, stored.version) == (2_000.0, version + 1)
    assert (market.state, market.version) == (stored.state, stored.version)
    entry = store.audit("chain:q1")[-1]
    assert (entry.from_state, entry.event, entry.to_state, entry.actor, entry.reason) == (
        "needs_review",
        "review_decided",
        "reviewed",
        "alice",
        f"review {review_id}: YES (seen it)",
    )
    assert store.review(review_id).decided_at == 2_000.0


def test_a_state_cannot_be_written_as_an_update_beside_an_event(store: Store) -> None:
    store.add_discovered([spec("q1")], actor="poller")
    with pytest.raises(StoreError, match="only by an event of the lifecycle table"):
        store.apply_event("chain:q1", MarketEvent.DUE, actor="x", updates={"state": "final"})
    assert store.get_market("chain:q1").state == MarketState.DISCOVERED
    assert len(store.audit("chain:q1")) == 1


def test_a_reset_seen_after_the_window_sends_a_submitted_market_back(store: Store) -> None:
    store.add_discovered([spec("q1")], actor="poller")
    for event in (
        MarketEvent.DUE,
        MarketEvent.RESEARCH_STARTED,
        MarketEvent.RESEARCH_FINISHED,
        MarketEvent.CONSENSUS_SUBMIT,
        MarketEvent.PROPOSAL_CONFIRMED,
    ):
        store.apply_event("chain:q1", event, actor="s")
    row = store.apply_event("chain:q1", MarketEvent.PROPOSAL_RESET, actor="watch")
    assert row.state == MarketState.DUE


def test_singleton_job_lease(store: Store, clock: FakeClock) -> None:
    assert store.try_acquire_job("poll", "a", 10)
    assert not store.try_acquire_job("poll", "b", 10)
    assert store.try_acquire_job("poll", "a", 10)  # renewal
    clock.now += 11
    assert store.try_acquire_job("poll", "b", 10)
    assert not store.try_acquire_job("poll", "a", 10)


def test_checkpoints(store: Store) -> None:
    assert store.get_checkpoint("scan:31337") is None
    store.set_checkpoint("scan:31337", {"block": 10})
    store.set_checkpoint("scan:31337", {"block": 20})
    assert store.get_checkpoint("scan:31337") == {"block": 20}


def test_unknown_records_are_named(store: Store) -> None:
    with pytest.raises(StoreError, match="market 'nope' is not known"):
        store.get_market("nope")
    with pytest.raises(StoreError, match="review 9 does not exist"):
        store.review(9)


def test_answers_are_core_models(store: Store) -> None:
    run_id = leased_run(store, "q1")
    store.finish_research(
        "chain:q1", "a", run_id, [(result("x", "NO", 0.6, 3), 0.1)], lease_seconds=30, reason=""
    )
    [answer], _ = store.run_answers(run_id)
    assert isinstance(answer, AgentResult)
    assert len(answer.sources) == 3


def test_due_markets_are_promoted_together(store: Store, clock: FakeClock) -> None:
    store.add_discovered(
        [spec("q1", resolve_after=900), spec("q2", resolve_after=1_000), spec("q3", 1_001)],
        actor="poller",
    )
    assert store.promote_due(clock.now, actor="scheduler", limit=1) == ["chain:q1"]
    assert store.promote_due(clock.now, actor="scheduler") == ["chain:q2"]
    assert store.promote_due(clock.now, actor="scheduler") == []
    assert store.get_market("chain:q3").state == MarketState.DISCOVERED
    [_, entry] = store.audit("chain:q2")
    assert (entry.event, entry.to_state, entry.actor) == ("due", "due", "scheduler")


def test_a_market_to_settle_is_found_behind_a_thousand_settled_ones(store: Store) -> None:
    specs = [
        MarketSpec(
            source="chain",
            external_id=f"q{i:04d}",
            question="q?",
            resolve_after=0.0,
            details={"callback": "0x00000000000000000000000000000000000000c0"},
            awaits_settlement=True,
        )
        for i in range(1001)
    ]
    store.add_discovered(specs, actor="t")
    with store.engine.begin() as connection:  # all final; the first 1,000 settled
        connection.execute(text("UPDATE market SET state = 'final'"))
    for spec_ in specs[:1000]:
        store.mark_settled(spec_.market_id, "0xdone")
    assert [m.id for m in store.markets_to_settle()] == [specs[1000].market_id]
    store.mark_settled(specs[1000].market_id, "0xdone")
    assert store.markets_to_settle() == []


def test_replicas_share_due_work_by_load_whoever_found_it(store: Store, clock: FakeClock) -> None:
    def claim(owner: str, in_flight: int, limit: int = 100) -> int:
        rows = store.claim(
            owner, [MarketState.DUE], limit, lease_seconds=30, share_within=5, in_flight=in_flight
        )
        return len(rows)

    def found(count: int) -> None:
        clock.now += 1
        store.add_discovered([spec(f"m{clock.now}-{i}") for i in range(count)], actor="poller")
        store.promote_due(clock.now, "poller")

    found(10)
    assert claim("a", in_flight=0, limit=4) == 4  # alone: all it has room for
    assert claim("b", in_flight=0) == 5  # now two: 5 each of the 10
    assert claim("a", in_flight=4) == 1
    # A trickle: a market goes to the replica with less in flight, even when the other
    # one found it.
    found(1)
    assert claim("a", in_flight=6) == 0
    assert claim("b", in_flight=5) == 1
    # A replica that left no longer counts: the other takes all.
    found(3)
    store.leave("b")
    assert claim("a", in_flight=6) == 3


def test_leaving_frees_the_singleton_jobs_at_once(store: Store) -> None:
    assert store.try_acquire_job("poll", "a", lease_seconds=45)
    assert not store.try_acquire_job("poll", "b", lease_seconds=45)
    store.leave("a")
    assert store.try_acquire_job("poll", "b", lease_seconds=45)


def test_handing_to_a_person_moves_and_opens_the_item_together(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    [market_id] = store.add_discovered([spec("q1")], actor="t")
    for event in (MarketEvent.DUE, MarketEvent.RESEARCH_STARTED, MarketEvent.FAILED):
        store.apply_event(market_id, event, actor="t")

    def crash(*args: object, **kwargs: object) -> int:
        raise RuntimeError("killed between the move and the review item")

    monkeypatch.setattr(store, "_insert_review", crash)
    with pytest.raises(RuntimeError):
        store.hand_to_person(
            market_id, MarketEvent.RETRIES_EXHAUSTED, actor="t", reasons=["gave up"]
        )
    assert store.get_market(market_id).state == MarketState.FAILED_RETRY, "rolled back"
    monkeypatch.undo()
    _, review_id = store.hand_to_person(
        market_id, MarketEvent.RETRIES_EXHAUSTED, actor="t", reasons=["gave up"]
    )
    assert store.get_market(market_id).state == MarketState.NEEDS_REVIEW
    assert store.review(review_id).reasons == ["gave up"]


def test_each_market_is_due_by_its_venues_clock(store: Store, clock: FakeClock) -> None:
    store.add_discovered(
        [
            MarketSpec(source="chain", external_id="c", question="c?", resolve_after=900.0),
            MarketSpec(source="slow", external_id="s", question="s?", resolve_after=900.0),
            MarketSpec(source="web", external_id="w", question="w?", resolve_after=900.0),
        ],
        actor="t",
    )
    # The daemon's clock says 1,000; the chain's says 950, the slow venue's is unknown.
    promoted = store.promote_due(1000.0, "t", venue_times={"chain": 950.0, "slow": None})
    assert sorted(promoted) == ["chain:c", "web:w"]
    assert store.promote_due(1000.0, "t", venue_times={"chain": 850.0, "slow": 899.0}) == []
    assert store.promote_due(1000.0, "t", venue_times={"slow": 900.0}) == ["slow:s"]


def test_a_decision_proof_is_stored_with_the_move_it_makes(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    [market_id] = store.add_discovered([spec("q1")], actor="t")
    for event in (
        MarketEvent.DUE,
        MarketEvent.RESEARCH_STARTED,
        MarketEvent.RESEARCH_FINISHED,
        MarketEvent.CONSENSUS_REVIEW,
        MarketEvent.REVIEW_DECIDED,
    ):
        store.apply_event(market_id, event, actor="t")
    assert len(store.claim("r", [MarketState.REVIEWED], 1, lease_seconds=30)) == 1
    proof = {"checksum": "ab" * 32, "kind": "human_decision"}
    # Another replica took the market over: nothing is stored.
    with pytest.raises(LeaseLost):
        store.start_delivery_of_decision(market_id, "other", "NO", proof, reason="r")
    assert store.latest_consensus(market_id) is None
    moved = store.start_delivery_of_decision(market_id, "r", "NO", proof, reason="decided")
    assert (moved.state, moved.decided_outcome) == (MarketState.SUBMITTING, "NO")
    stored = store.latest_consensus(market_id)
    assert stored is not None
    assert (stored.action, stored.checksum) == ("decided", "ab" * 32)


def test_the_migration_carries_existing_markets_over(database_url: str) -> None:
    engine = make_engine(database_url)
    try:
        upgrade(engine, "1e57e53838e3")
        rows = [
            ("chain:retrying", "failed_retry", 3, {}, {}),
            ("chain:final", "final", 1, {"callback": "0xc0"}, {}),
            ("chain:settled", "final", 1, {"callback": "0xc0"}, {"settled": "0x1"}),
            ("chain:waiting", "submitted", 1, {}, {"final_after": 1234.5}),
        ]
        with engine.begin() as connection:
            for market_id, state, attempts, details, submission in rows:
                connection.execute(
                    text(
                        "INSERT INTO market (id, source, external_id, question, criteria, "
                        "outcomes, details, resolve_after, state, state_changed_at, attempts, "
                        "next_attempt_at, lease_expires_at, submission, version, created_at) "
                        "VALUES (:id, 'chain', :id, 'q?', '', '[]', :details, 0, :state, 0, "
                        ":attempts, 0, 0, :submission, 0, 0)"
                    ),
                    {
                        "id": market_id,
                        "state": state,
                        "attempts": attempts,
                        "details": json.dumps(details),
                        "submission": json.dumps(submission),
                    },
                )
        upgrade(engine)
        store = Store(engine)
        assert store.get_market("chain:retrying").failures == 3
        assert store.get_market("chain:final").awaits_settlement
        assert not store.get_market("chain:settled").awaits_settlement
        assert [m.id for m in store.markets_to_settle()] == ["chain:final"]
        assert store.get_market("chain:waiting").window_ends_at == 1234.5
        assert store.get_market("chain:final").window_ends_at is None
    finally:
        engine.dispose()


def test_every_submitted_market_is_watched_its_window_running_or_over(store: Store) -> None:
    """Past a thousand answers still in their windows (a dispute there is seen at once),
    every submitted market and a disputed one are found, page by page; a venue whose clock
    cannot be read has only its disputed markets watched."""
    specs = [spec(f"q{i:04d}") for i in range(1003)]
    store.add_discovered(specs, actor="t")
    with store.engine.begin() as connection:  # all submitted; windows end at 2,000
        connection.execute(text("UPDATE market SET state = 'submitted', window_ends_at = 2000"))
        connection.execute(
            text("UPDATE market SET window_ends_at = 1500 WHERE id = :id"),
            {"id": specs[1000].market_id},
        )
        connection.execute(
            text("UPDATE market SET state = 'disputed' WHERE id = :id"),
            {"id": specs[1001].market_id},
        )
        connection.execute(
            text("UPDATE market SET state = 'final' WHERE id = :id"),
            {"id": specs[1002].market_id},
        )
    found: list[str] = []
    after = ""
    while page := store.markets_to_watch(after=after, limit=300):
        found += [m.id for m in page]
        after = page[-1].id
    assert found == [s.market_id for s in specs[:1002]]
    dark = store.markets_to_watch(unreadable=["chain"])
    assert [m.id for m in dark] == [specs[1001].market_id]
    # A venue whose events report disputes: only the windows over (and the disputed) are read.
    assert [m.id for m in store.markets_to_watch(fed={"chain": 1600})] == [
        specs[1000].market_id,
        specs[1001].market_id,
    ]
    assert len(store.markets_to_watch(fed={"other": 1600}, limit=2000)) == 1002
    answered = store.markets_by_external_id(
        "chain",
        [specs[0].external_id, specs[1002].external_id],
        (MarketState.SUBMITTED, MarketState.DISPUTED),
    )
    assert [m.id for m in answered] == [specs[0].market_id], "final markets are not read again"


def test_a_moved_market_reads_in_a_process_that_ran_no_orm_query(
    engine: Engine, database_url: str
) -> None:
    # `oracle review decide` is such a process: its one call builds the returned row.
    Store(engine).add_discovered([spec("q1")], actor="poller")
    program = (
        "import sys\n"
        "from oracle.core.lifecycle import MarketEvent\n"
        "from oracle.store.engine import make_engine\n"
        "from oracle.store.repository import Store\n"
        "store = Store(make_engine(sys.argv[1]))\n"
        "row = store.apply_event('chain:q1', MarketEvent.DUE, actor='t')\n"
        "print(row.id, row.state)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", program, database_url], capture_output=True, text=True, check=False
    )
    assert (done.returncode, done.stdout.strip()) == (0, "chain:q1 due"), done.stderr
