"""The review queue: markets handed to a person, each with the item that shows it, and
the person's decision, which moves the market on through the lifecycle table.

A decision made through the console or the command line is bound to the evidence the
person saw (`Seen`: the consensus id and its proof checksum); if newer research has been
recorded since, it is refused as `StaleDecision`. A decision that needs a second person
(`oracle.core.review_rules.approval_reason`: INVALID, or overriding a consensus that
reached quorum) waits as `needs_approval` and the market stays in `needs_review`, so
the daemon delivers nothing until an approver other than the decider approves it.

Item statuses: open -> decided | needs_approval | sent_back | closed;
needs_approval -> decided (approved) | open (reopened); decided -> open (reopened,
while the market is still `reviewed`, before its delivery starts).

A disagreement item (another's answer stands on the venue beside our verdict; the market
is `submitted`) is decided the same way when the venue offers to answer back (its
receipt's `challenge`: UMA's `dispute: after_review`, Reality.eth's `counter_answer:
after_review`): deciding their outcome closes the item (`closed`, nothing is sent);
deciding any other outcome confirms the challenge, and the market moves to `challenging`
(`challenge_confirmed`), in which the daemon disputes or answers over them, once. A
`disputed` market whose own Reality.eth answer another superseded, sent to a person by
the bond policy, is offered a `defend` the same way (with `counter_answer: after_review`):
deciding their outcome accepts their answer (the market follows the question to its end,
our bond lost), any other answers again at double their bond. The
four-eyes rule holds for a confirmation as for any decision. A venue set to `never`
offers nothing: such an item only closes when the venue settles.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, String, Table, bindparam, cast, func, insert, or_, update
from sqlalchemy import select as core_select
from sqlmodel import col, select

from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.markets import decision_problem, value_format
from oracle.core.review_rules import Action, approval_reason, may, offer_approval_reason
from oracle.errors import AccessDenied, StaleDecision, StoreError
from oracle.store._transaction import MARKET, Transactions, market_row
from oracle.store.console import ConsoleRecords
from oracle.store.tables import ConsensusRow, MarketRow, ReviewItemRow

_REVIEW: Table = ReviewItemRow.__table__  # type: ignore[attr-defined]
_CONSENSUS: Table = ConsensusRow.__table__  # type: ignore[attr-defined]
_INSERT_REVIEW = insert(_REVIEW).returning(_REVIEW.c.id)
_LOCK_REVIEW = core_select(_REVIEW).where(_REVIEW.c.id == bindparam("review_id")).with_for_update()
_MARKET_OUTCOMES = core_select(MARKET.c.outcomes, MARKET.c.details).where(
    MARKET.c.id == bindparam("market_id")
)
_LATEST_CONSENSUS = (
    core_select(_CONSENSUS.c.id, _CONSENSUS.c.checksum, _CONSENSUS.c.reached, _CONSENSUS.c.outcome)
    .where(_CONSENSUS.c.market_id == bindparam("market_id"))
    .order_by(_CONSENSUS.c.id.desc())
    .limit(1)
)
_CLEARED_DECISION: dict[str, Any] = {
    "decided_outcome": None,
    "decided_reason": None,
    "decided_by": None,
    "decided_at": None,
    "seen_consensus_id": None,
    "seen_checksum": None,
    "approval_reason": None,
    "approved_by": None,
    "approved_at": None,
}


def insert_review(
    connection: Connection,
    market_id: str,
    consensus_id: int | None,
    reasons: Sequence[str],
    at: float,
) -> int:
    """An open review item for a market, in the caller's transaction; its id."""
    review_id: int = connection.execute(
        _INSERT_REVIEW,
        {
            "market_id": market_id,
            "consensus_id": consensus_id,
            "reasons": list(reasons),
            "status": "open",
            **_CLEARED_DECISION,
            "claimed_by": None,
            "created_at": at,
        },
    ).scalar_one()
    return review_id


