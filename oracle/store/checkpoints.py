"""The chain scanner's checkpoint on the daemon's database (the chain layer's
`CheckpointStore` protocol, oracle/chain/checkpoint.py): a restarted daemon continues
scanning where the last one stored its questions."""

from __future__ import annotations

import asyncio

from oracle.chain.checkpoint import Checkpoint
from oracle.store.repository import Store


class DatabaseCheckpointStore:
    """The scanner's checkpoint in the daemon's database (`CheckpointStore` protocol)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    async def load(self, name: str) -> Checkpoint | None:
        value = await asyncio.to_thread(self._store.get_checkpoint, name)
        return Checkpoint.model_validate(value) if value is not None else None

    async def save(self, name: str, checkpoint: Checkpoint) -> None:
        await asyncio.to_thread(
            self._store.set_checkpoint, name, checkpoint.model_dump(mode="json")
        )
