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

CONFIRMED, REVERTED, SKIPPED and FAILED are final. The states, the events that move an
intent between them and the full table are in `oracle.core.intents`; every change of
state goes through its `transition`. A signed transaction is stored before
it is first broadcast, so after a crash every transaction that may be on the network is
known, and `TxManager.recover()` reconciles the unfinished ones by nonce and hash.

Subjects: an intent may name what it acts on (for a proposal, each question in its
round). While an intent is unfinished, and once it is confirmed, it *holds* its subjects:
no other intent (another key, or another signer's) naming one of them can be recorded,
so an action is never in two transactions at once, whatever crashes, restarts and
replicas do. A reverted, skipped or failed intent lets its subjects go.

The `IntentStore` protocol is what the transaction manager needs from storage. Its
contract, which the daemon's database implementation must honour too:

* `put(intent)` inserts or replaces the intent with that `key`, and is durable when it
  returns (committed / fsynced): the manager broadcasts only after `put` returns. When the
  intent holds subjects (`IntentState.holds_subjects`) and another intent holds one of
  them, `put` raises `SubjectsHeld` and stores nothing; when it no longer holds them,
  they are let go in the same write. Check and write are one atomic step, also between
  processes sharing the store.
* `holders(subjects)` maps each of `subjects` held by some intent to that intent.
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
from collections.abc import Collection
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from oracle.core.intents import IntentState
from oracle.errors import ChainError, SubjectsHeld

__all__ = [
    "Attempt",
    "FileIntentStore",
    "InMemoryIntentStore",
    "Inclusion",
    "Intent",
    "IntentState",
    "IntentStore",
    "intent_order",
]


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
    subjects: tuple[str, ...] = ()  # what it acts on; see the module docstring
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

    async def holders(self, subjects: Collection[str]) -> dict[str, Intent]: ...


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
        self._check_subjects(intent)
        self._intents[intent.key] = intent

    def _check_subjects(self, intent: Intent) -> None:
        if not intent.state.holds_subjects:
            return
        taken = {
            subject: holder.key
            for subject, holder in self._holders(intent.subjects).items()
            if holder.key != intent.key
        }
        if taken:
            raise SubjectsHeld(intent.key, taken)

    def _holders(self, subjects: Collection[str]) -> dict[str, Intent]:
        wanted = set(subjects)
        return {
            subject: intent
            for intent in self._intents.values()
            if intent.state.holds_subjects
            for subject in intent.subjects
            if subject in wanted
        }

    async def holders(self, subjects: Collection[str]) -> dict[str, Intent]:
        return self._holders(subjects)

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
            self._check_subjects(intent)
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