def refuse_unreadable(market: dict[str, Any], review_id: int, doing: str) -> None:
    """A market the venue could not read exactly (`MarketSpec.unreadable`) takes no
    decision and no research: StoreError naming why, and what a person can do."""
    unreadable = (market.get("details") or {}).get("unreadable")
    if unreadable is not None:
        raise StoreError(
            f"review {review_id}: {doing} refused: market {market['id']} cannot be read "
            f"exactly ({unreadable.get('error')}); the daemon sends nothing for it: answer "
            "it on its venue by hand if it must be answered"
        )


@dataclass(frozen=True)
class Seen:
    """The evidence a person decided on: the consensus shown and its proof checksum
    (both None when the market had no consensus to show)."""

    consensus_id: int | None
    checksum: str | None


def _subject(market_id: str) -> str:
    return f"market:{market_id}"


@dataclass(frozen=True)
class ChallengeOffer:
    """What a `submitted` market beside another's contradicting answer offers a person:
    `action` (dispute, counter_answer) against `their_outcome`."""

    action: str
    their_outcome: str


# The state a market waits in beside the answer an offer is against: another's first
# answer (`submitted`), or another's answer that superseded ours (`disputed`).
_OFFERED_IN = {
    "dispute": MarketState.SUBMITTED.value,
    "counter_answer": MarketState.SUBMITTED.value,
    "defend": MarketState.DISPUTED.value,
    "arbitrate": MarketState.DISPUTED.value,
}


def challenge_offer(market: dict[str, Any]) -> ChallengeOffer | None:
    """The offer of a market row's values, None when it has none."""
    submission = market.get("submission") or {}
    action = submission.get("challenge")
    if (
        not action
        or market["state"] != _OFFERED_IN.get(str(action))
        or submission.get("agrees") is not False
        or "challenge_pending" in submission
    ):
        return None
    return ChallengeOffer(str(action), str(submission.get("their_outcome")))


def _market_values(connection: Connection, market_id: str) -> dict[str, Any]:
    return dict(
        connection.execute(core_select(MARKET).where(MARKET.c.id == market_id)).mappings().one()
    )


@dataclass(frozen=True)
class QueueQuery:
    """One page of the review queue as a person asks for it: statuses (None: all), a
    search of the question text and the market id, the venue (the market's source), the
    chain (an entry of `chains`), words of a reason, the assignee ("" anyone, "nobody", or
    a name), the page (from 1) and its size. Sorted by deadline, soonest first
    (`deadline_column`)."""

    statuses: tuple[str, ...] | None = ("open",)
    search: str = ""
    venue: str = ""
    chain: str = ""
    reason: str = ""
    assignee: str = ""
    page: int = 1
    per_page: int = 50


def _like(text: str) -> str:
    """`text` as a LIKE pattern matching it anywhere, its wildcards taken literally."""
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def deadline_column() -> Any:
    """When a person's answer is due, as SQL: the end of the venue's challenge window when
    an answer stands there (`window_ends_at`), else when every outcome of the question is
    final (its answer window's `closes_at`), else its resolve-after time."""
    return func.coalesce(
        MARKET.c.window_ends_at,
        MARKET.c.answer_window["closes_at"].as_float(),
        MARKET.c.resolve_after,
    )


