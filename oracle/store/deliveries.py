"""Deliveries: a person's decision on its way to the venue, and final answers settled
with those who wait for them."""

from __future__ import annotations

from typing import Any

from sqlmodel import col, select

from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.store._transaction import Transactions
from oracle.store.tables import MarketRow
from oracle.store.verdicts import insert_proof


class Deliveries(Transactions):
    def start_delivery_of_decision(
        self, market_id: str, owner: str, outcome: str, proof: dict[str, Any], *, reason: str
    ) -> MarketRow:
        """Store the proof of a person's decision beside the verdicts it overrides and move
        the market on to `submitting` with it, in one transaction (LeaseLost stores
        nothing): a crash never leaves a second decision proof behind."""
        with self._writing() as connection:
            row = self._transition(
                connection,
                market_id,
                MarketEvent.SUBMISSION_STARTED,
                actor=owner,
                reason=reason,
                lease_owner=owner,
                updates={"decided_outcome": outcome, "proof_checksum": proof["checksum"]},
            )
            insert_proof(
                connection,
                self.clock(),
                market_id=market_id,
                run_id=None,
                outcome=outcome,
                reached=False,
                action="decided",
                review_reasons=[],
                proof=proof,
            )
            return row

    def markets_to_settle(self, limit: int = 1000) -> list[MarketRow]:
        """Final markets whose answer someone waits for and nobody has settled yet."""
        with self.reading() as session:
            return list(
                session.exec(
                    select(MarketRow)
                    .where(col(MarketRow.state) == MarketState.FINAL)
                    .where(col(MarketRow.awaits_settlement).is_(True))
                    .order_by(col(MarketRow.state_changed_at))
                    .limit(limit)
                ).all()
            )

    def mark_settled(self, market_id: str, reference: str) -> None:
        with self.session() as session:
            row = session.exec(
                select(MarketRow).where(col(MarketRow.id) == market_id).with_for_update()
            ).one()
            row.submission = {**row.submission, "settled": reference or True}
            row.awaits_settlement = False
            session.add(row)

    def stop_settling(self, market_id: str, reason: str) -> None:
        """A settle (or claim) the venue refused for good: not tried again; `reason` kept
        in the submission (`settle_refused`) for `oracle review show` and the logs."""
        with self.session() as session:
            row = session.exec(
                select(MarketRow).where(col(MarketRow.id) == market_id).with_for_update()
            ).one()
            row.submission = {**row.submission, "settle_refused": reason}
            row.awaits_settlement = False
            session.add(row)
