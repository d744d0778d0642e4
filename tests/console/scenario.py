"""Markets escalated to review through the store's real path (research run, stored
answers, consensus with its proof, review item), for the console's tests."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import update

from oracle.core import ConsensusParams, SourceThresholds
from oracle.core.consensus import evaluate
from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.markets import MarketSpec, value_format
from oracle.core.models import AgentFailure, AgentResult, ConsensusInput, Market
from oracle.core.proof import build_proof
from oracle.store.repository import Store
from oracle.store.reviews import insert_review
from oracle.store.tables import MarketRow
from oracle.testing import result

OWNER = "replica-test"


def agreeing() -> list[AgentResult]:
    """Four agents say YES: the consensus reaches quorum."""
    return [
        result("claude-researcher", "YES", 0.9),
        result("gpt-researcher", "YES", 0.85),
        result("llama-researcher", "YES", 0.8),
        result("mistral-researcher", "YES", 0.8),
    ]


def contested() -> list[AgentResult]:
    """Two agents say YES, two say NO: no quorum, a review."""
    return [
        result("claude-researcher", "YES", 0.8),
        result("gpt-researcher", "YES", 0.75),
        result("llama-researcher", "NO", 0.8),
        result("mistral-researcher", "NO", 0.7),
    ]


def escalate(
    store: Store,
    external_id: str,
    answers: Sequence[AgentResult] | None = None,
    failures: Sequence[AgentFailure] = (),
    *,
    question: str | None = None,
    resolve_after: float = 500.0,
    force_review: bool = False,
    details: dict[str, object] | None = None,
) -> int:
    """Research `external_id` with `answers` and record the verdict; with `force_review`
    (or when the verdict asks for one) the market waits for a person. Returns the review
    item's id."""
    spec = MarketSpec(
        source="chain",
        external_id=external_id,
        question=question or f"Did event {external_id} happen?",
        criteria="Per the official record.",
        resolve_after=resolve_after,
        details={"question_id": external_id, **(details or {})},
    )
    market_id = spec.market_id
    store.add_discovered([spec], actor="poller")
    store.apply_event(market_id, MarketEvent.DUE, actor="poller")
    return research_again(store, market_id, answers or contested(), failures, force_review)


def research_again(
    store: Store,
    market_id: str,
    answers: Sequence[AgentResult],
    failures: Sequence[AgentFailure] = (),
    force_review: bool = False,
) -> int:
    """One more research run of a `due` market and its verdict (a newer consensus)."""
    [row] = store.claim(OWNER, [MarketState.DUE], 1, 60.0)
    assert row.id == market_id
    row, run_id = store.start_research(market_id, OWNER, row.attempts + 1, "test")
    store.finish_research(
        market_id,
        OWNER,
        run_id,
        [(a, 1.0) for a in (*answers, *failures)],
        lease_seconds=60.0,
        reason="test",
    )
    market = Market(
        id=market_id,
        question=row.question,
        criteria=row.criteria,
        outcomes=tuple(row.outcomes),
        resolve_after=row.resolve_after,
        values=value_format(row.details),
    )
    consensus_input = ConsensusInput(
        market=market, results=tuple(answers), failures=tuple(failures)
    )
    params, thresholds = ConsensusParams(), SourceThresholds()
    verdict = evaluate(consensus_input, params, thresholds)
    proof = build_proof(consensus_input, verdict, params, thresholds)
    reasons = list(verdict.review_reasons) or ["a person asked to see it"]
    assert force_review or verdict.action == "review", verdict.action
    _, review_id = store.record_verdict(
        market_id,
        OWNER,
        run_id,
        verdict,
        proof,
        event=MarketEvent.CONSENSUS_REVIEW,
        reason="test",
        review_reasons=reasons,
    )
    store.release_lease(market_id, OWNER)
    assert review_id is not None
    return review_id