class ReviewQueue(Transactions):
    """The queue as pages (filtered, searched, soonest deadline first) and as the marks
    the live stream compares between ticks."""

    def _queue_filters(self, query: QueueQuery) -> list[Any]:
        where: list[Any] = []
        if query.statuses is not None:
            where.append(_REVIEW.c.status.in_(list(query.statuses)))
        if query.search.strip():
            pattern = _like(query.search.strip())
            where.append(
                or_(
                    MARKET.c.question.ilike(pattern, escape="\\"),
                    MARKET.c.id.ilike(pattern, escape="\\"),
                )
            )
        if query.venue:
            where.append(MARKET.c.source == query.venue)
        if query.chain:
            where.append(MARKET.c.chain == query.chain)
        if query.reason.strip():
            where.append(
                cast(_REVIEW.c.reasons, String).ilike(_like(query.reason.strip()), escape="\\")
            )
        if query.assignee == "nobody":
            where.append(_REVIEW.c.claimed_by.is_(None))
        elif query.assignee:
            where.append(_REVIEW.c.claimed_by == query.assignee)
        return where

    def review_page(self, query: QueueQuery) -> tuple[list[tuple[ReviewItemRow, MarketRow]], int]:
        """One page of the queue (soonest deadline first, then oldest item) and how many
        items match in all: two queries, whatever the queue's length."""
        where = self._queue_filters(query)
        joined = _REVIEW.join(MARKET, MARKET.c.id == _REVIEW.c.market_id)
        with self.reading() as session:
            total = session.execute(
                core_select(func.count()).select_from(joined).where(*where)
            ).scalar_one()
            statement = (
                select(ReviewItemRow, MarketRow)
                .join(MarketRow, col(MarketRow.id) == col(ReviewItemRow.market_id))
                .where(*where)
                .order_by(deadline_column(), col(ReviewItemRow.id))
                .offset((max(query.page, 1) - 1) * query.per_page)
                .limit(query.per_page)
            )
            rows = [(item, market) for item, market in session.exec(statement).all()]
        return rows, int(total)

    def review_rows(self, review_ids: Sequence[int]) -> list[tuple[ReviewItemRow, MarketRow]]:
        """The items `review_ids` (those that exist) with their markets, in one query."""
        if not review_ids:
            return []
        with self.reading() as session:
            statement = (
                select(ReviewItemRow, MarketRow)
                .join(MarketRow, col(MarketRow.id) == col(ReviewItemRow.market_id))
                .where(col(ReviewItemRow.id).in_(list(review_ids)))
                .order_by(col(ReviewItemRow.id))
            )
            return [(item, market) for item, market in session.exec(statement).all()]

    def review_venues(self) -> list[str]:
        """The venues (market sources) of the items awaiting a person, for the filter."""
        return self._awaiting(MARKET.c.source)

    def review_chains(self) -> list[str]:
        """The chains of the items awaiting a person, for the filter."""
        return self._awaiting(MARKET.c.chain)

    def _awaiting(self, column: Any) -> list[str]:
        """The values of the market `column` among the items awaiting a person."""
        statement = (
            core_select(column)
            .select_from(_REVIEW.join(MARKET, MARKET.c.id == _REVIEW.c.market_id))
            .where(_REVIEW.c.status.in_(["open", "needs_approval"]))
            .where(column.is_not(None))
            .distinct()
            .order_by(column)
        )
        with self.reading() as session:
            return [row[0] for row in session.execute(statement).all()]

    def queue_marks(
        self, statuses: Sequence[str] = ("open", "needs_approval")
    ) -> dict[int, tuple[Any, ...]]:
        """What the live stream compares between ticks, per item in `statuses`: its status,
        assignee, decision, approval, market state and deadline (a few columns, no JSON
        rows: cheap for thousands of items)."""
        statement = (
            core_select(
                _REVIEW.c.id,
                _REVIEW.c.status,
                _REVIEW.c.claimed_by,
                _REVIEW.c.decided_outcome,
                _REVIEW.c.approved_by,
                MARKET.c.state,
                MARKET.c.window_ends_at,
            )
            .select_from(_REVIEW.join(MARKET, MARKET.c.id == _REVIEW.c.market_id))
            .where(_REVIEW.c.status.in_(list(statuses)))
        )
        with self.reading() as session:
            return {row[0]: tuple(row[1:]) for row in session.execute(statement).all()}


