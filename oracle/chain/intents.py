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

Bonds (`BondLedger`, which the stores here and the daemon's database implement): an
intent that posts a bond is recorded with its `BondHold`s (`put(intent, holds)`), and the
store reserves each bond for (chain, signer, currency) in the same atomic write, weighing
it with `oracle.core.budget.check_budget` against the open reservations and the bonds the
venues' scans last saw on chain; a refusal raises `BondRefused` and stores nothing. The
reservation is released when the intent ends without a bond on chain (REVERTED, FAILED,
SKIPPED: in the same write), or, once CONFIRMED, by the first scan of the bond's venue
(`observe_bonds` with its `scope`) that started after the confirmation: from then on
that scan's figure counts the bond, so reserved + outstanding never counts it twice nor
loses it. A scan older than the last one stored for its scope is ignored.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from oracle.core.budget import OUTSTANDING_CAP, PER_REQUEST_CAP, BudgetCaps, check_budget
from oracle.core.intents import IntentState
from oracle.errors import BondRefused, ChainError, SubjectsHeld

__all__ = [
    "Attempt",
    "BondBook",
    "BondHold",
    "BondLedger",
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


NATIVE_CURRENCY = "native"  # the currency of a bond in the chain's own token


class BondHold(_Frozen):
    """One bond an intent posts, with the caps of the venue that posts it.

    `scope` names what scans the bond once on chain (the venue's contract, lower case);
    `currency` is the token (EIP-55) or `native`; `stake` is what the per-request cap
    weighs (None: `amount`)."""

    scope: str
    currency: str
    amount: int = Field(ge=0)
    stake: int | None = None
    max_per_request: int | None = None
    max_outstanding: int | None = None
    per_request_reason: str = PER_REQUEST_CAP
    outstanding_reason: str = OUTSTANDING_CAP

    @property
    def caps(self) -> BudgetCaps:
        return BudgetCaps(
            self.max_per_request,
            self.max_outstanding,
            self.per_request_reason,
            self.outstanding_reason,
        )


@dataclass(frozen=True)
class BondBook:
    """A signer's bonds by currency, as the ledger holds them after a scan: `on_chain`
    (every scope's last scan), `reserved` (open reservations, every scope) and `mine`
    (this scope's scan plus its open reservations: the venue's bonds at risk)."""

    on_chain: dict[str, int] = field(default_factory=dict)
    reserved: dict[str, int] = field(default_factory=dict)
    mine: dict[str, int] = field(default_factory=dict)

    def at_stake(self, currency: str) -> tuple[int, int]:
        return self.on_chain.get(currency, 0), self.reserved.get(currency, 0)


@runtime_checkable
class BondLedger(Protocol):
    """The bond budget's side of a store (see the module docstring)."""

    def bond_clock(self) -> float: ...

    async def observe_bonds(
        self,
        chain_id: int,
        sender: str,
        scope: str,
        outstanding: Mapping[str, int],
        started_at: float,
    ) -> BondBook: ...


def weigh_holds(
    key: str,
    holds: Sequence[BondHold],
    on_chain: Mapping[str, int],
    reserved: Mapping[str, int],
) -> None:
    """Raise `BondRefused` unless every hold fits with the ones before it."""
    added: dict[str, int] = {}
    for hold in holds:
        refusal = check_budget(
            hold.caps,
            amount=hold.amount,
            stake=hold.stake,
            outstanding=on_chain.get(hold.currency, 0),
            reserved=reserved.get(hold.currency, 0) + added.get(hold.currency, 0),
        )
        if refusal is not None:
            raise BondRefused(key, refusal.reason, refusal.detail)
        added[hold.currency] = added.get(hold.currency, 0) + hold.amount


class IntentStore(Protocol):
    """Durable storage of intents; see the module docstring for the contract."""

    async def get(self, key: str) -> Intent | None: ...

    async def put(self, intent: Intent, holds: Sequence[BondHold] = ()) -> None: ...

    async def unfinished(self, chain_id: int, sender: str) -> list[Intent]: ...

    async def holders(self, subjects: Collection[str]) -> dict[str, Intent]: ...


def intent_order(intent: Intent) -> tuple[int, int, str]:
    """The order `unfinished` returns: by nonce, intents without one last."""
    return (intent.nonce is None, intent.nonce or 0, intent.key)


class InMemoryIntentStore:
    """An `IntentStore` in a dict: for tests and one-shot commands."""

    def __init__(self) -> None:
        self._intents: dict[str, Intent] = {}
        self._reservations: list[_Reservation] = []
        self._on_chain: dict[tuple[int, str, str], dict[str, tuple[int, float]]] = {}

    async def get(self, key: str) -> Intent | None:
        return self._intents.get(key)

    async def put(self, intent: Intent, holds: Sequence[BondHold] = ()) -> None:
        self._check_subjects(intent)
        self._reserve(intent, holds)
        self._intents[intent.key] = intent

    # -- the bond ledger (one process: no await between check and write) ------------------

    def bond_clock(self) -> float:
        return time.time()

    def _open(self, chain_id: int, sender: str) -> list[_Reservation]:
        return [
            r
            for r in self._reservations
            if r.released_at is None and r.chain_id == chain_id and r.sender == sender.lower()
        ]

    def _totals(self, chain_id: int, sender: str) -> tuple[dict[str, int], dict[str, int]]:
        on_chain: dict[str, int] = {}
        for (chain, signer, currency), scopes in self._on_chain.items():
            if chain == chain_id and signer == sender.lower():
                on_chain[currency] = sum(amount for amount, _ in scopes.values())
        reserved: dict[str, int] = {}
        for r in self._open(chain_id, sender):
            reserved[r.currency] = reserved.get(r.currency, 0) + r.amount
        return on_chain, reserved

    def _reserve(self, intent: Intent, holds: Sequence[BondHold]) -> None:
        now = self.bond_clock()
        mine = [r for r in self._reservations if r.key == intent.key and r.released_at is None]
        if intent.state in (IntentState.REVERTED, IntentState.FAILED, IntentState.SKIPPED):
            for r in mine:
                r.released_at = now
            return
        if intent.state == IntentState.CONFIRMED:
            for r in mine:
                r.confirmed_at = r.confirmed_at or now
        if not holds or mine:
            return
        on_chain, reserved = self._totals(intent.chain_id, intent.sender)
        weigh_holds(intent.key, holds, on_chain, reserved)
        self._reservations.extend(
            _Reservation(
                intent.chain_id,
                intent.sender.lower(),
                h.scope,
                h.currency,
                intent.key,
                h.amount,
                now,
            )
            for h in holds
        )

    async def observe_bonds(
        self,
        chain_id: int,
        sender: str,
        scope: str,
        outstanding: Mapping[str, int],
        started_at: float,
    ) -> BondBook:
        signer = sender.lower()
        currencies = {c for (ch, s, c) in self._on_chain if ch == chain_id and s == signer}
        seen = [
            scopes[scope][1]
            for (ch, s, _), scopes in self._on_chain.items()
            if ch == chain_id and s == signer and scope in scopes
        ]
        if max(seen, default=0.0) <= started_at:  # an older scan than the last: ignored
            for currency in currencies | set(outstanding):
                self._on_chain.setdefault((chain_id, signer, currency), {})[scope] = (
                    outstanding.get(currency, 0),
                    started_at,
                )
            for r in self._open(chain_id, signer):
                if r.scope == scope and r.confirmed_at is not None and r.confirmed_at <= started_at:
                    r.released_at = started_at
        on_chain, reserved = self._totals(chain_id, signer)
        mine: dict[str, int] = {}
        for (ch, s, currency), scopes in self._on_chain.items():
            # Another venue's currency (the signer's budget holds every venue's) is not
            # this scope's unless it has bonds in it.
            ours = ch == chain_id and s == signer and scope in scopes
            if ours and (scopes[scope][0] or currency in outstanding):
                mine[currency] = scopes[scope][0]
        for r in self._open(chain_id, signer):
            if r.scope == scope:
                mine[r.currency] = mine.get(r.currency, 0) + r.amount
        return BondBook(on_chain, reserved, mine)

    def _check_subjects(self, intent: Intent) -> None:
        if not intent.state.holds_subjects:
            return
        taken = {
            subject: holder.key
            for subject, holder in self._holders(intent.subjects).items()
            if holder.key != intent.key
        }
        if taken:
            raise SubjectsHeld(intent.key, taken, intent.subjects)

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


@dataclass
class _Reservation:
    chain_id: int
    sender: str
    scope: str
    currency: str
    key: str
    amount: int
    created_at: float
    confirmed_at: float | None = None
    released_at: float | None = None


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

    async def put(self, intent: Intent, holds: Sequence[BondHold] = ()) -> None:
        # Its bond reservations live in memory: one process uses a file store.
        async with self._lock:
            self._check_subjects(intent)
            self._reserve(intent, holds)
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
