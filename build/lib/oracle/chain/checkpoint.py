"""Where a log scanner stopped: a small store interface with memory and file implementations.

A `Checkpoint` is the next block to scan, the hash of the last scanned block (to notice a
reorg deeper than the confirmation depth) and the ids delivered in the most recent blocks
(so that re-scanning after such a reorg delivers nothing twice).

`CheckpointStore` contract: `save(name, checkpoint)` is durable when it returns, `load(name)`
returns the last saved checkpoint under that name, or None.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from oracle.errors import ChainError


class Checkpoint(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    next_block: int = Field(ge=0)
    last_block_hash: str | None = None
    delivered: dict[str, int] = Field(default_factory=dict)  # id -> block number


class CheckpointStore(Protocol):
    async def load(self, name: str) -> Checkpoint | None: ...

    async def save(self, name: str, checkpoint: Checkpoint) -> None: ...


class InMemoryCheckpointStore:
    def __init__(self) -> None:
        self.checkpoints: dict[str, Checkpoint] = {}

    async def load(self, name: str) -> Checkpoint | None:
        return self.checkpoints.get(name)

    async def save(self, name: str, checkpoint: Checkpoint) -> None:
        self.checkpoints[name] = checkpoint


class FileCheckpointStore:
    """All checkpoints in one JSON file, replaced atomically (write, fsync, rename)."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def _read(self) -> dict[str, Checkpoint]:
        if not self.path.exists():
            return {}
        try:
            document = json.loads(self.path.read_text(encoding="utf-8"))
            return {name: Checkpoint.model_validate(cp) for name, cp in document.items()}
        except (OSError, ValueError, AttributeError, TypeError) as error:
            raise ChainError(
                f"{self.path}: checkpoint file cannot be read ({type(error).__name__})"
            ) from None

    async def load(self, name: str) -> Checkpoint | None:
        return self._read().get(name)

    async def save(self, name: str, checkpoint: Checkpoint) -> None:
        checkpoints = self._read()
        checkpoints[name] = checkpoint
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump({n: c.model_dump(mode="json") for n, c in checkpoints.items()}, handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
