"""What every aggregate of the store shares: its transactions, and the one way a market
changes state (`Transactions._transition`, through the lifecycle table with an audit row).

The per-market writes are SQLAlchemy Core statements built once with bound parameters:
the ORM's unit of work cost about four times as much CPU per transition, and at a
thousand markets a minute the daemon's CPU is its throughput.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, nullcontext
from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, Table, Update, bindparam, insert, update
from sqlalchemy import select as core_select
from sqlalchemy.orm import configure_mappers
from sqlmodel import Session

from oracle.core.lifecycle import MarketEvent, MarketState, transition
from oracle.errors import LeaseLost, StoreError
from oracle.store.engine import READ_ONLY
from oracle.store.tables import AuditRow, MarketRow

Clock = Callable[[], float]

MARKET: Table = MarketRow.__table__  # type: ignore[attr-defined]
AUDIT: Table = AuditRow.__table__  # type: ignore[attr-defined]

INSERT_AUDIT = insert(AUDIT)
_MARKET_MAPPER = MarketRow.__mapper__  # type: ignore[attr-defined]
_LOCK_MARKET = core_select(MARKET).where(MARKET.c.id == bindparam("market_id")).with_for_update()


@cache
def _update_market(columns: tuple[str, ...]) -> Update:
    """UPDATE market SET <columns> for one market (one statement per set of columns)."""
    return (
        update(MARKET)
        .where(MARKET.c.id == bindparam("market_id"))
        .values({name: bindparam(f"v_{name}") for name in columns})
    )


def market_row(values: Mapping[str, Any]) -> MarketRow:
    """A detached row from a market's column values (as read, so not validated again)."""
    # A constructed row's attributes need the ORM's mappers set up, which only a query
    # through a Session would otherwise do (a process may never run one).
    if not _MARKET_MAPPER.configured:
        configure_mappers()
    return MarketRow.model_construct(**values)


class Transactions:
    """The engine, the clock, and the transactions every aggregate's methods run in."""

    def __init__(self, engine: Engine, clock: Clock = time.time) -> None:
        self.engine = engine
        self.clock = clock
        # The entry of `chains` each chain source is on: recorded with its markets.
        self.source_chains: dict[str, str] = {}
        self._reader = engine.execution_options(**{READ_ONLY: True})
        # SQLite has one writer: this process's writers queue here, woken as soon as the
        # lock is free, instead of sleeping in SQLite's busy handler.
        self._write_lock = threading.Lock() if engine.dialect.name == "sqlite" else None
        # What this thread's write transaction runs once it has committed (`_after_commit`).
        self._committing = threading.local()

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One write transaction: committed when the block ends, rolled back if it raises."""
        with (
            self._then_after_commit(),
            self._write_lock or nullcontext(),
            Session(self.engine, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        """One write transaction at the Core level (the hot paths' statements)."""
        with (
            self._then_after_commit(),
            self._write_lock or nullcontext(),
            self.engine.begin() as connection,
        ):
            yield connection

    def _after_commit(self, callback: Callable[[], None]) -> None:
        """Run `callback` once the current write transaction has committed; never if it
        rolls back (what it reports would not be so)."""
        pending: list[Callable[[], None]] | None = getattr(self._committing, "pending", None)
        if pending is None:
            raise StoreError("_after_commit outside a write transaction")
        pending.append(callback)

    @contextmanager
    def _then_after_commit(self) -> Iterator[None]:
        if getattr(self._committing, "pending", None) is not None:
            yield  # an inner transaction: the outermost one runs them
            return
        pending: list[Callable[[], None]] = []
        self._committing.pending = pending
        try:
            yield
        finally:
            self._committing.pending = None
        for callback in pending:  # reached only when the block committed
            callback()

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """One read-only transaction, concurrent with writers (a snapshot on SQLite WAL)."""
        with Session(self._reader, expire_on_commit=False) as session, session.begin():
            yield session

    def _transition(
        self,
        connection: Connection,
        market_id: str,
        event: MarketEvent,
        *,
        actor: str,
        reason: str,
        lease_owner: str | None,
        updates: Mapping[str, Any] | None = None,
        extend_lease: float | None = None,
    ) -> MarketRow:
        """Move a market by `event` through the lifecycle table, with its audit row, inside
        the caller's transaction: the only place a market's state is written.

        Locks the row; with `lease_owner`, LeaseLost unless that owner still holds the
        lease; IllegalTransition (writing nothing) unless the table allows `event` from the
        current state. `updates` are other columns to write with it; `extend_lease`
        renews the lease for that many seconds from now.
        """
        if updates and {"state", "state_changed_at"} & set(updates):
            raise StoreError("a market's state changes only by an event of the lifecycle table")
        now = self.clock()
        row = connection.execute(_LOCK_MARKET, {"market_id": market_id}).mappings().first()
        if row is None:
            raise StoreError(f"market {market_id!r} is not known")
        if lease_owner is not None and (
            row["lease_owner"] != lease_owner or row["lease_expires_at"] < now
        ):
            raise LeaseLost(f"market {market_id!r}: lease lost by {lease_owner}")
        current = MarketState(row["state"])
        new_state = transition(current, event)
        values = {
            **(updates or {}),
            "state": new_state.value,
            "state_changed_at": now,
            "version": row["version"] + 1,
        }
        if extend_lease is not None:
            values["lease_expires_at"] = now + extend_lease
        statement = _update_market(tuple(sorted(values)))
        connection.execute(
            statement, {"market_id": market_id, **{f"v_{k}": v for k, v in values.items()}}
        )
        connection.execute(
            INSERT_AUDIT,
            {
                "market_id": market_id,
                "at": now,
                "from_state": current.value,
                "event": event.value,
                "to_state": new_state.value,
                "reason": reason,
                "actor": actor,
            },
        )
        return market_row({**row, **values})
