"""Verdicts: the consensus reached on a market, each with its proof, stored in the
transaction of the move it makes (and of the review item it opens, if any)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Connection, Table, insert
from sqlmodel import col, select

from oracle.core.lifecycle import MarketEvent
from oracle.core.models import ConsensusResult
from oracle.errors import StoreError
from oracle.store.reviews import Reviews
from oracle.store.tables import ConsensusRow, MarketRow

_CONSENSUS: Table = ConsensusRow.__table__  # type: ignore[attr-defined]
_INSERT_CONSENSUS = insert(_CONSENSUS).returning(_CONSENSUS.c.id)


def insert_proof(
    connection: Connection, now: float, *, proof: dict[str, Any], **values: Any
) -> int:
    """A consensus row holding `proof` (a verdict's, or a person's decision's)."""
    consensus_id: int = connection.execute(
        _INSERT_CONSENSUS,
        {**values, "checksum": proof["checksum"], "proof": proof, "created_at": now},
    ).scalar_one()
    return consensus_id


class Verdicts(Reviews):
    """A verdict that needs a person opens its review item in its own transaction."""

    def record_verdict(
        self,
        market_id: str,
        owner: str,
        run_id: int,
        result: ConsensusResult,
        proof: dict[str, Any],
        *,
        event: MarketEvent,
        reason: str,
        updates: Mapping[str, Any] | None = None,
        review_reasons: Sequence[str] | None = None,
    ) -> tuple[MarketRow, int | None]:
        """Store a verdict with its proof, move the market by `event` and, with
        `review_reasons`, open its review item: one transaction. Returns the market and
        the review item's id (None without a review)."""
        with self._writing() as connection:
            consensus_id = insert_proof(
                connection,
                self.clock(),
                market_id=market_id,
                run_id=run_id,
                outcome=result.outcome,
                reached=result.reached,
                action=result.action,
                review_reasons=list(result.review_reasons),
                proof=proof,
            )
            row = self._transition(
                connection,
                market_id,
                event,
                actor=owner,
                reason=reason,
                lease_owner=owner,
                updates=updates,
            )
            review_id = None
            if review_reasons is not None:
                review_id = self._insert_review(connection, market_id, consensus_id, review_reasons)
            return row, review_id

    def consensus(self, consensus_id: int) -> ConsensusRow:
        with self.reading() as session:
            row = session.get(ConsensusRow, consensus_id)
            if row is None:
                raise StoreError(f"consensus {consensus_id} is not known")
            return row

    def latest_consensus(self, market_id: str) -> ConsensusRow | None:
        with self.reading() as session:
            return session.exec(
                select(ConsensusRow)
                .where(col(ConsensusRow.market_id) == market_id)
                .order_by(col(ConsensusRow.id).desc())
            ).first()
