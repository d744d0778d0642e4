"""The review console's records, on SQLite and PostgreSQL alike: accounts, sessions,
API tokens, sign-in throttling, the hash-chained audit log, decisions bound to the
evidence shown, four-eyes approval, reopening and sending back."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Iterator

import pytest
from argon2 import extract_parameters
from argon2.exceptions import VerifyMismatchError
from sqlalchemy import Engine, text, update

from oracle.core.audit import AuditHead, anchor_problems, export_differences
from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.errors import AccessDenied, IllegalTransition, StaleDecision, StoreError
from oracle.store import console
from oracle.store.console import SignInLimits
from oracle.store.engine import make_engine
from oracle.store.migrate import upgrade
from oracle.store.repository import Store
from oracle.store.reviews import QueueQuery, Seen
from oracle.store.tables import MarketRow
from tests.console.helpers import cut_audit_tail, rewrite_audit
from tests.console.scenario import (
    agreeing,
    beside_another_answer,
    contested,
    escalate,
    research_again,
    superseded_for_review,
)

PASSWORD = "correct horse battery"


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
    store = Store(engine, clock)
    for name, role in (("rita", "reviewer"), ("ann", "approver"), ("val", "viewer")):
        store.add_user(name, role, PASSWORD)
    return store


def test_an_unknown_name_is_verified_against_a_hash_that_costs_what_an_accounts_does() -> None:
    """The stand-in hash is written out, not hashed: it must carry the hasher's own
    parameters (so verifying against it takes as long as against an account's) and fail
    as a wrong password does, never as a malformed hash (which fails at once)."""
    account_hash = console._HASHER.hash(PASSWORD)
    assert extract_parameters(console._DUMMY_HASH) == extract_parameters(account_hash)
    for password in (PASSWORD, "not a password of anyone", ""):
        with pytest.raises(VerifyMismatchError):
            console._HASHER.verify(console._DUMMY_HASH, password)


def seen(store: Store, review_id: int) -> Seen:
    consensus = store.latest_consensus(store.review(review_id).market_id)
    assert consensus is not None
    return Seen(consensus.id, consensus.checksum)


def test_accounts_are_checked_and_passwords_stored_only_as_argon2_hashes(
    store: Store, engine: Engine
) -> None:
    assert store.authenticate("rita", PASSWORD) is not None
    assert store.authenticate("rita", "wrong password") is None
    assert store.authenticate("nobody", PASSWORD) is None
    with engine.connect() as connection:
        hashes = connection.execute(text("SELECT password_hash FROM console_user")).scalars()
        assert all(h.startswith("$argon2id$") and PASSWORD not in h for h in hashes)
    with pytest.raises(StoreError, match="already exists"):
        store.add_user("rita", "viewer", PASSWORD)
    with pytest.raises(StoreError, match="role 'boss' is not one of viewer, reviewer"):
        store.add_user("bob", "boss", PASSWORD)
    with pytest.raises(StoreError, match="at least 10 characters"):
        store.add_user("bob", "viewer", "short")
    with pytest.raises(StoreError, match="user name"):
        store.add_user("<script>", "viewer", PASSWORD)


def test_sessions_and_tokens_are_stored_hashed_and_expire(
    store: Store, engine: Engine, clock: FakeClock
) -> None:
    rita = store.person("rita")
    token, csrf = store.start_session(rita, ttl_seconds=60)
    signed_in = store.session_person(token)
    assert signed_in is not None
    assert (signed_in.person.name, signed_in.csrf_token) == ("rita", csrf)
    api_token = store.create_token("ann")
    assert store.token_person(api_token).name == "ann"
    with engine.connect() as connection:
        stored = connection.execute(text("SELECT token_hash FROM console_session")).scalars()
        stored_tokens = connection.execute(
            text("SELECT token_hash FROM console_api_token")
        ).scalars()
        assert token not in list(stored)
        assert api_token not in list(stored_tokens)
    with pytest.raises(AccessDenied, match="not valid") as denied:
        store.token_person(api_token + "x")
    assert api_token not in str(denied.value)
    clock.now += 61
    assert store.session_person(token) is None
    token, _ = store.start_session(rita, ttl_seconds=60)
    store.end_session(token)
    assert store.session_person(token) is None


def test_failed_sign_ins_delay_an_account_progressively_up_to_a_cap(
    store: Store, clock: FakeClock
) -> None:
    limits = SignInLimits(
        free_failures=3, window_seconds=600.0, max_delay_seconds=30.0, address_max_failures=1000
    )
    rita, here = "account:user:rita", "address:10.0.0.1"
    waits = []
    for _ in range(8):
        assert store.sign_in_wait(rita, here) == 0.0
        failure = store.sign_in_failed(rita, here, limits)
        waits.append(failure.account_wait)
        clock.now += failure.account_wait  # a patient guesser, waiting each time
    assert waits == [0.0, 0.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    assert store.sign_in_wait(rita, here) == 0.0
    assert store.sign_in_failed(rita, here, limits).account_wait == 30.0
    clock.now += 10
    assert store.sign_in_wait(rita, here) == 20.0  # never more than the cap
    assert store.sign_in_wait(rita, "address:10.0.0.2") == 20.0  # the account, from anywhere
    assert store.sign_in_wait("account:user:ann", here) == 0.0  # others unaffected
    clock.now += 20 + 600  # a quiet window after the last wait forgives
    assert store.sign_in_failed(rita, here, limits).account_failures == 1
    store.sign_in_failed(rita, here, limits)
    store.sign_in_succeeded(rita)
    assert store.sign_in_failed(rita, here, limits).account_failures == 1


def test_an_address_failing_on_many_accounts_waits_for_its_window_to_end(
    store: Store, clock: FakeClock
) -> None:
    limits = SignInLimits(
        free_failures=100, window_seconds=600.0, max_delay_seconds=30.0, address_max_failures=3
    )
    there = "address:203.0.113.9"
    blocked = [
        store.sign_in_failed(f"account:user:{name}", there, limits).address_blocked
        for name in ("rita", "ann", "val")
    ]
    assert blocked == [False, False, True]
    clock.now += 100
    assert store.sign_in_wait("account:user:rita", there) == 500.0
    assert store.sign_in_wait("account:user:rita", "address:203.0.113.10") == 0.0
    store.sign_in_succeeded("account:user:rita")  # one account's success resets no address
    assert store.sign_in_wait("account:user:rita", there) == 500.0
    clock.now += 501
    assert store.sign_in_wait("account:user:rita", there) == 0.0
    assert not store.sign_in_failed("account:user:rita", there, limits).address_blocked


def test_the_audit_chain_verifies_and_finds_tampering(store: Store, engine: Engine) -> None:
    store.record("rita", "review.viewed", "market:chain:q1", {"review": 1})
    store.record("ann", "review.viewed", "market:chain:q1", {"review": 1, "note": "é ✓"})
    entries = store.audit_entries()
    assert [e["action"] for e in entries][-2:] == ["review.viewed", "review.viewed"]
    assert entries[0]["prev_hash"] == "0" * 64
    assert all(b["prev_hash"] == a["hash"] for a, b in itertools.pairwise(entries))
    assert store.verify_audit() == []
    last = entries[-1]["id"]
    with engine.begin() as connection:
        connection.execute(
            text("UPDATE console_audit SET actor = 'mallory' WHERE id = :id"), {"id": last - 1}
        )
    assert store.verify_audit() == [f"entry {last - 1}: hash does not match its content"]
    with engine.begin() as connection:
        connection.execute(text("DELETE FROM console_audit WHERE id = :id"), {"id": last - 1})
    problems = store.verify_audit()
    assert any("gap or reorder" in p for p in problems)
    assert any("prev_hash does not match" in p for p in problems)


def append_then_fail(store: Store) -> None:
    with store._writing() as connection:
        store._append_audit(connection, "rita", "review.viewed", "market:chain:q2", {})
        raise RuntimeError("the transaction fails after the append")


def test_each_committed_entry_publishes_the_head_and_a_rolled_back_one_does_not(
    store: Store, caplog: pytest.LogCaptureFixture
) -> None:
    heads: list[AuditHead] = []
    store.audit_head_listeners.append(heads.append)
    with caplog.at_level(logging.INFO, logger="oracle.console.audit"):
        store.record("rita", "review.viewed", "market:chain:q1", {"review": 1})
        with pytest.raises(RuntimeError, match="fails after the append"):
            append_then_fail(store)
    head = store.audit_head()
    assert heads == [head]  # the rolled-back entry was never published
    assert head == AuditHead(4, store.audit_entries()[-1]["hash"])
    published = [r for r in caplog.records if getattr(r, "event", "") == "console.audit_appended"]
    assert [r.fields for r in published] == [  # type: ignore[attr-defined]
        {"entries": 4, "head_hash": head.head_hash, "action": "review.viewed"}
    ]


def test_a_cut_tail_and_a_rehashed_rewrite_pass_the_chain_but_not_its_anchor(
    store: Store,
) -> None:
    for number in range(3):
        store.record("rita", "review.viewed", f"market:chain:q{number}", {"review": number})
    anchor, exported = store.audit_head(), store.audit_entries()
    rewrite_audit(store, 2, actor="mallory")
    cut_audit_tail(store, 2)
    assert store.verify_audit() == []  # the chain alone still holds
    assert anchor_problems(store.audit_entries(), anchor) == [
        "the log ends at entry 4 but the anchor counts 6: entries 5..6 were removed "
        "(the tail was cut)"
    ]
    problems = export_differences(store.audit_entries(), exported)
    assert problems[0] == "entry 2: actor was 'admin', now 'mallory'"
    assert problems[1].startswith("the log ends at entry 4 but the anchored export has 6")
    assert [p.split(" (")[0] for p in problems[2:]] == ["entry 5: removed", "entry 6: removed"]


def test_a_decision_on_evidence_newer_research_replaced_is_refused(store: Store) -> None:
    review_id = escalate(store, "q1")
    shown = seen(store, review_id)
    market_id = store.review(review_id).market_id
    # Sent back, researched again: the consensus the reviewer saw is no longer the latest.
    store.send_back_for_research(review_id, "rita", "need the official record")
    assert store.get_market(market_id).state == MarketState.DUE
    newer = research_again(store, market_id, contested())
    with pytest.raises(StaleDecision, match="newer research replaced the evidence shown"):
        store.decide_review(newer, "YES", "seen it", "rita", seen=shown)
    assert store.review(newer).status == "open"
    market = store.decide_review(newer, "YES", "seen it", "rita", seen=seen(store, newer))
    assert market.state == MarketState.REVIEWED
    assert store.review(newer).seen_checksum == seen(store, newer).checksum


def test_four_eyes_an_invalid_decision_waits_for_another_approver(store: Store) -> None:
    review_id = escalate(store, "q1")
    market = store.decide_review(
        review_id, "INVALID", "ambiguous", "rita", seen=seen(store, review_id)
    )
    assert market.state == MarketState.NEEDS_REVIEW  # the daemon finds nothing to deliver
    item = store.review(review_id)
    assert (item.status, item.approval_reason) == ("needs_approval", "INVALID is decided")
    assert store.decided_review(market.id) is None
    with pytest.raises(AccessDenied, match=r"rita \(reviewer\) may not approve"):
        store.approve_review(review_id, "rita")
    with pytest.raises(AccessDenied, match=r"val \(viewer\) may not approve"):
        store.approve_review(review_id, "val")
    approved = store.approve_review(review_id, "ann")
    assert (approved.state, approved.decided_outcome) == (MarketState.REVIEWED, "INVALID")
    decided = store.decided_review(market.id)
    assert decided is not None
    assert decided.approved_by == "ann"
    actions = [e["action"] for e in store.audit_entries(f"market:{market.id}")]
    assert actions == ["review.decided", "review.approved"]


def test_four_eyes_an_approver_cannot_approve_their_own_override_of_a_quorum(
    store: Store,
) -> None:
    review_id = escalate(store, "q1", agreeing(), force_review=True)
    store.decide_review(review_id, "NO", "the record says no", "ann", seen=seen(store, review_id))
    item = store.review(review_id)
    assert item.approval_reason == "overrides the consensus YES, which reached quorum"
    with pytest.raises(AccessDenied, match="another person must approve"):
        store.approve_review(review_id, "ann")
    store.add_user("adam", "admin", PASSWORD)
    assert store.approve_review(review_id, "adam").state == MarketState.REVIEWED


def test_agreeing_with_a_quorum_needs_no_approval(store: Store) -> None:
    review_id = escalate(store, "q1", agreeing(), force_review=True)
    market = store.decide_review(review_id, "YES", "agreed", "rita", seen=seen(store, review_id))
    assert market.state == MarketState.REVIEWED
    assert store.review(review_id).approval_reason is None


def test_a_decision_is_reopened_before_delivery_but_not_after(store: Store) -> None:
    review_id = escalate(store, "q1")
    market_id = store.review(review_id).market_id
    store.decide_review(review_id, "YES", "seen it", "rita", seen=seen(store, review_id))
    store.reopen_review(review_id, "rita")
    assert store.get_market(market_id).state == MarketState.NEEDS_REVIEW
    item = store.review(review_id)
    assert (item.status, item.decided_outcome, item.decided_by) == ("open", None, None)
    store.decide_review(review_id, "INVALID", "ambiguous", "rita", seen=seen(store, review_id))
    store.reopen_review(review_id, "ann")  # awaiting approval: nothing moved yet
    assert store.review(review_id).status == "open"
    store.decide_review(review_id, "NO", "seen it", "rita", seen=seen(store, review_id))
    store.apply_event(market_id, MarketEvent.SUBMISSION_STARTED, actor="daemon")
    with pytest.raises(StoreError, match="too late to reopen"):
        store.reopen_review(review_id, "rita")


def test_claims_and_the_queue_in_one_query(store: Store) -> None:
    first = escalate(store, "q1")
    second = escalate(store, "q2")
    store.claim_review(first, "rita", assignee="rita")
    with pytest.raises(StoreError, match="claimed by rita"):
        store.claim_review(first, "ann", assignee="ann")
    store.claim_review(first, "ann", assignee=None)
    store.claim_review(first, "ann", assignee="ann")
    queue = store.review_queue()
    assert [(item.id, market.id, item.claimed_by) for item, market in queue] == [
        (first, "chain:q1", "ann"),
        (second, "chain:q2", None),
    ]


def test_disabling_an_account_ends_its_sessions_and_tokens(store: Store) -> None:
    rita = store.person("rita")
    session, _ = store.start_session(rita, ttl_seconds=600)
    first, second = store.create_token("rita"), store.create_token("rita")
    assert store.revoke_tokens("rita", "adam") == 2
    with pytest.raises(AccessDenied):
        store.token_person(first)
    third = store.create_token("rita")
    store.disable_user("rita", "adam")
    assert store.session_person(session) is None
    assert store.authenticate("rita", PASSWORD) is None
    for token in (second, third):
        with pytest.raises(AccessDenied):
            store.token_person(token)
    with pytest.raises(AccessDenied, match="no active console account named 'rita'"):
        store.person("rita")
    actions = [e["action"] for e in store.audit_entries("user:rita")]
    assert actions[-3:] == ["token.revoked", "token.created", "user.disabled"]


def test_a_disagreement_is_confirmed_or_declined_only_where_the_venue_offers_it(
    store: Store,
) -> None:
    shown_only = beside_another_answer(store, "r1", challenge=None)
    with pytest.raises(StoreError, match="not set to answer back"):
        store.decide_review(shown_only, "YES", "they are wrong", "rita")
    assert store.review(shown_only).status == "open"
    assert store.get_market("uma:r1").state == MarketState.SUBMITTED

    declined = beside_another_answer(store, "r2", challenge="dispute")
    kept = store.decide_review(declined, "NO", "they are right", "rita")
    assert (kept.state, kept.decided_outcome) == (MarketState.SUBMITTED, "YES")
    item = store.review(declined)
    assert (item.status, item.decided_outcome, item.decided_by) == ("closed", "NO", "rita")
    assert [e["action"] for e in store.audit_entries("market:uma:r2")] == [
        "review.challenge_declined"
    ]
    assert [a.event for a in store.audit("uma:r2")][-1] == "proposal_confirmed"

    # Four-eyes holds for a confirmation: INVALID waits for an approver, the market with it.
    confirmed = beside_another_answer(store, "r3", challenge="dispute")
    waiting = store.decide_review(confirmed, "INVALID", "neither", "rita")
    assert waiting.state == MarketState.SUBMITTED
    assert store.review(confirmed).status == "needs_approval"
    approved = store.approve_review(confirmed, "ann")
    assert (approved.state, approved.decided_outcome) == (MarketState.CHALLENGING, "INVALID")
    assert approved.submission["challenge_pending"] == {
        "review": confirmed,
        "action": "dispute",
        "outcome": "INVALID",
        "by": "ann",
    }
    assert store.audit("uma:r3")[-1].event == "challenge_confirmed"
    # Once confirmed, nothing more is offered: a second item cannot confirm it again.
    again = store.open_review("uma:r3", None, ["again"])
    with pytest.raises(IllegalTransition):
        store.decide_review(again, "YES", "twice", "rita")


def test_a_defence_is_offered_only_to_a_disputed_market_whose_answer_was_superseded(
    store: Store,
) -> None:
    # A disputed market (another's answer superseded ours) with a defence on offer:
    # deciding their outcome accepts it (nothing sent, still disputed); ours confirms it.
    accepted = superseded_for_review(store, "q1")
    kept = store.decide_review(accepted, "NO", "they are right", "rita")
    assert kept.state == MarketState.DISPUTED
    assert store.review(accepted).status == "closed"
    confirmed = superseded_for_review(store, "q2")
    moved = store.decide_review(confirmed, "YES", "they are wrong", "rita")
    assert moved.state == MarketState.CHALLENGING
    assert moved.submission["challenge_pending"]["action"] == "defend"
    assert store.audit("reality:q2")[-1].event == "challenge_confirmed"

    # A disputed market without that offer (an arbiter decides, or counter_answer: never)
    # has nothing a decision could send: refused, nothing moves.
    other = superseded_for_review(store, "q3")
    store.apply_event(
        "reality:q3",
        MarketEvent.CHALLENGE_CONFIRMED,
        actor="s",
        updates={"submission": {"challenge_pending": {"action": "defend"}}},
    )
    store.apply_event("reality:q3", MarketEvent.CHALLENGE_ANSWERED, actor="s")
    store.apply_event("reality:q3", MarketEvent.DISPUTED, actor="s")
    item = store.open_review("reality:q3", None, ["disputed"])
    with pytest.raises(StoreError, match="not set to answer back"):
        store.decide_review(item, "YES", "again", "rita")
    assert store.get_market("reality:q3").state == MarketState.DISPUTED
    assert store.review(other).status == "open"
    # The offer to a submitted market (dispute, counter-answer) is not one to a disputed one.
    beside = beside_another_answer(store, "r9", challenge="dispute")
    store.apply_event("uma:r9", MarketEvent.DISPUTED, actor="s")
    with pytest.raises(StoreError, match="not set to answer back"):
        store.decide_review(beside, "YES", "they are wrong", "rita")


def _set_market(store: Store, market_id: str, **values: object) -> None:
    table = MarketRow.__table__  # type: ignore[attr-defined]
    with store.engine.begin() as connection:
        connection.execute(update(table).where(table.c.id == market_id).values(**values))


def test_the_queue_pages_by_deadline_with_search_and_filters(store: Store) -> None:
    # Deadlines: the venue's challenge window, else the answer window's end, else the
    # resolve-after time; soonest first, whatever the order the items came in.
    late = escalate(store, "late", question="Will 100% of votes be counted?", resolve_after=900.0)
    windowed = escalate(store, "window", question="Will the bridge open?", resolve_after=100.0)
    _set_market(store, "chain:window", window_ends_at=5_000.0)
    answer = escalate(store, "answer", question="Will it snow_in June?", resolve_after=50.0)
    _set_market(
        store,
        "chain:answer",
        answer_window={"closes_at": 2_000.0, "origin": "question", "evidence": "June"},
    )
    early = escalate(store, "early", question="Will the dam hold?", resolve_after=300.0)
    store.claim_review(early, "rita", assignee="rita")

    def page(**query: object) -> tuple[list[int | None], int]:
        rows, total = store.review_page(QueueQuery(**query))  # type: ignore[arg-type]
        return [item.id for item, _ in rows], total

    assert page() == ([early, late, answer, windowed], 4)
    assert page(per_page=2) == ([early, late], 4)
    assert page(per_page=2, page=2) == ([answer, windowed], 4)
    assert page(per_page=2, page=3) == ([], 4)
    # Search: the question's words or the market id, case-insensitive; "%" and "_" are
    # only characters, never wildcards.
    assert page(search="BRIDGE") == ([windowed], 1)
    assert page(search="chain:ear") == ([early], 1)
    assert page(search="100%") == ([late], 1)
    assert page(search="snow_in") == ([answer], 1)
    assert page(search="w_ll") == ([], 0)
    assert page(assignee="rita") == ([early], 1)
    assert page(assignee="nobody") == ([late, answer, windowed], 3)
    assert page(venue="chain", reason="agree") == page(reason="agree")
    assert page(venue="uma") == ([], 0)
    other = beside_another_answer(store, "r1", challenge="dispute")
    assert page(venue="uma") == ([other], 1)
    assert page(reason="they proposed NO") == ([other], 1)
    store.decide_review(late, "INVALID", "unclear", "rita", seen=seen(store, late))
    assert page()[1] == 4
    assert page(statuses=("needs_approval",)) == ([late], 1)
    assert page(statuses=None)[1] == 5
    assert store.review_venues() == ["chain", "uma"]
    # By chain: the markets' `chain` (an entry of `chains`); none named yet here.
    assert store.review_chains() == []
    assert page(chain="gnosis") == ([], 0)
    with store.engine.begin() as connection:
        connection.execute(
            text("UPDATE market SET chain = 'gnosis' WHERE source = 'uma'"),
        )
    assert store.review_chains() == ["gnosis"]
    assert page(chain="gnosis", statuses=None) == ([other], 1)


def test_the_live_marks_change_with_what_a_person_sees(store: Store) -> None:
    first = escalate(store, "q1")
    marks = store.queue_marks()
    assert list(marks) == [first]
    store.claim_review(first, "rita", assignee="rita")
    claimed = store.queue_marks()
    assert claimed[first] != marks[first]
    store.decide_review(first, "INVALID", "unclear", "rita", seen=seen(store, first))
    assert store.queue_marks()[first][0] == "needs_approval"
    store.approve_review(first, "ann")
    assert store.queue_marks() == {}


def test_a_decision_that_moves_money_waits_for_a_second_person_where_the_rule_says(
    store: Store,
) -> None:
    four_eyes = beside_another_answer(store, "r1", challenge="dispute")
    store.decide_review(four_eyes, "YES", "they are wrong", "ann", money_four_eyes=lambda _: True)
    item = store.review(four_eyes)
    assert (item.status, item.approval_reason) == (
        "needs_approval",
        "moves money: confirms a dispute against their answer",
    )
    assert store.get_market("uma:r1").state == MarketState.SUBMITTED
    with pytest.raises(AccessDenied, match="another person must approve"):
        store.approve_review(four_eyes, "ann")
    store.add_user("otto", "approver", PASSWORD)
    assert store.approve_review(four_eyes, "otto").state == MarketState.CHALLENGING
    # Declining (their outcome) sends nothing: no second person needed.
    declined = beside_another_answer(store, "r2", challenge="dispute")
    store.decide_review(declined, "NO", "they are right", "rita", money_four_eyes=lambda _: True)
    assert store.review(declined).status == "closed"
    # A venue whose rule is one person: confirmed at once.
    sources: list[str] = []
    one = beside_another_answer(store, "r3", challenge="dispute")
    store.decide_review(
        one, "YES", "they are wrong", "rita", money_four_eyes=lambda s: sources.append(s) or False
    )
    assert sources == ["uma"]
    assert store.get_market("uma:r3").state == MarketState.CHALLENGING
    defence = superseded_for_review(store, "q1")
    store.decide_review(defence, "YES", "ours stands", "rita", money_four_eyes=lambda _: True)
    assert store.review(defence).approval_reason.startswith("moves money: confirms a defence")  # type: ignore[union-attr]
