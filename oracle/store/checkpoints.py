"""Checkpoints: where a job left off, by name. The chain scanner keeps its own here
through the chain layer's `CheckpointStore` protocol (oracle/chain/checkpoint.py), so a
restarted daemon continues scanning where the last one stored its questions."""

from __future__ import annotations

import asyncio
from typing import Any

from sqlalchemy import Table, bindparam, insert, update
from sqlalchemy import select as core_select

from oracle.chain.checkpoint import Checkpoint
from oracle.store._transaction import Transactions
from oracle.store.tables import CheckpointRow

# Core statements: the chain scanner reads and writes its checkpoint at every poll.
_CHECKPOINT: Table = CheckpointRow.__table__  # type: ignore[attr-defined]
_READ = core_select(_CHECKPOINT.c.value).where(_CHECKPOINT.c.name == bindparam("checkpoint"))
_UPDATE = (
    update(_CHECKPOINT)
    .where(_CHECKPOINT.c.name == bindparam("checkpoint"))
    .values(value=bindparam("v_value"), updated_at=bindparam("v_updated_at"))
)
_INSERT = insert(_CHECKPOINT)


class Checkpoints(Transactions):
    def get_checkpoint(self, name: str) -> dict[str, Any] | None:
        with self._reader.connect() as connection:
            value = connection.execute(_READ, {"checkpoint": name}).scalar_one_or_none()
        return dict(value) if value is not None else None

    def set_checkpoint(self, name: str, value: dict[str, Any]) -> None:
        now = self.clock()
        with self._writing() as connection:
            changed = {"v_value": value, "v_updated_at": now}
            if connection.execute(_UPDATE, {"checkpoint": name, **changed}).rowcount == 0:
                connection.execute(_INSERT, {"name": name, "value": value, "updated_at": now})


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