class Reviews(ReviewQueue, ConsoleRecords, Transactions):
    def _insert_review(
        self,
        connection: Connection,
        market_id: str,
        consensus_id: int | None,
        reasons: Sequence[str],
    ) -> int:
        """An open review item for a market, in the caller's transaction."""
        return insert_review(connection, market_id, consensus_id, reasons, self.clock())

    def open_review(self, market_id: str, consensus_id: int | None, reasons: Sequence[str]) -> int:
        with self._writing() as connection:
            return self._insert_review(connection, market_id, consensus_id, reasons)

    def hand_to_person(
        self,
        market_id: str,
        event: MarketEvent,
        *,
        actor: str,
        reasons: Sequence[str],
        updates: dict[str, Any] | None = None,
    ) -> tuple[MarketRow, int]:
        """Move a market to review by `event` (with `updates` to its row) and open its
        review item, in one transaction: a market never waits for a person without an
        item that shows it."""
        with self._writing() as connection:
            row = self._transition(
                connection,
                market_id,
                event,
                actor=actor,
                reason="; ".join(reasons),
                lease_owner=None,
                updates=updates,
            )
            return row, self._insert_review(connection, market_id, None, reasons)

    def close_reviews(self, market_id: str, reason: str, closed_by: str) -> int:
        """Close a market's open review items that no decision can answer any more (the
        market became final: a disagreement with another proposer's answer that stood);
        returns how many. A closed item keeps why and by whom, as a decided one does."""
        with self._writing() as connection:
            closed = connection.execute(
                update(_REVIEW)
                .where(_REVIEW.c.market_id == market_id)
                .where(_REVIEW.c.status == "open")
                .values(
                    status="closed",
                    decided_reason=reason,
                    decided_by=closed_by,
                    decided_at=self.clock(),
                )
            )
            return int(closed.rowcount or 0)

    def reviews(self, status: str | None = "open") -> list[ReviewItemRow]:
        with self.reading() as session:
            query = select(ReviewItemRow).order_by(col(ReviewItemRow.id))
            if status is not None:
                query = query.where(col(ReviewItemRow.status) == status)
            return list(session.exec(query).all())

    def review_queue(
        self,
        statuses: Sequence[str] | None = ("open",),
        *,
        venue: str | None = None,
        chain: str | None = None,
    ) -> list[tuple[ReviewItemRow, MarketRow]]:
        """Review items with their markets (on `venue`, on `chain`: an entry of
        `chains`), oldest first, in one query."""
        with self.reading() as session:
            query = (
                select(ReviewItemRow, MarketRow)
                .join(MarketRow, col(MarketRow.id) == col(ReviewItemRow.market_id))
                .order_by(col(ReviewItemRow.id))
            )
            if statuses is not None:
                query = query.where(col(ReviewItemRow.status).in_(list(statuses)))
            if venue is not None:
                query = query.where(col(MarketRow.source) == venue)
            if chain is not None:
                query = query.where(col(MarketRow.chain) == chain)
            return [(item, market) for item, market in session.exec(query).all()]

    def decided_review(self, market_id: str) -> ReviewItemRow | None:
        """The latest decided review item of a market."""
        with self.reading() as session:
            return session.exec(
                select(ReviewItemRow)
                .where(col(ReviewItemRow.market_id) == market_id)
                .where(col(ReviewItemRow.status) == "decided")
                .order_by(col(ReviewItemRow.id).desc())
            ).first()

    def review(self, review_id: int) -> ReviewItemRow:
        with self.reading() as session:
            row = session.get(ReviewItemRow, review_id)
            if row is None:
                raise StoreError(f"review {review_id} does not exist")
            return row

    def _lock_item(self, connection: Connection, review_id: int) -> dict[str, Any]:
        item = connection.execute(_LOCK_REVIEW, {"review_id": review_id}).mappings().first()
        if item is None:
            raise StoreError(f"review {review_id} does not exist")
        return dict(item)

    def _set_item(self, connection: Connection, review_id: int, **values: Any) -> None:
        connection.execute(update(_REVIEW).where(_REVIEW.c.id == review_id).values(**values))

    def _check_fresh(
        self, connection: Connection, review_id: int, market_id: str, seen: Seen
    ) -> Any:
        """The market's latest consensus, or StaleDecision unless it is the one seen."""
        latest = connection.execute(_LATEST_CONSENSUS, {"market_id": market_id}).first()
        latest_id = None if latest is None else latest.id
        latest_checksum = None if latest is None else latest.checksum
        if (latest_id, latest_checksum) != (seen.consensus_id, seen.checksum):
            raise StaleDecision(
                f"review {review_id}: newer research replaced the evidence shown "
                f"(consensus {seen.consensus_id}, proof {seen.checksum}); now consensus "
                f"{latest_id}, proof {latest_checksum}: look again before deciding"
            )
        return latest

    def decide_review(
        self,
        review_id: int,
        outcome: str,
        reason: str,
        decided_by: str,
        *,
        seen: Seen | None = None,
        money_four_eyes: Callable[[str], bool] | None = None,
    ) -> MarketRow:
        """Record a person's decision. Bound to `seen`, it is refused as StaleDecision when
        newer research exists. Four-eyes: a decision that needs approval waits as
        `needs_approval` (the market unchanged); any other moves the market to
        `reviewed` by the lifecycle table, atomically: a market not awaiting review gets
        IllegalTransition, and neither it nor the item changes. `money_four_eyes(source)`
        says whether a decision that moves money there (confirming a dispute, a
        counter-answer, a defence) waits for a second person (the console and `oracle
        review decide` pass the configured rule; four-eyes by default)."""
        if not reason.strip():
            raise StoreError(f"review {review_id}: a decision needs a reason")
        with self._writing() as connection:
            item = self._lock_item(connection, review_id)
            if item["status"] != "open":
                raise StoreError(
                    f"review {review_id} was already decided by {item['decided_by']} "
                    f"({item['decided_outcome']}, {item['status']})"
                )
            market_id = item["market_id"]
            refuse_unreadable(_market_values(connection, market_id), review_id, "a decision")
            asked = connection.execute(_MARKET_OUTCOMES, {"market_id": market_id}).one()
            problem = decision_problem(asked.outcomes, value_format(asked.details or {}), outcome)
            if problem is not None:
                raise StoreError(problem)
            if seen is not None:
                consensus = self._check_fresh(connection, review_id, market_id, seen)
            else:
                consensus = connection.execute(_LATEST_CONSENSUS, {"market_id": market_id}).first()
            current = _market_values(connection, market_id)
            offer = challenge_offer(current)
            money = (
                offer.action
                if offer is not None
                and outcome != offer.their_outcome
                and money_four_eyes is not None
                and money_four_eyes(str(current["source"]))
                else None
            )
            needs = approval_reason(
                outcome,
                None if consensus is None else consensus.reached,
                None if consensus is None else consensus.outcome,
                money,
            )
            decision = {
                "decided_outcome": outcome,
                "decided_reason": reason,
                "decided_by": decided_by,
                "decided_at": self.clock(),
                "seen_consensus_id": None if seen is None else seen.consensus_id,
                "seen_checksum": None if seen is None else seen.checksum,
                "approval_reason": needs,
            }
            details = {
                "review": review_id,
                "outcome": outcome,
                "reason": reason,
                "consensus": decision["seen_consensus_id"],
                "checksum": decision["seen_checksum"],
            }
            if offer is not None and needs is None and outcome != offer.their_outcome:
                # An offer whose money never comes back (an arbitrator's fee): two people,
                # whatever the venue's rule for the other decisions that move money.
                needs = offer_approval_reason(offer.action)
                decision["approval_reason"] = needs
                details["needs_approval"] = needs
            if (
                current["state"] in (MarketState.SUBMITTED.value, MarketState.DISPUTED.value)
                and offer is None
            ):
                raise StoreError(
                    f"review {review_id}: another's answer stands on the venue and its source "
                    "is not set to answer back (dispute / counter_answer: never): nothing to "
                    "decide; the item closes when the venue settles"
                )
            if offer is not None and outcome == offer.their_outcome:
                # Their answer is right: nothing is sent, the item closes.
                self._set_item(
                    connection, review_id, status="closed", **{**decision, "approval_reason": None}
                )
                self._append_audit(
                    connection,
                    decided_by,
                    "review.challenge_declined",
                    _subject(market_id),
                    {**details, "challenge": offer.action},
                )
                return market_row(current)
            if needs is not None:
                self._set_item(connection, review_id, status="needs_approval", **decision)
                self._append_audit(
                    connection,
                    decided_by,
                    "review.decided",
                    _subject(market_id),
                    {**details, "needs_approval": needs},
                )
                if current["state"] != MarketState.NEEDS_REVIEW.value and offer is None:
                    raise StoreError(
                        f"market {market_id!r} is not awaiting review ({current['state']})"
                    )
                return market_row(current)
            market = self._move_decided(
                connection,
                review_id,
                current,
                offer,
                outcome,
                actor=decided_by,
                reason=f"review {review_id}: {outcome} ({reason})",
            )
            self._set_item(connection, review_id, status="decided", **decision)
            self._append_audit(
                connection, decided_by, "review.decided", _subject(market_id), details
            )
            return market

    def approve_review(self, review_id: int, approver: str) -> MarketRow:
        """A second person approves a decision awaiting approval: the market moves to
        `reviewed` for delivery. AccessDenied unless `approver` is an active account with
        the approver (or admin) role and is not the person who decided; StaleDecision if
        research newer than the evidence decided on arrived meanwhile."""
        person = self.person(approver)
        if not may(person.role, Action.APPROVE):
            raise AccessDenied(f"{approver} ({person.role.value}) may not approve decisions")
        with self._writing() as connection:
            item = self._lock_item(connection, review_id)
            if item["status"] != "needs_approval":
                raise StoreError(f"review {review_id} is not awaiting approval ({item['status']})")
            if item["decided_by"] == approver:
                raise AccessDenied(
                    f"review {review_id}: {approver} decided it, so another person must approve"
                )
            market_id = item["market_id"]
            if item["seen_consensus_id"] is not None or item["seen_checksum"] is not None:
                self._check_fresh(
                    connection,
                    review_id,
                    market_id,
                    Seen(item["seen_consensus_id"], item["seen_checksum"]),
                )
            outcome = item["decided_outcome"]
            current = _market_values(connection, market_id)
            market = self._move_decided(
                connection,
                review_id,
                current,
                challenge_offer(current),
                outcome,
                actor=approver,
                reason=(
                    f"review {review_id}: {outcome} ({item['decided_reason']}), decided by "
                    f"{item['decided_by']}, approved by {approver}"
                ),
            )
            self._set_item(
                connection,
                review_id,
                status="decided",
                approved_by=approver,
                approved_at=self.clock(),
            )
            self._append_audit(
                connection,
                approver,
                "review.approved",
                _subject(market_id),
                {"review": review_id, "outcome": outcome, "decided_by": item["decided_by"]},
            )
            return market

    def _move_decided(
        self,
        connection: Connection,
        review_id: int,
        market: dict[str, Any],
        offer: ChallengeOffer | None,
        outcome: str,
        *,
        actor: str,
        reason: str,
    ) -> MarketRow:
        """The market of a decision that stands: to `reviewed` for delivery, or, for a
        confirmed challenge, to `challenging` with what was confirmed in its submission."""
        if offer is None:
            return self._transition(
                connection,
                market["id"],
                MarketEvent.REVIEW_DECIDED,
                actor=actor,
                reason=reason,
                lease_owner=None,
                updates={"decided_outcome": outcome, "next_attempt_at": 0.0},
            )
        pending = {"review": review_id, "action": offer.action, "outcome": outcome, "by": actor}
        return self._transition(
            connection,
            market["id"],
            MarketEvent.CHALLENGE_CONFIRMED,
            actor=actor,
            reason=f"{offer.action} against {offer.their_outcome} confirmed: {reason}",
            lease_owner=None,
            updates={
                "decided_outcome": outcome,
                "next_attempt_at": 0.0,
                "submission": {**market["submission"], "challenge_pending": pending},
            },
        )

    def reopen_review(self, review_id: int, actor: str) -> None:
        """Take a decision back before its delivery starts: the item is open again (and
        a `reviewed` market back in `needs_review`); StoreError once delivery started."""
        with self._writing() as connection:
            item = self._lock_item(connection, review_id)
            market_id = item["market_id"]
            if item["status"] == "decided":
                state = connection.execute(
                    core_select(MARKET.c.state).where(MARKET.c.id == market_id)
                ).scalar_one()
                if (
                    state != MarketState.REVIEWED.value
                    or self.decided_review_id(connection, market_id) != review_id
                ):
                    raise StoreError(
                        f"review {review_id}: its delivery has started ({state}): "
                        "too late to reopen"
                    )
                self._transition(
                    connection,
                    market_id,
                    MarketEvent.REVIEW_REOPENED,
                    actor=actor,
                    reason=f"review {review_id} reopened by {actor}",
                    lease_owner=None,
                    updates={"decided_outcome": None},
                )
            elif item["status"] != "needs_approval":
                raise StoreError(f"review {review_id} has no decision to reopen ({item['status']})")
            self._set_item(connection, review_id, status="open", **_CLEARED_DECISION)
            self._append_audit(
                connection,
                actor,
                "review.reopened",
                _subject(market_id),
                {"review": review_id, "was": item["decided_outcome"]},
            )

    def decided_review_id(self, connection: Connection, market_id: str) -> int | None:
        return connection.execute(
            core_select(_REVIEW.c.id)
            .where(_REVIEW.c.market_id == market_id, _REVIEW.c.status == "decided")
            .order_by(_REVIEW.c.id.desc())
            .limit(1)
        ).scalar()

    def send_back_for_research(self, review_id: int, actor: str, reason: str) -> MarketRow:
        """The person wants more research: the item closes as `sent_back` and the market
        goes back to `due`, to be researched again at once."""
        if not reason.strip():
            raise StoreError(f"review {review_id}: sending back needs a reason")
        with self._writing() as connection:
            item = self._lock_item(connection, review_id)
            if item["status"] != "open":
                raise StoreError(f"review {review_id} is not open ({item['status']})")
            refuse_unreadable(
                _market_values(connection, item["market_id"]), review_id, "sending back"
            )
            market = self._transition(
                connection,
                item["market_id"],
                MarketEvent.RESEARCH_REQUESTED,
                actor=actor,
                reason=f"review {review_id} sent back for research: {reason}",
                lease_owner=None,
                updates={"next_attempt_at": 0.0},
            )
            self._set_item(
                connection,
                review_id,
                status="sent_back",
                decided_by=actor,
                decided_reason=reason,
                decided_at=self.clock(),
            )
            self._append_audit(
                connection,
                actor,
                "review.sent_back",
                _subject(item["market_id"]),
                {"review": review_id, "reason": reason},
            )
            return market

    def claim_review(
        self, review_id: int, actor: str, *, assignee: str | None = None, reassign: bool = False
    ) -> None:
        """Mark who works on an open item (`assignee`; None unassigns). Claiming an item
        someone else holds is refused unless `reassign` (a lead handing work out); an
        assignee must be an active account that may decide."""
        if assignee is not None and assignee != actor:
            person = self.person(assignee)
            if not may(person.role, Action.DECIDE):
                raise StoreError(f"{assignee} ({person.role.value}) cannot decide reviews")
        with self._writing() as connection:
            item = self._lock_item(connection, review_id)
            if item["status"] != "open":
                raise StoreError(f"review {review_id} is not open ({item['status']})")
            held = item["claimed_by"] not in (None, assignee)
            if assignee is not None and held and not reassign:
                raise StoreError(f"review {review_id} is claimed by {item['claimed_by']}")
            self._set_item(connection, review_id, claimed_by=assignee)
            action = "review.claimed" if assignee is not None else "review.unassigned"
            self._append_audit(
                connection,
                actor,
                action,
                _subject(item["market_id"]),
                {"review": review_id, "assignee": assignee, "was": item["claimed_by"]},
            )
