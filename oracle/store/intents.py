"""The chain layer's `IntentStore` on the daemon's database (SQLite or PostgreSQL).

Honours the contract in `oracle.chain.intents`: `put` has committed when it returns, so
the transaction manager broadcasts only what a restarted process will find again.
"""

from __future__ import annotations

import asyncio

from sqlmodel import col, select

from oracle.chain.intents import Intent, intent_order
from oracle.store.repository import Store
from oracle.store.tables import TxIntentRow


class DatabaseIntentStore:
    def __init__(self, store: Store) -> None:
        self._store = store

    async def get(self, key: str) -> Intent | None:
        return await asyncio.to_thread(self._get, key)

    async def put(self, intent: Intent) -> None:
        await asyncio.to_thread(self._put, intent)

    async def unfinished(self, chain_id: int, sender: str) -> list[Intent]:
        return await asyncio.to_thread(self._unfinished, chain_id, sender)

    def _get(self, key: str) -> Intent | None:
        with self._store.reading() as session:
            row = session.get(TxIntentRow, key)
            return Intent.model_validate(row.data) if row is not None else None

    def _put(self, intent: Intent) -> None:
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
