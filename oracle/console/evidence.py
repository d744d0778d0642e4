"""Everything a reviewer needs to decide one review item, as JSON-ready data: the
console's evidence page and `oracle review show --json` both show this.

`gather` reads it from the store; `build_evidence` (pure) arranges it: per outcome the
agents with their full reasoning and the sources they cite, each source marked when only
that side cites it; excluded and failed agents; the proof and whether it verifies; the
market's history."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from oracle.core.amounts import Tokens, amount_text
from oracle.core.markets import HIDDEN_CHARACTERS, value_format
from oracle.core.proof import verify_proof
from oracle.core.review_rules import confirming
from oracle.core.urls import normalize_url
from oracle.core.values import describe
from oracle.errors import ProofError

DEFAULT_TOKENS = Tokens()

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


def _stake(market: MarketRow, tokens: Tokens) -> dict[str, Any] | None:
    """What answering puts at stake on the venue, as its market details (or, for a venue
    that records its bond with the answer, the submission) report it: the raw amounts in
    the currency's smallest unit and `text` in token units with the symbol ("bond 500
    USDC + final fee 1.5 USDC"). None when it says nothing."""
    details, submission = market.details, market.submission or {}
    raw = {
        key: str(details[key])
        for key in ("bond", "final_fee", "reward", "currency")
        if details.get(key) not in (None, "")
    }
    ours = "bond" not in raw and submission.get("bond") not in (None, "", 0)
    if ours:  # the bond of our answer, as recorded with it (Reality.eth, UMA OOv3 claims)
        raw["bond"] = str(submission["bond"])
        if "currency" not in raw and submission.get("currency") not in (None, ""):
            raw["currency"] = str(submission["currency"])
    # Reality.eth: the bond standing on the question now (theirs), recorded with their
    # answer; answering back over it posts at least double.
    if submission.get("bond_seen") not in (None, "", 0):
        raw["their_bond"] = str(submission["bond_seen"])
    if not raw.keys() - {"currency"}:
        return None
    currency = raw.get("currency")
    token = tokens.of(currency, {**submission, **details} if ours else details, market.chain)

    def amount(key: str) -> str:
        return amount_text(raw[key], token, currency)

    parts = []
    if "bond" in raw:
        parts.append(f"{'our bond' if ours else 'bond'} {amount('bond')}")
    if "final_fee" in raw:
        parts.append(f"final fee {amount('final_fee')}")
    text = " + ".join(parts)
    if "their_bond" in raw:
        text += f"{'; ' if text else ''}their bond {amount('their_bond')}"
        if submission.get("challenge") in ("counter_answer", "defend"):
            double = str(2 * int(raw["their_bond"])) if raw["their_bond"].isdigit() else ""
            if double:
                text += f", answering back posts {amount_text(double, token, currency)}"
    if "reward" in raw:
        text += f"{', ' if text else ''}reward {amount('reward')}"
    return {**raw, "token": None if token is None else token.symbol, "text": text}


def deadline(market: MarketRow) -> tuple[float, str]:
    """When a person's answer is due and what sets it (as the queue sorts:
    `oracle.store.reviews.deadline_column`): the venue's challenge window, else the
    question's answer window, else its resolve-after time."""
    if market.window_ends_at is not None:
        return market.window_ends_at, "the venue's challenge window ends"
    closes = (market.answer_window or {}).get("closes_at")
    if isinstance(closes, int | float):
        return float(closes), "every outcome is final (answer window)"
    return market.resolve_after, "resolve-after time"


_HEX = re.compile(r"0x[0-9a-fA-F]{2,}\Z")


def _explorer(
    templates: Mapping[str, str], keys: Sequence[str], kind: str, value: str
) -> str | None:
    if not _HEX.match(value):
        return None
    for key in keys:
        if key in templates:
            return templates[key].replace("{kind}", kind).replace("{value}", value)
    return None


