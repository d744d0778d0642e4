"""The chain layer's `IntentStore` on the daemon's database (SQLite or PostgreSQL).

Honours the contract in `oracle.chain.intents`: `put` has committed when it returns, so
the transaction manager broadcasts only what a restarted process will find again; the
subjects an intent holds are rows of `tx_subject` (primary key: the subject), written in
the same transaction as the intent, so two replicas can never both record an intent on
the same subject (PostgreSQL: the second insert waits for the first to commit, then
conflicts; SQLite: write transactions run one at a time).

It is the chain layer's `BondLedger` too: an intent recorded with `BondHold`s reserves
them (`bond_reservation` rows) in the same transaction, after locking the signer's
`bond_budget` row of each currency (PostgreSQL: SELECT ... FOR UPDATE, so two replicas
weigh their bonds one after the other; SQLite: the intent's write already holds the
database's one writer lock), and the sum of the open reservations and the scans' figures
is weighed against the caps there (`oracle.chain.intents.weigh_holds`).

`PendingTransactions` (part of `Store`) summarizes the unfinished intents of every signer
for the daemon's gauges.
"""

from __future__ import annotations

import asyncio
from collections.abc import Collection, Iterable, Mapping, Sequence

from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select, update

from oracle.chain.intents import BondBook, BondHold, Intent, IntentState, intent_order, weigh_holds
from oracle.errors import SubjectsHeld
from oracle.store._transaction import Transactions
from oracle.store.tables import BondBudgetRow, BondReservationRow, TxIntentRow, TxSubjectRow


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
    # Only the store's transactions and clock, not the `Store` facade: the repository
    # composes `PendingTransactions` from this module, so the dependency runs one way.
    def __init__(self, store: Transactions) -> None:
        self._store = store

    async def get(self, key: str) -> Intent | None:
        return await asyncio.to_thread(self._get, key)

    async def put(self, intent: Intent, holds: Sequence[BondHold] = ()) -> None:
        await asyncio.to_thread(self._put, intent, holds)

    def bond_clock(self) -> float:
        return self._store.clock()

    async def observe_bonds(
        self,
        chain_id: int,
        sender: str,
        scope: str,
        outstanding: Mapping[str, int],
        started_at: float,
    ) -> BondBook:
        return await asyncio.to_thread(
            self._observe_bonds, chain_id, sender.lower(), scope, dict(outstanding), started_at
        )

    async def unfinished(self, chain_id: int, sender: str) -> list[Intent]:
        return await asyncio.to_thread(self._unfinished, chain_id, sender)

    async def holders(self, subjects: Collection[str]) -> dict[str, Intent]:
        return await asyncio.to_thread(self._holders, subjects)

    def _get(self, key: str) -> Intent | None:
        with self._store.reading() as session:
            row = session.get(TxIntentRow, key)
            return Intent.model_validate(row.data) if row is not None else None

    def _put(self, intent: Intent, holds: Sequence[BondHold] = ()) -> None:
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
                self._write_bonds(session, intent, holds)
        except IntegrityError:
            # Another process inserted a subject row between our check and our insert.
            taken = {
                subject: holder.key
                for subject, holder in self._holders(intent.subjects).items()
                if holder.key != intent.key
            }
            raise SubjectsHeld(
                intent.key, taken or dict.fromkeys(intent.subjects, "?"), intent.subjects
            ) from None

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
            raise SubjectsHeld(intent.key, taken, intent.subjects)  # rolls the put back
        mine = {row.subject for row in held}
        session.add_all(
            TxSubjectRow(subject=subject, intent_key=intent.key)
            for subject in intent.subjects
            if subject not in mine
        )

    # -- the bond budget ------------------------------------------------------------------

    def _write_bonds(self, session: Session, intent: Intent, holds: Sequence[BondHold]) -> None:
        """Release, mark confirmed, or reserve the intent's bonds (see the module
        docstring); raises BondRefused, which rolls the whole put back."""
        now = self._store.clock()
        mine = (
            update(BondReservationRow)
            .where(col(BondReservationRow.intent_key) == intent.key)
            .where(col(BondReservationRow.released_at).is_(None))
        )
        # An intent that will never be mined (reverted, skipped, failed) holds no bond.
        if not intent.state.holds_subjects:
            session.exec(mine.values(released_at=now))
            return
        if intent.state == IntentState.CONFIRMED:
            session.exec(
                mine.where(col(BondReservationRow.confirmed_at).is_(None)).values(confirmed_at=now)
            )
        if not holds:
            return
        signer = intent.sender.lower()
        budgets = self._lock_budgets(
            session, intent.chain_id, signer, {h.currency for h in holds}, now
        )
        if any(r.intent_key == intent.key for r in self._open(session, intent.chain_id, signer)):
            return  # reserved when it was first recorded
        on_chain, reserved = self._totals(session, budgets.values(), intent.chain_id, signer)
        weigh_holds(intent.key, holds, on_chain, reserved)
        session.add_all(
            BondReservationRow(
                chain_id=intent.chain_id,
                signer=signer,
                currency=hold.currency,
                scope=hold.scope,
                intent_key=intent.key,
                amount=str(hold.amount),
                created_at=now,
            )
            for hold in holds
        )

    @staticmethod
    def _lock_budgets(
        session: Session, chain_id: int, signer: str, currencies: Iterable[str], now: float
    ) -> dict[str, BondBudgetRow]:
        """The signer's budget rows of `currencies` (made if missing), locked until the
        transaction ends; with them, every other budget row of the signer, read."""
        wanted = sorted(set(currencies))  # one order everywhere: no deadlock between two
        for currency in wanted:
            exists = session.exec(
                select(BondBudgetRow.currency)
                .where(col(BondBudgetRow.chain_id) == chain_id)
                .where(col(BondBudgetRow.signer) == signer)
                .where(col(BondBudgetRow.currency) == currency)
            ).first()
            if exists is not None:
                continue
            try:
                with session.begin_nested():
                    session.add(
                        BondBudgetRow(
                            chain_id=chain_id,
                            signer=signer,
                            currency=currency,
                            on_chain={},
                            updated_at=now,
                        )
                    )
            except IntegrityError:
                pass  # another replica made it meanwhile; locked below
        rows = session.exec(
            select(BondBudgetRow)
            .where(col(BondBudgetRow.chain_id) == chain_id)
            .where(col(BondBudgetRow.signer) == signer)
            .where(col(BondBudgetRow.currency).in_(wanted))
            .order_by(col(BondBudgetRow.currency))
            .with_for_update()
        ).all()
        return {row.currency: row for row in rows}

    @staticmethod
    def _open(session: Session, chain_id: int, signer: str) -> Sequence[BondReservationRow]:
        return session.exec(
            select(BondReservationRow)
            .where(col(BondReservationRow.chain_id) == chain_id)
            .where(col(BondReservationRow.signer) == signer)
            .where(col(BondReservationRow.released_at).is_(None))
        ).all()

    def _totals(
        self,
        session: Session,
        budgets: Iterable[BondBudgetRow],
        chain_id: int,
        signer: str,
    ) -> tuple[dict[str, int], dict[str, int]]:
        on_chain = {
            row.currency: sum(int(seen["amount"]) for seen in row.on_chain.values())
            for row in budgets
        }
        reserved: dict[str, int] = {}
        for row in self._open(session, chain_id, signer):
            reserved[row.currency] = reserved.get(row.currency, 0) + int(row.amount)
        return on_chain, reserved

    def _observe_bonds(
        self,
        chain_id: int,
        signer: str,
        scope: str,
        outstanding: dict[str, int],
        started_at: float,
    ) -> BondBook:
        with self._store.session() as session:
            known = session.exec(
                select(BondBudgetRow.currency)
                .where(col(BondBudgetRow.chain_id) == chain_id)
                .where(col(BondBudgetRow.signer) == signer)
            ).all()
            now = self._store.clock()
            budgets = self._lock_budgets(
                session, chain_id, signer, set(known) | set(outstanding), now
            )
            last = max(
                (
                    float(row.on_chain[scope]["seen_from"])
                    for row in budgets.values()
                    if scope in row.on_chain
                ),
                default=0.0,
            )
            if last <= started_at:  # a scan older than the last one stored: ignored
                for currency, row in budgets.items():
                    figure = {"amount": str(outstanding.get(currency, 0)), "seen_from": started_at}
                    row.on_chain = {**row.on_chain, scope: figure}
                    row.updated_at = now
                    session.add(row)
                session.exec(
                    update(BondReservationRow)
                    .where(col(BondReservationRow.chain_id) == chain_id)
                    .where(col(BondReservationRow.signer) == signer)
                    .where(col(BondReservationRow.scope) == scope)
                    .where(col(BondReservationRow.released_at).is_(None))
                    .where(col(BondReservationRow.confirmed_at) <= started_at)
                    .values(released_at=now)
                )
                session.flush()
            on_chain, reserved = self._totals(session, budgets.values(), chain_id, signer)
            # Another venue's currency (the signer's budget holds every venue's) is not
            # this scope's unless it has bonds in it.
            mine = {
                currency: int(row.on_chain[scope]["amount"])
                for currency, row in budgets.items()
                if scope in row.on_chain
                and (int(row.on_chain[scope]["amount"]) or currency in outstanding)
            }
            for res in self._open(session, chain_id, signer):
                if res.scope == scope:
                    mine[res.currency] = mine.get(res.currency, 0) + int(res.amount)
            return BondBook(on_chain, reserved, mine)

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
