"""Intents: every transaction the oracle means to send, recorded before it is broadcast.

An `Intent` is one logical action under a caller-chosen idempotency key (for example
`propose:<question id>`). It holds the call (to, data, value, gas), the nonce, and every
signed attempt (the raw transaction and its hash; replacements add attempts with the same
nonce and higher fees). States::

    SIGNED ──broadcast──> BROADCAST ──receipt──> MINED ──depth reached──> CONFIRMED
       │                    ^  │                   │                  └─> REVERTED
       │                    │  └─ replaced (new    └─ reorg: receipt gone -> BROADCAST
       │                    │     attempt, same nonce)
       └─ node refused ─> FAILED          SKIPPED: the pre-send check found it done

CONFIRMED, REVERTED, SKIPPED and FAILED are final. A signed transaction is stored before
it is first broadcast, so after a crash every transaction that may be on the network is
known, and `TxManager.recover()` reconciles the unfinished ones by nonce and hash.

The `IntentStore` protocol is what the transaction manager needs from storage. Its
contract, which the daemon's database implementation must honour too:

* `put(intent)` inserts or replaces the intent with that `key`, and is durable when it
  returns (committed / fsynced): the manager broadcasts only after `put` returns.
* `get(key)` returns the last intent put under `key`, equal field for field, or None.
* `unfinished(chain_id, sender)` returns every intent of that chain and sender whose state
  is not final, ordered by nonce (intents without a nonce last).
* Keys are unique per store; one `TxManager` per sender and chain writes at a time.
* Raw signed transactions are public data; no key or password is ever given to a store.
"""

from __future__ import annotations

import asyncio
import json
import os
from enum import StrEnum
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from oracle.chain.errors import ChainError


class IntentState(StrEnum):
    SIGNED = "signed"
    BROADCAST = "broadcast"
    MINED = "mined"
    CONFIRMED = "confirmed"
    REVERTED = "reverted"
    SKIPPED = "skipped"
    FAILED = "failed"

    @property
    def final(self) -> bool:
        return self in _FINAL


_FINAL = frozenset(
    {IntentState.CONFIRMED, IntentState.REVERTED, IntentState.SKIPPED, IntentState.FAILED}
)


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Attempt(_Frozen):
    """One signed transaction of an intent."""

    tx_hash: str
    raw_tx: str = Field(repr=False)
    max_fee_per_gas: int
    max_priority_fee_per_gas: int
    sent_at_block: int | None = None  # head when last broadcast; None before the first


class Inclusion(_Frozen):
    """Where an attempt was mined."""

    tx_hash: str
    block_number: int
    block_hash: str
    status: int
    gas_used: int
    effective_gas_price: int
    contract_address: str | None = None


class Intent(_Frozen):
    key: str
    chain_id: int
    sender: str
    to: str | None  # None deploys a contract
    data: str = "0x"
    value: int = 0
    gas_limit: int = 0
    nonce: int | None = None
    state: IntentState
    attempts: tuple[Attempt, ...] = ()
    inclusion: Inclusion | None = None
    error: str | None = None
    error_name: str | None = None
    superseded_hashes: tuple[str, ...] = ()  # attempts at a nonce someone else consumed
    created_at: float
    updated_at: float

    @property
    def latest(self) -> Attempt:
        if not self.attempts:
            raise ValueError(f"intent {self.key} has no attempt")
        return self.attempts[-1]

    @property
    def hashes(self) -> tuple[str, ...]:
        return tuple(a.tx_hash for a in self.attempts)

    @property
    def final(self) -> bool:
        return self.state.final


class IntentStore(Protocol):
    """Durable storage of intents; see the module docstring for the contract."""

    async def get(self, key: str) -> Intent | None: ...

    async def put(self, intent: Intent) -> None: ...

    async def unfinished(self, chain_id: int, sender: str) -> list[Intent]: ...


def intent_order(intent: Intent) -> tuple[int, int, str]:
    """The order `unfinished` returns: by nonce, intents without one last."""
    return (intent.nonce is None, intent.nonce or 0, intent.key)


class InMemoryIntentStore:
    """An `IntentStore` in a dict: for tests and one-shot commands."""

    def __init__(self) -> None:
        self._intents: dict[str, Intent] = {}

    async def get(self, key: str) -> Intent | None:
        return self._intents.get(key)

    async def put(self, intent: Intent) -> None:
        self._intents[intent.key] = intent

    async def unfinished(self, chain_id: int, sender: str) -> list[Intent]:
        found = [
            i
            for i in self._intents.values()
            if i.chain_id == chain_id and i.sender.lower() == sender.lower() and not i.final
        ]
        return sorted(found, key=intent_order)

    def all(self) -> list[Intent]:
        return sorted(self._intents.values(), key=intent_order)


class FileIntentStore(InMemoryIntentStore):
    """An `IntentStore` in one JSON file, rewritten atomically and fsynced on every put.

    Good for a single process with a modest number of intents (the CLI, tests); the
    daemon uses its database.
    """

    def __init__(self, path: Path | str) -> None:
        super().__init__()
        self.path = Path(path)
        self._lock = asyncio.Lock()
        if self.path.exists():
            try:
                document = json.loads(self.path.read_text(encoding="utf-8"))
                intents = [Intent.model_validate(item) for item in document["intents"]]
            except (OSError, ValueError, KeyError, TypeError) as error:
                raise ChainError(
                    f"{self.path}: intent store cannot be read ({type(error).__name__})"
                ) from None
            self._intents = {i.key: i for i in intents}

    async def put(self, intent: Intent) -> None:
        async with self._lock:
            self._intents[intent.key] = intent
            self._write()

    def _write(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        document = {"intents": [i.model_dump(mode="json") for i in self.all()]}
        temporary = self.path.with_name(self.path.name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as handle:
            json.dump(document, handle, indent=1)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temporary, self.path)
        directory = os.open(self.path.parent, os.O_RDONLY)
        try:
            os.fsync(directory)
        finally:
            os.close(directory)