def beside_another_answer(store: Store, external_id: str, *, challenge: str | None) -> str:
    """A market recorded `submitted` beside another's contradicting answer (NO against our
    YES), as a venue's receipt leaves it, with its disagreement item; the item's id."""
    store.add_discovered(
        [MarketSpec(source="uma", external_id=external_id, question="Q?", resolve_after=1.0)],
        actor="poller",
    )
    market_id = f"uma:{external_id}"
    for event in (
        MarketEvent.DUE,
        MarketEvent.RESEARCH_STARTED,
        MarketEvent.RESEARCH_FINISHED,
        MarketEvent.CONSENSUS_SUBMIT,
    ):
        store.apply_event(market_id, event, actor="s")
    submission = {
        "proposed_by_other": True,
        "proposer": "0x" + "ab" * 20,
        "their_outcome": "NO",
        "our_outcome": "YES",
        "agrees": False,
    }
    if challenge is not None:
        submission["challenge"] = challenge
    store.apply_event(
        market_id,
        MarketEvent.PROPOSAL_CONFIRMED,
        actor="s",
        updates={"decided_outcome": "YES", "submission": submission},
    )
    return store.open_review(market_id, None, ["they proposed NO; our verdict is YES"])


def superseded_for_review(store: Store, external_id: str) -> str:
    """A Reality.eth market whose answer (YES) another's NO superseded, sent to a person
    by the bond policy with a defence on offer (`disputed`, as the watch leaves it), with
    its disagreement item; the item's id."""
    store.add_discovered(
        [MarketSpec(source="reality", external_id=external_id, question="Q?", resolve_after=1.0)],
        actor="poller",
    )
    market_id = f"reality:{external_id}"
    for event in (
        MarketEvent.DUE,
        MarketEvent.RESEARCH_STARTED,
        MarketEvent.RESEARCH_FINISHED,
        MarketEvent.CONSENSUS_SUBMIT,
    ):
        store.apply_event(market_id, event, actor="s")
    store.apply_event(
        market_id,
        MarketEvent.PROPOSAL_CONFIRMED,
        actor="s",
        updates={"decided_outcome": "YES", "submission": {"our_outcome": "YES", "bond": 1}},
    )
    store.apply_event(
        market_id,
        MarketEvent.DISPUTED,
        actor="watch",
        updates={
            "submission": {
                "our_outcome": "YES",
                "bond": 1,
                "answerer": "0x" + "cd" * 20,
                "superseded_by": "0x" + "cd" * 20,
                "their_outcome": "NO",
                "agrees": False,
                "challenge": "defend",
            }
        },
    )
    return store.open_review(market_id, None, ["they answered NO over our YES"])


BULK_VENUES = ("uma", "reality", "omen")
BULK_REASONS = (
    "no quorum: 2 of 4 agents agree",
    "sources below the minimum: 12 official",
    "INVALID proposed by the consensus",
)


def bulk_queue(store: Store, count: int, now: float) -> list[int]:
    """`count` markets waiting for a person, each with its open item, written in one
    transaction (a queue as long as a busy team's; the lifecycle path one market at a time
    would take minutes). Deadlines are spread over the next days, in no order of id; the
    venues and reasons cycle through `BULK_VENUES` and `BULK_REASONS`. The items' ids."""
    specs = [
        MarketSpec(
            source=BULK_VENUES[i % len(BULK_VENUES)],
            external_id=f"bulk-{i:05d}",
            question=f"Will bulk event number {i} happen before the deadline?",
            criteria="Per the official record.",
            resolve_after=now - 86_400 + ((i * 7919) % count) * 60.0,
            details={"question_id": f"0x{i:064x}"},
        )
        for i in range(count)
    ]
    store.add_discovered(specs, actor="poller")
    market = MarketRow.__table__  # type: ignore[attr-defined]
    ids = [spec.market_id for spec in specs]
    with store.engine.begin() as connection:
        connection.execute(
            update(market)
            .where(market.c.id.in_(ids))
            .values(state=MarketState.NEEDS_REVIEW.value, state_changed_at=now)
        )
        return [
            insert_review(connection, market_id, None, [BULK_REASONS[i % 3]], now - i)
            for i, market_id in enumerate(ids)
        ]
