"""Who works on what: leases on markets (claimed by load among the replicas that ask for
work), leases on the singleton jobs, and a replica's leaving, which frees its share."""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import bindparam, func, update
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, delete, select

from oracle.core.lifecycle import MarketState
from oracle.store._transaction import MARKET, Transactions
from oracle.store.tables import JobLeaseRow, MarketRow, ReplicaRow

_RELEASE_LEASE = (
    update(MARKET)
    .where(MARKET.c.id == bindparam("market_id"))
    .where(MARKET.c.lease_owner == bindparam("owner"))
    .values(lease_owner=None, lease_expires_at=0.0)
)


class Leases(Transactions):
    def claim(
        self,
        owner: str,
        states: Sequence[MarketState],
        limit: int,
        lease_seconds: float,
        *,
        share_within: float | None = None,
        in_flight: int = 0,
    ) -> list[MarketRow]:
        """Lease up to `limit` markets in `states` whose lease has expired. (When a market's
        time has come is judged, on its venue's clock, before it enters these states: by
        `promote_due` and `waiting`.)

        With `share_within` (seconds), `owner` is recorded as a replica asking for work
        now with `in_flight` markets in hand, and takes at most its share: the claimable
        markets and those in flight at the replicas that asked within that many seconds,
        divided evenly among those replicas (rounded up), less what it holds already. So
        replicas divide the work by load whoever found it (a trickle of single markets
        too), the shares cover everything claimable, and one replica alone takes all.
        """
        now = self.clock()
        waiting = (
            col(MarketRow.state).in_(list(states)),
            col(MarketRow.lease_expires_at) < now,
        )
        with self.session() as session:
            if share_within is not None:
                session.merge(ReplicaRow(id=owner, seen_at=now, in_flight=in_flight))
                session.flush()
                replicas, busy = session.exec(
                    select(func.count(), func.coalesce(func.sum(ReplicaRow.in_flight), 0))
                    .select_from(ReplicaRow)
                    .where(col(ReplicaRow.seen_at) >= now - share_within)
                ).one()
                claimable = session.exec(
                    select(func.count()).select_from(MarketRow).where(*waiting)
                ).one()
                even = -(-(claimable + busy) // max(replicas, 1))
                limit = min(limit, even - in_flight)
                if limit <= 0:
                    return []
            query = (
                select(MarketRow)
                .where(*waiting)
                .order_by(col(MarketRow.next_attempt_at), col(MarketRow.resolve_after))
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
            rows = list(session.exec(query).all())
            for row in rows:
                row.lease_owner = owner
                row.lease_expires_at = now + lease_seconds
                row.version += 1
                session.add(row)
            if share_within is not None and rows:  # what the others see it holds now
                session.merge(ReplicaRow(id=owner, seen_at=now, in_flight=in_flight + len(rows)))
            return rows

    def release_lease(self, market_id: str, owner: str) -> None:
        with self._writing() as connection:
            connection.execute(_RELEASE_LEASE, {"market_id": market_id, "owner": owner})

    def try_acquire_job(self, name: str, owner: str, lease_seconds: float) -> bool:
        """Hold the singleton job `name` for `lease_seconds`; True when this owner has it."""
        now = self.clock()
        try:
            with self.session() as session:
                row = session.exec(
                    select(JobLeaseRow).where(col(JobLeaseRow.name) == name).with_for_update()
                ).first()
                if row is None:
                    session.add(JobLeaseRow(name=name, owner=owner, expires_at=now + lease_seconds))
                    return True
                if row.owner != owner and row.expires_at >= now:
                    return False
                row.owner = owner
                row.expires_at = now + lease_seconds
                session.add(row)
                return True
        except IntegrityError:
            return False  # another replica created the lease row at the same moment

    def leave(self, owner: str) -> None:
        """A replica that stops: its singleton jobs are free at once (not when their
        leases expire) and it no longer counts among the replicas that share work."""
        with self.session() as session:
            session.exec(delete(JobLeaseRow).where(col(JobLeaseRow.owner) == owner))
            session.exec(delete(ReplicaRow).where(col(ReplicaRow.id) == owner))
