"""Who works on what: leases on markets (claimed by load among the replicas that ask for
work), leases on the singleton jobs, and a replica's leaving, which frees its share."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, Table, bindparam, func, insert, update
from sqlalchemy import select as core_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, delete

from oracle.core.lifecycle import MarketState
from oracle.store._transaction import MARKET, Transactions, market_row
from oracle.store.tables import JobLeaseRow, MarketRow, ReplicaRow

# Core statements built once: `claim` and `try_acquire_job` run several times a second on
# every replica, busy or idle, and the ORM's unit of work cost several times as much CPU.
_REPLICA: Table = ReplicaRow.__table__  # type: ignore[attr-defined]
_JOB: Table = JobLeaseRow.__table__  # type: ignore[attr-defined]

_RELEASE_LEASE = (
    update(MARKET)
    .where(MARKET.c.id == bindparam("market_id"))
    .where(MARKET.c.lease_owner == bindparam("owner"))
    .values(lease_owner=None, lease_expires_at=0.0)
)
_LEASE_MARKET = (
    update(MARKET)
    .where(MARKET.c.id == bindparam("market_id"))
    .values(
        lease_owner=bindparam("v_lease_owner"),
        lease_expires_at=bindparam("v_lease_expires_at"),
        version=bindparam("v_version"),
    )
)
_SEEN_REPLICA = (
    update(_REPLICA)
    .where(_REPLICA.c.id == bindparam("replica"))
    .values(seen_at=bindparam("v_seen_at"), in_flight=bindparam("v_in_flight"))
)
_INSERT_REPLICA = insert(_REPLICA)
_LOCK_JOB = core_select(_JOB).where(_JOB.c.name == bindparam("name")).with_for_update()
_INSERT_JOB = insert(_JOB)
_HOLD_JOB = (
    update(_JOB)
    .where(_JOB.c.name == bindparam("job"))
    .values(owner=bindparam("v_owner"), expires_at=bindparam("v_expires_at"))
)


def _seen(connection: Connection, replica: str, now: float, in_flight: int) -> None:
    """Record `replica` as asking for work now with `in_flight` markets in hand."""
    seen = {"v_seen_at": now, "v_in_flight": in_flight}
    if connection.execute(_SEEN_REPLICA, {"replica": replica, **seen}).rowcount == 0:
        connection.execute(_INSERT_REPLICA, {"id": replica, "seen_at": now, "in_flight": in_flight})


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
            MARKET.c.state.in_(list(states)),
            MARKET.c.lease_expires_at < now,
        )
        with self._writing() as connection:
            if share_within is not None:
                _seen(connection, owner, now, in_flight)
                replicas, busy = connection.execute(
                    core_select(func.count(), func.coalesce(func.sum(_REPLICA.c.in_flight), 0))
                    .select_from(_REPLICA)
                    .where(_REPLICA.c.seen_at >= now - share_within)
                ).one()
                if replicas > 1:  # alone, its share is all that is claimable: no count
                    claimable = connection.execute(
                        core_select(func.count()).select_from(MARKET).where(*waiting)
                    ).scalar_one()
                    even = -(-(claimable + busy) // replicas)
                    limit = min(limit, even - in_flight)
                    if limit <= 0:
                        return []
            query = (
                core_select(MARKET)
                .where(*waiting)
                .order_by(MARKET.c.next_attempt_at, MARKET.c.resolve_after)
                .limit(limit)
                .with_for_update(skip_locked=True)
            )
            found = connection.execute(query).mappings().all()
            if not found:
                return []
            lease: dict[str, Any] = {
                "lease_owner": owner,
                "lease_expires_at": now + lease_seconds,
            }
            rows = [{**row, **lease, "version": row["version"] + 1} for row in found]
            connection.execute(  # one executemany
                _LEASE_MARKET,
                [
                    {"market_id": row["id"], **{f"v_{k}": row[k] for k in (*lease, "version")}}
                    for row in rows
                ],
            )
            if share_within is not None:  # what the others see it holds now
                _seen(connection, owner, now, in_flight + len(rows))
            return [market_row(row) for row in rows]

    def release_lease(self, market_id: str, owner: str) -> None:
        with self._writing() as connection:
            connection.execute(_RELEASE_LEASE, {"market_id": market_id, "owner": owner})

    def try_acquire_job(self, name: str, owner: str, lease_seconds: float) -> bool:
        """Hold the singleton job `name` for `lease_seconds`; True when this owner has it."""
        now = self.clock()
        try:
            with self._writing() as connection:
                row = connection.execute(_LOCK_JOB, {"name": name}).first()
                if row is None:
                    connection.execute(
                        _INSERT_JOB,
                        {"name": name, "owner": owner, "expires_at": now + lease_seconds},
                    )
                    return True
                if row.owner != owner and row.expires_at >= now:
                    return False
                connection.execute(
                    _HOLD_JOB, {"job": name, "v_owner": owner, "v_expires_at": now + lease_seconds}
                )
                return True
        except IntegrityError:
            return False  # another replica created the lease row at the same moment

    def leave(self, owner: str) -> None:
        """A replica that stops: its singleton jobs are free at once (not when their
        leases expire) and it no longer counts among the replicas that share work."""
        with self.session() as session:
            session.exec(delete(JobLeaseRow).where(col(JobLeaseRow.owner) == owner))
            session.exec(delete(ReplicaRow).where(col(ReplicaRow.id) == owner))
