"""The review queue: markets handed to a person, each with the item that shows it, and
the person's decision, which moves the market on through the lifecycle table."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection, Table, bindparam, insert, update
from sqlalchemy import select as core_select
from sqlmodel import col, select

from oracle.core.lifecycle import MarketEvent
from oracle.errors import StoreError
from oracle.store._transaction import MARKET, Transactions
from oracle.store.tables import MarketRow, ReviewItemRow

_REVIEW: Table = ReviewItemRow.__table__  # type: ignore[attr-defined]
_INSERT_REVIEW = insert(_REVIEW).returning(_REVIEW.c.id)
_LOCK_REVIEW = core_select(_REVIEW).where(_REVIEW.c.id == bindparam("review_id")).with_for_update()
_MARKET_OUTCOMES = core_select(MARKET.c.outcomes).where(MARKET.c.id == bindparam("market_id"))
_DECIDE_REVIEW = (
    update(_REVIEW)
    .where(_REVIEW.c.id == bindparam("review_id"))
    .values(
        status="decided",
        decided_outcome=bindparam("v_outcome"),
        decided_reason=bindparam("v_reason"),
        decided_by=bindparam("v_by"),
        decided_at=bindparam("v_at"),
    )
)


class Reviews(Transactions):
    def _insert_review(
        self,
        connection: Connection,
        market_id: str,
        consensus_id: int | None,
        reasons: Sequence[str],
    ) -> int:
        """An open review item for a market, in the caller's transaction."""
        review_id: int = connection.execute(
            _INSERT_REVIEW,
            {
                "market_id": market_id,
                "consensus_id": consensus_id,
                "reasons": list(reasons),
                "status": "open",
                "decided_outcome": None,
                "decided_reason": None,
                "decided_by": None,
                "decided_at": None,
                "created_at": self.clock(),
            },
        ).scalar_one()
        return review_id

    def open_review(self, market_id: str, consensus_id: int | None, reasons: Sequence[str]) -> int:
        with self._writing() as connection:
            return self._insert_review(connection, market_id, consensus_id, reasons)

    def hand_to_person(
        self, market_id: str, event: MarketEvent, *, actor: str, reasons: Sequence[str]
    ) -> tuple[MarketRow, int]:
        """Move a market to review by `event` and open its review item, in one
        transaction: a market never waits for a person without an item that shows it."""
        with self._writing() as connection:
            row = self._transition(
                connection,
                market_id,
                event,
                actor=actor,
                reason="; ".join(reasons),
                lease_owner=None,
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

    def decide_review(
        self, review_id: int, outcome: str, reason: str, decided_by: str
    ) -> MarketRow:
        """Record a person's decision and move the market to `reviewed` by the lifecycle
        table, atomically: a market not awaiting review gets IllegalTransition, and
        neither it nor the item changes."""
        with self._writing() as connection:
            item = connection.execute(_LOCK_REVIEW, {"review_id": review_id}).mappings().first()
            if item is None:
                raise StoreError(f"review {review_id} does not exist")
            if item["status"] != "open":
                raise StoreError(
                    f"review {review_id} was already decided by {item['decided_by']} "
                    f"({item['decided_outcome']})"
                )
            market_id = item["market_id"]
            outcomes = connection.execute(_MARKET_OUTCOMES, {"market_id": market_id}).scalar_one()
            allowed = [*outcomes, "INVALID"]
            if outcome not in allowed:
                raise StoreError(
                    f"outcome {outcome!r} is not one of this market's outcomes: "
                    f"{', '.join(allowed)}"
                )
            market = self._transition(
                connection,
                market_id,
                MarketEvent.REVIEW_DECIDED,
                actor=decided_by,
                reason=f"review {review_id}: {outcome} ({reason})",
                lease_owner=None,
                updates={"decided_outcome": outcome, "next_attempt_at": 0.0},
            )
            connection.execute(
                _DECIDE_REVIEW,
                {
                    "review_id": review_id,
                    "v_outcome": outcome,
                    "v_reason": reason,
                    "v_by": decided_by,
                    "v_at": self.clock(),
                },
            )
            return market
