"""Checkpoints: where a job left off, by name. The chain scanner keeps its own here
through the chain layer's `CheckpointStore` protocol (oracle/chain/checkpoint.py), so a
restarted daemon continues scanning where the last one stored its questions."""

from __future__ import annotations

import asyncio
from typing import Any

from oracle.chain.checkpoint import Checkpoint
from oracle.store._transaction import Transactions
from oracle.store.tables import CheckpointRow


class Checkpoints(Transactions):
    def get_checkpoint(self, name: str) -> dict[str, Any] | None:
        with self.reading() as session:
            row = session.get(CheckpointRow, name)
            return dict(row.value) if row is not None else None

    def set_checkpoint(self, name: str, value: dict[str, Any]) -> None:
        with self.session() as session:
            row = session.get(CheckpointRow, name)
            if row is None:
                session.add(CheckpointRow(name=name, value=value, updated_at=self.clock()))
            else:
                row.value = value
                row.updated_at = self.clock()
                session.add(row)


class DatabaseCheckpointStore:
    """The scanner's checkpoint in the daemon's database (`CheckpointStore` protocol).

    It needs only the `Checkpoints` aggregate of the `Store` (which the repository
    composes from this module, so naming `Store` here would import it back)."""

    def __init__(self, store: Checkpoints) -> None:
        self._store = store

    async def load(self, name: str) -> Checkpoint | None:
        value = await asyncio.to_thread(self._store.get_checkpoint, name)
        return Checkpoint.model_validate(value) if value is not None else None

    async def save(self, name: str, checkpoint: Checkpoint) -> None:
        await asyncio.to_thread(
            self._store.set_checkpoint, name, checkpoint.model_dump(mode="json")
        )
