"""Everything a reviewer needs to decide one review item, as JSON-ready data: the
console's evidence page and `oracle review show --json` both show this.

`gather` reads it from the store; `build_evidence` (pure) arranges it: per outcome the
agents with their full reasoning and the sources they cite, each source marked when only
that side cites it; excluded and failed agents; the proof and whether it verifies; the
market's history."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from oracle.core.markets import HIDDEN_CHARACTERS
from oracle.core.proof import verify_proof
from oracle.core.review_rules import confirming
from oracle.core.urls import normalize_url
from oracle.errors import ProofError

if TYPE_CHECKING:
    from oracle.store.repository import Store
    from oracle.store.tables import (
        AgentResultRow,
        AgentSourceRow,
        AuditRow,
        ConsensusRow,
        MarketRow,
        ReviewItemRow,
    )


def _stake(details: Mapping[str, Any]) -> dict[str, str] | None:
    """What answering puts at stake on the venue, as its market details report it (the
    bond and fee in the currency's smallest unit, UMA's reward): None when it says nothing."""
    stake = {
        key: str(details[key])
        for key in ("bond", "final_fee", "reward", "currency")
        if details.get(key) not in (None, "")
    }
    return stake or None


def _challenge(market: MarketRow) -> dict[str, Any] | None:
    """Another's answer that stands on the venue beside our verdict, when the venue offers
    to answer back after a person confirms (UMA `dispute`, Reality.eth `counter_answer`,
    or `defend` when another's answer superseded ours):
    both answers, and what deciding does. None otherwise."""
    submission = market.submission or {}
    action = submission.get("challenge")
    if not action or submission.get("agrees") is not False:
        return None
    return {
        "action": action,
        "confirms": confirming(str(action)),
        "their_outcome": submission.get("their_outcome"),
        "their_account": submission.get("proposer")
        or submission.get("answerer")
        or submission.get("asserter"),
        "our_outcome": submission.get("our_outcome"),
        "pending": submission.get("challenge_pending"),
        "done": submission.get("challenged"),
    }


def review_summary(item: ReviewItemRow, market: MarketRow, now: float) -> dict[str, Any]:
    """One queue row: the item, its market, its age and deadline."""
    return {
        "id": item.id,
        "status": item.status,
        "market_id": market.id,
        "venue": market.source,
        "chain": market.chain,
        "question": market.question,
        "state": market.state,
        "reasons": list(item.reasons),
        "created_at": item.created_at,
        "age_seconds": max(now - item.created_at, 0.0),
        "resolve_after": market.resolve_after,
        "window_ends_at": market.window_ends_at,
        # The venue's challenge window (liveness) still to run: a decision after it comes
        # too late to dispute the answer standing there.
        "window_left_seconds": None
        if market.window_ends_at is None
        else max(market.window_ends_at - now, 0.0),
        "stake": _stake(market.details),
        "challenge": _challenge(market),
        "claimed_by": item.claimed_by,
        "decision": None
        if item.decided_outcome is None
        else {
            "outcome": item.decided_outcome,
            "reason": item.decided_reason,
            "by": item.decided_by,
            "at": item.decided_at,
            "consensus_id": item.seen_consensus_id,
            "checksum": item.seen_checksum,
            "approval_reason": item.approval_reason,
            "approved_by": item.approved_by,
            "approved_at": item.approved_at,
        },
    }


def _same_source(url: str) -> str:
    """The key two citations of one page share (a URL that is not a web address, which
    only a row written around the agents' checks can hold, is its own key)."""
    try:
        return normalize_url(url)
    except ValueError:
        return url


def _sources_by_outcome(
    answers: Sequence[AgentResultRow], sources: Mapping[int, Sequence[AgentSourceRow]]
) -> dict[str, list[dict[str, Any]]]:
    """Per outcome, the distinct sources its agents cite (by normalized URL), each with
    who cites it and whether only this outcome's side does."""
    groups: dict[str, dict[str, dict[str, Any]]] = {}
    sides: dict[str, set[str]] = {}
    for answer in answers:
        if answer.outcome is None or answer.id is None:
            continue
        group = groups.setdefault(answer.outcome, {})
        for source in sources.get(answer.id, ()):
            key = _same_source(source.url)
            sides.setdefault(key, set()).add(answer.outcome)
            entry = group.setdefault(
                key,
                {
                    "url": source.url,
                    "title": source.title,
                    "category": source.category,
                    "credibility": source.credibility_score,
                    "relevance": source.relevance_score,
                    "published_at": source.published_at,
                    "cited_by": [],
                    "quotes": [],
                    # Read by some agent that cites it; else seen, not read: counted for nothing.
                    "read": False,
                },
            )
            entry["read"] = entry["read"] or source.read
            entry["cited_by"].append(answer.agent_id)
            if source.quote:
                entry["quotes"].append({"agent_id": answer.agent_id, "quote": source.quote})
    contested = len(groups) > 1
    return {
        outcome: sorted(
            (
                {**entry, "only_this_side": contested and len(sides[key]) == 1}
                for key, entry in group.items()
            ),
            key=lambda e: (-e["credibility"], e["url"]),
        )
        for outcome, group in groups.items()
    }


def build_evidence(  # noqa: PLR0917 (each argument is one record read by gather)
    item: ReviewItemRow,
    market: MarketRow,
    consensus: ConsensusRow | None,
    answers: Sequence[AgentResultRow],
    sources: Mapping[int, Sequence[AgentSourceRow]],
    history: Sequence[AuditRow],
    console_history: Sequence[Mapping[str, Any]],
    now: float,
) -> dict[str, Any]:
    proof: dict[str, Any] = consensus.proof if consensus is not None else {}
    votes = {vote["agent_id"]: vote for vote in proof.get("votes", [])}
    results = [a for a in answers if a.error is None and a.outcome is not None]
    by_outcome = _sources_by_outcome(results, sources)
    outcomes = []
    for outcome in [*market.outcomes, "INVALID"]:
        agents = [
            {
                "agent_id": r.agent_id,
                "provider": r.provider,
                "model_family": r.model_family,
                "confidence": r.confidence,
                "reasoning": r.reasoning,
                "counted": votes.get(r.agent_id, {}).get("counted"),
                "weight": votes.get(r.agent_id, {}).get("weight"),
                "excluded_reasons": votes.get(r.agent_id, {}).get("excluded_reasons", []),
                "source_count": len(sources.get(r.id or 0, ())),
            }
            for r in sorted(results, key=lambda r: r.agent_id)
            if r.outcome == outcome
        ]
        if agents or outcome != "INVALID":
            outcomes.append(
                {"outcome": outcome, "agents": agents, "sources": by_outcome.get(outcome, [])}
            )
    verifies: bool | None = None
    if consensus is not None:
        try:
            verifies = verify_proof(proof)[0] and proof.get("checksum") == consensus.checksum
        except ProofError:
            verifies = False
    verdict = proof.get("verdict", {})
    return {
        "review": review_summary(item, market, now),
        "market": {
            "id": market.id,
            "venue": market.source,
            "chain": market.chain,
            "question": market.question,
            "criteria": market.criteria,
            "outcomes": [*market.outcomes, "INVALID"],
            "details": market.details,
            # Invisible characters removed from its text where it entered the daemon.
            "hidden_characters": int(market.details.get(HIDDEN_CHARACTERS, 0)),
            "resolve_after": market.resolve_after,
            "answer_window": market.answer_window,
            "state": market.state,
        },
        "consensus": None
        if consensus is None
        else {
            "id": consensus.id,
            "checksum": consensus.checksum,
            "outcome": consensus.outcome,
            "reached": consensus.reached,
            "action": consensus.action,
            "explanation": verdict.get("explanation"),
            "agreement_ratio": verdict.get("agreement_ratio"),
            "created_at": consensus.created_at,
            "proof_verifies": verifies,
        },
        "outcomes": outcomes,
        "excluded": proof.get("excluded", []),
        "failures": [
            {"agent_id": a.agent_id, "error": a.error} for a in answers if a.error is not None
        ],
        "dissent": proof.get("dissent", []),
        "tensions": proof.get("tensions", []),
        "blind_spots": proof.get("blind_spots", []),
        "overlap": proof.get("overlap"),
        # A debate on conflict (docs/consensus.md): the rounds that led to the verdict; the
        # answers above are the independent ones, before it.
        "debate": proof.get("debate"),
        # `conflict_resolution: majority`: the weighted plurality proposed to the reviewer.
        "majority": proof.get("majority"),
        "history": [
            {
                "at": row.at,
                "from": row.from_state,
                "event": row.event,
                "to": row.to_state,
                "reason": row.reason,
                "actor": row.actor,
            }
            for row in history
        ],
        "console_history": [
            {
                "id": e["id"],
                "at": e["at"],
                "actor": e["actor"],
                "action": e["action"],
                "details": e["details"],
            }
            for e in console_history
        ],
    }


def gather(store: Store, review_id: int, now: float | None = None) -> dict[str, Any]:
    """The evidence of review item `review_id`, read from the store (StoreError when
    the item does not exist). The consensus shown is the market's latest."""
    item = store.review(review_id)
    market = store.get_market(item.market_id)
    consensus = store.latest_consensus(market.id)
    answers: list[AgentResultRow] = []
    sources: dict[int, list[AgentSourceRow]] = {}
    if consensus is not None and consensus.run_id is not None:
        answers, sources = store.run_records(consensus.run_id)
    return build_evidence(
        item,
        market,
        consensus,
        answers,
        sources,
        store.audit(market.id),
        store.audit_entries(f"market:{market.id}"),
        store.clock() if now is None else now,
    )