def chain_context(market: MarketRow, explorers: Mapping[str, str]) -> dict[str, Any]:
    """The on-chain facts of a market as its venue recorded them: the request or question
    id, who asked, the transactions (with explorer links where configured, by chain id
    or venue name), and the raw ancillary data or question text (shown escaped)."""
    details = market.details
    keys = [str(k) for k in (details.get("chain_id"), market.source) if k not in (None, "")]
    facts = []
    for key, label, kind in (
        ("request_id", "request id", None),
        ("question_id", "question id", None),
        ("assertion_id", "assertion id", None),
        ("requester", "requester", "address"),
        ("asker", "asker", "address"),
        ("oracle", "oracle contract", "address"),
        ("contract", "contract", "address"),
        ("currency", "currency", "address"),
        ("tx_hash", "asked in transaction", "tx"),
    ):
        value = details.get(key)
        if value in (None, ""):
            continue
        text = str(value)
        link = None if kind is None else _explorer(explorers, keys, kind, text)
        facts.append({"label": label, "value": text, "link": link})
    for key, label in (("tx_hash", "our transaction"), ("dispute_tx", "dispute transaction")):
        value = (market.submission or {}).get(key)
        if isinstance(value, str) and value:
            facts.append(
                {"label": label, "value": value, "link": _explorer(explorers, keys, "tx", value)}
            )
    raw = None
    ancillary = details.get("ancillary_data")
    if isinstance(ancillary, str) and ancillary.startswith("0x"):
        try:
            raw = bytes.fromhex(ancillary[2:]).decode("utf-8", errors="backslashreplace")
        except ValueError:
            raw = ancillary
    elif isinstance(details.get("text"), str):
        raw = details["text"]
    return {"facts": facts, "raw_text": raw}


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


def review_summary(
    item: ReviewItemRow,
    market: MarketRow,
    now: float,
    tokens: Tokens = DEFAULT_TOKENS,
) -> dict[str, Any]:
    """One queue row: the item, its market, its age, deadline and time left."""
    due, due_by = deadline(market)
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
        # When the answer is due (the queue's order) and how long is left (negative: late).
        "deadline_at": due,
        "deadline_by": due_by,
        "time_left_seconds": due - now,
        "stake": _stake(market, tokens),
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


def _host(url: str) -> str | None:
    """The host a source's URL names (shown beside its title, which its page wrote)."""
    try:
        return urlsplit(url.strip()).hostname
    except ValueError:
        return None


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
                    "host": _host(source.url),
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
    tokens: Tokens = DEFAULT_TOKENS,
    explorers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    proof: dict[str, Any] = consensus.proof if consensus is not None else {}
    votes = {vote["agent_id"]: vote for vote in proof.get("votes", [])}
    results = [a for a in answers if a.error is None and a.outcome is not None]
    by_outcome = _sources_by_outcome(results, sources)
    outcomes = []
    values = value_format(market.details)
    # A value market's answers are values: those voted are shown beside its labels (a set
    # market's labels are options, not answers, and are not offered as decisions).
    labels = [] if values is not None and values.kind == "set" else list(market.outcomes)
    voted = [r.outcome for r in results if r.outcome not in (*labels, "INVALID")]
    shown = [*labels, *dict.fromkeys(voted)] if values is not None else list(market.outcomes)
    for outcome in [*shown, "INVALID"]:
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
        "review": review_summary(item, market, now, tokens),
        "context": chain_context(market, explorers or {}),
        # Comments people left on this item (kept in the audit log, like every action).
        "comments": [
            {"id": e["id"], "at": e["at"], "by": e["actor"], "text": e["details"].get("text")}
            for e in console_history
            if e["action"] == "review.commented" and e["details"].get("review") == item.id
        ],
        "market": {
            "id": market.id,
            "venue": market.source,
            "chain": market.chain,
            "question": market.question,
            "criteria": market.criteria,
            "outcomes": [*(labels if values is not None else market.outcomes), "INVALID"],
            # A value market: what a decision may also be, written as the text says.
            "value_format": None if values is None else describe(values),
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


def gather(
    store: Store,
    review_id: int,
    now: float | None = None,
    tokens: Tokens = DEFAULT_TOKENS,
    explorers: Mapping[str, str] | None = None,
) -> dict[str, Any]:
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
        tokens,
        explorers,
    )


def evidence_brief(store: Store, review_id: int, tokens: Tokens = DEFAULT_TOKENS) -> dict[str, Any]:
    """What an approver sees of an item's evidence on the approvals page: the consensus
    (outcome, quorum, agreement, whether its proof verifies), how the agents split (per
    outcome: agents and sources), failed agents, what is at stake, the challenge."""
    e = gather(store, review_id, tokens=tokens)
    consensus = e["consensus"]
    return {
        "consensus": None
        if consensus is None
        else {
            key: consensus[key]
            for key in ("id", "outcome", "reached", "agreement_ratio", "proof_verifies")
        },
        "split": [
            {
                "outcome": group["outcome"],
                "agents": len(group["agents"]),
                "sources": len(group["sources"]),
                "confidence": max((a["confidence"] or 0.0 for a in group["agents"]), default=None),
            }
            for group in e["outcomes"]
            if group["agents"]
        ],
        "failures": len(e["failures"]),
        "stake": e["review"]["stake"],
        "challenge": e["review"]["challenge"],
        "comments": len(e["comments"]),
    }
