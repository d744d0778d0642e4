"""The chain layer's `IntentStore` on the daemon's database (SQLite or PostgreSQL).

Honours the contract in `oracle.chain.intents`: `put` has committed when it returns, so
the transaction manager broadcasts only what a restarted process will find again; the
subjects an intent holds are rows of `tx_subject` (primary key: the subject), written in
the same transaction as the intent, so two replicas can never both record an intent on
the same subject (PostgreSQL: the second insert waits for the first to commit, then
conflicts; SQLite: write transactions run one at a time).

`PendingTransactions` (part of `Store`) summarizes the unfinished intents of every signer
for the daemon's gauges.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection
from typing import TYPE_CHECKING

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select

from oracle.chain.intents import Intent, intent_order
from oracle.errors import SubjectsHeld
from oracle.store._transaction import Transactions
from oracle.store.tables import TxIntentRow, TxSubjectRow

if TYPE_CHECKING:  # the repository composes `PendingTransactions` from this module
    from oracle.store.repository import Store


class PendingTransactions(Transactions):
    def pending_transactions(self) -> tuple[int, float | None]:
        """How many intents are not final, and when the oldest of them was recorded
        (None: none is pending)."""
        with self.reading() as session:
            rows = session.exec(
                select(TxIntentRow.data).where(col(TxIntentRow.final).is_(False))
            ).all()
        # Few at a time (a signer's unfinished transactions), so read whole.
        created = [float(data["created_at"]) for data in rows]
        return len(created), min(created, default=None)


class DatabaseIntentStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def get(self, key: str) -> Intent | None:
        return await asyncio.to_thread(self._get, key)

    async def put(self, intent: Intent) -> None:
        await asyncio.to_thread(self._put, intent)

    async def unfinished(self, chain_id: int, sender: str) -> list[Intent]:
        return await asyncio.to_thread(self._unfinished, chain_id, sender)

    async def holders(self, subjects: Collection[str]) -> dict[str, Intent]:
        return await asyncio.to_thread(self._holders, subjects)

    def _get(self, key: str) -> Intent | None:
        with self._store.reading() as session:
            row = session.get(TxIntentRow, key)
            return Intent.model_validate(row.data) if row is not None else None

    def _put(self, intent: Intent) -> None:
        try:
            with self._store.session() as session:
                row = session.get(TxIntentRow, intent.key) or TxIntentRow(
                    key=intent.key,
                    chain_id=intent.chain_id,
                    sender=intent.sender.lower(),
                    state=intent.state,
                    final=intent.final,
                    data={},
                    updated_at=intent.updated_at,
                )
                row.nonce = intent.nonce
                row.state = intent.state
                row.final = intent.final
                row.data = intent.model_dump(mode="json")
                row.updated_at = intent.updated_at
                session.add(row)
                session.flush()  # the intent row exists before subject rows refer to it
                self._write_subjects(session, intent)
        except IntegrityError:
            # Another process inserted a subject row between our check and our insert.
            taken = {
                subject: holder.key
                for subject, holder in self._holders(intent.subjects).items()
                if holder.key != intent.key
            }
            raise SubjectsHeld(intent.key, taken or dict.fromkeys(intent.subjects, "?")) from None

    @staticmethod
    def _write_subjects(session: Session, intent: Intent) -> None:
        if not intent.state.holds_subjects or not intent.subjects:
            session.exec(delete(TxSubjectRow).where(col(TxSubjectRow.intent_key) == intent.key))
            return
        held = session.exec(
            select(TxSubjectRow)
            .where(col(TxSubjectRow.subject).in_(intent.subjects))
            .with_for_update()
        ).all()
        taken = {row.subject: row.intent_key for row in held if row.intent_key != intent.key}
        if taken:
            raise SubjectsHeld(intent.key, taken)  # rolls the whole put back
        mine = {row.subject for row in held}
        session.add_all(
            TxSubjectRow(subject=subject, intent_key=intent.key)
            for subject in intent.subjects
            if subject not in mine
        )

    def _unfinished(self, chain_id: int, sender: str) -> list[Intent]:
        with self._store.reading() as session:
            rows = session.exec(
                select(TxIntentRow)
                .where(col(TxIntentRow.chain_id) == chain_id)
                .where(col(TxIntentRow.sender) == sender.lower())
                .where(col(TxIntentRow.final).is_(False))
            ).all()
            intents = [Intent.model_validate(row.data) for row in rows]
        return sorted(intents, key=intent_order)

    def _holders(self, subjects: Collection[str]) -> dict[str, Intent]:
        if not subjects:
            return {}
        with self._store.reading() as session:
            rows = session.exec(
                select(TxSubjectRow.subject, TxIntentRow)
                .join(TxIntentRow, col(TxIntentRow.key) == col(TxSubjectRow.intent_key))
                .where(col(TxSubjectRow.subject).in_(list(subjects)))
            ).all()
            return {subject: Intent.model_validate(row.data) for subject, row in rows}
