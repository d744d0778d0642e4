"""The daemon's persistence: markets with leases and audited transitions, research runs,
agent results, verdicts with proofs, review items, singleton-job leases, checkpoints.

Synchronous (SQLAlchemy); the daemon calls it through `asyncio.to_thread`. Every method
is one transaction. Concurrency between replicas:

- Work is claimed with row leases: `claim` takes markets whose lease has expired, with
  `SELECT ... FOR UPDATE SKIP LOCKED` on PostgreSQL (replicas skip each other's rows
  instead of waiting) and `BEGIN IMMEDIATE` on SQLite (one writer at a time).
- A state change (`apply_event`) locks the row, checks the caller still holds the lease,
  asks the pure lifecycle table for the next state, and writes the audit row in the same
  transaction. A replica whose lease was taken over gets `LeaseLost` and stops.
- A stage's data and the transition that ends the stage share one transaction
  (`start_research`, `finish_research`, `record_verdict`): a crash leaves either both
  or neither.

The daemon's per-market writes are SQLAlchemy Core statements built once with bound
parameters: the ORM's unit of work cost about four times as much CPU per transition,
and at a thousand markets a minute the daemon's CPU is its throughput.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext
from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, Table, Update, bindparam, func, insert, or_, update
from sqlalchemy import select as core_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import Session, col, delete, select

from oracle.core.lifecycle import MarketEvent, MarketState, transition
from oracle.core.markets import MarketSpec
from oracle.core.models import AgentFailure, AgentResult, ConsensusResult, ResearchSource
from oracle.errors import LeaseLost, StoreError
from oracle.store.engine import READ_ONLY
from oracle.store.tables import (
    AgentResultRow,
    AgentSourceRow,
    AuditRow,
    CheckpointRow,
    ConsensusRow,
    JobLeaseRow,
    MarketRow,
    ReplicaRow,
    ResearchRunRow,
    ReviewItemRow,
)

Clock = Callable[[], float]

_MARKET: Table = MarketRow.__table__  # type: ignore[attr-defined]
_AUDIT: Table = AuditRow.__table__  # type: ignore[attr-defined]
_RUN: Table = ResearchRunRow.__table__  # type: ignore[attr-defined]
_RESULT: Table = AgentResultRow.__table__  # type: ignore[attr-defined]
_SOURCE: Table = AgentSourceRow.__table__  # type: ignore[attr-defined]
_CONSENSUS: Table = ConsensusRow.__table__  # type: ignore[attr-defined]
_REVIEW: Table = ReviewItemRow.__table__  # type: ignore[attr-defined]

_LOCK_MARKET = core_select(_MARKET).where(_MARKET.c.id == bindparam("market_id")).with_for_update()
_HOLDER = (
    (_MARKET.c.id == bindparam("market_id"))
    & (_MARKET.c.lease_owner == bindparam("owner"))
    & (_MARKET.c.lease_expires_at >= bindparam("now"))
)
_RELEASE_LEASE = (
    update(_MARKET)
    .where(_MARKET.c.id == bindparam("market_id"))
    .where(_MARKET.c.lease_owner == bindparam("owner"))
    .values(lease_owner=None, lease_expires_at=0.0)
)
_CLOSE_RUN = (
    update(_RUN)
    .where(_RUN.c.id == bindparam("run_id"))
    .values(status="done", finished_at=bindparam("v_finished_at"))
)
_RUN_EXISTS = core_select(_RUN.c.id).where(_RUN.c.id == bindparam("run_id"))
_INSERT_MARKET = insert(_MARKET)
_INSERT_AUDIT = insert(_AUDIT)
_INSERT_RUN = insert(_RUN).returning(_RUN.c.id)
_INSERT_RESULT = insert(_RESULT).returning(_RESULT.c.id)
_INSERT_SOURCE = insert(_SOURCE)
_INSERT_CONSENSUS = insert(_CONSENSUS).returning(_CONSENSUS.c.id)
_INSERT_REVIEW = insert(_REVIEW).returning(_REVIEW.c.id)


@cache
def _update_market(columns: tuple[str, ...]) -> Update:
    """UPDATE market SET <columns> for one market (one statement per set of columns)."""
    return (
        update(_MARKET)
        .where(_MARKET.c.id == bindparam("market_id"))
        .values({name: bindparam(f"v_{name}") for name in columns})
    )


def _market_row(values: Mapping[str, Any]) -> MarketRow:
    """A detached row from a market's column values (as read, so not validated again)."""
    return MarketRow.model_construct(**values)


class Store:
    def __init__(self, engine: Engine, clock: Clock = time.time) -> None:
        self.engine = engine
        self.clock = clock
        self._reader = engine.execution_options(**{READ_ONLY: True})
        # SQLite has one writer: this process's writers queue here, woken as soon as the
        # lock is free, instead of sleeping in SQLite's busy handler.
        self._write_lock = threading.Lock() if engine.dialect.name == "sqlite" else None

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One write transaction: committed when the block ends, rolled back if it raises."""
        with (
            self._write_lock or nullcontext(),
            Session(self.engine, expire_on_commit=False) as session,
            session.begin(),
        ):
            yield session

    @contextmanager
    def _writing(self) -> Iterator[Connection]:
        """One write transaction at the Core level (the hot paths' statements)."""
        with self._write_lock or nullcontext(), self.engine.begin() as connection:
            yield connection

    @contextmanager
    def reading(self) -> Iterator[Session]:
        """One read-only transaction, concurrent with writers (a snapshot on SQLite WAL)."""
        with Session(self._reader, expire_on_commit=False) as session, session.begin():
            yield session

    # -- markets -----------------------------------------------------------------------

    def add_discovered(self, specs: Iterable[MarketSpec], actor: str) -> list[str]:
        """Track markets not seen before; returns the ids that were new. Idempotent."""
        specs = list({spec.market_id: spec for spec in specs}.values())
        try:
            return self._add_markets(specs, actor)
        except IntegrityError:
            # Another replica added some of them meanwhile: add the rest one by one.
            added = []
            for spec in specs:
                try:
                    added += self._add_markets([spec], actor)
                except IntegrityError:
                    continue
            return added

    def _add_markets(self, specs: Sequence[MarketSpec], actor: str) -> list[str]:
        if not specs:
            return []
        now = self.clock()
        with self._writing() as connection:
            known = set(
                connection.execute(
                    core_select(_MARKET.c.id).where(_MARKET.c.id.in_([s.market_id for s in specs]))
                ).scalars()
            )
            new = [spec for spec in specs if spec.market_id not in known]
            if not new:
                return []
            connection.execute(
                _INSERT_MARKET,
                [
                    {
                        "id": spec.market_id,
                        "source": spec.source,
                        "external_id": spec.external_id,
                        "question": spec.question,
                        "criteria": spec.criteria,
                        "outcomes": list(spec.outcomes),
                        "details": dict(spec.details),
                        "resolve_after": spec.resolve_after,
                        "state": MarketState.DISCOVERED.value,
                        "state_changed_at": now,
                        "attempts": 0,
                        "failures": 0,
                        "deferrals": 0,
                        "next_attempt_at": 0.0,
                        "lease_owner": None,
                        "lease_expires_at": 0.0,
                        "decided_outcome": None,
                        "proof_checksum": None,
                        "submission": {},
                        "window_ends_at": None,
                        "awaits_settlement": spec.awaits_settlement,
                        "version": 0,
                        "created_at": now,
                    }
                    for spec in new
                ],
            )
            connection.execute(
                _INSERT_AUDIT,
                [
                    {
                        "market_id": spec.market_id,
                        "at": now,
                        "from_state": None,
                        "event": "discovered",
                        "to_state": MarketState.DISCOVERED.value,
                        "reason": f"reported by source {spec.source}",
                        "actor": actor,
                    }
                    for spec in new
                ],
            )
        return [spec.market_id for spec in new]

    def get_market(self, market_id: str) -> MarketRow:
        with self.reading() as session:
            row = session.get(MarketRow, market_id)
            if row is None:
                raise StoreError(f"market {market_id!r} is not known")
            return row

    def markets(self, states: Sequence[MarketState] = (), limit: int = 1000) -> list[MarketRow]:
        with self.reading() as session:
            query = select(MarketRow).order_by(col(MarketRow.created_at)).limit(limit)
            if states:
                query = query.where(col(MarketRow.state).in_(list(states)))
            return list(session.exec(query).all())

    def count_by_state(self) -> dict[str, int]:
        with self.reading() as session:
            rows = session.exec(
                select(MarketRow.state, func.count()).group_by(col(MarketRow.state))
            ).all()
            return dict(rows)

    def promote_due(
        self,
        now: float,
        actor: str,
        limit: int = 1000,
        *,
        venue_times: Mapping[str, float | None] | None = None,
    ) -> list[str]:
        """Discovered markets whose resolution time has passed become due, in one
        transaction (each with its audit row); returns their ids. A market is judged by
        its venue's clock in `venue_times` (source -> time; None: unknown, so none of its
        markets is due), else by `now`."""
        venue_times = venue_times or {}
        passed = [
            (_MARKET.c.source == source) & (_MARKET.c.resolve_after <= at)
            for source, at in venue_times.items()
            if at is not None
        ]
        passed.append(_MARKET.c.source.not_in(list(venue_times)) & (_MARKET.c.resolve_after <= now))
        query = (
            core_select(_MARKET.c.id)
            .where(_MARKET.c.state == MarketState.DISCOVERED.value)
            .where(or_(*passed))
            .order_by(_MARKET.c.resolve_after)
            .limit(limit)
            .with_for_update(skip_locked=True)
        )
        with self._writing() as connection:
            ids = list(connection.execute(query).scalars())
            for market_id in ids:
                self._transition(
                    connection,
                    market_id,
                    MarketEvent.DUE,
                    actor=actor,
                    reason="resolution time has passed",
                    lease_owner=None,
                )
            return ids

    def waiting(self, now: float, limit: int = 1000) -> list[MarketRow]:
        """Failed or deferred markets whose wait has run out."""
        with self.reading() as session:
            return list(
                session.exec(
                    select(MarketRow)
                    .where(
                        col(MarketRow.state).in_([MarketState.FAILED_RETRY, MarketState.DEFERRED]),
                        col(MarketRow.next_attempt_at) <= now,
                    )
                    .order_by(col(MarketRow.next_attempt_at))
                    .limit(limit)
                ).all()
            )

    def markets_to_watch(
        self,
        now: float,
        *,
        venue_times: Mapping[str, float | None] | None = None,
        after: str = "",
        limit: int = 500,
    ) -> list[MarketRow]:
        """Disputed markets, and submitted ones whose challenge window is over by their
        venue's clock (as in `promote_due`), by id after `after`: a page of at most
        `limit`; the caller pages on until a short one, so none is ever left out."""
        venue_times = venue_times or {}
        over = [
            (_MARKET.c.source == source) & (_MARKET.c.window_ends_at <= at)
            for source, at in venue_times.items()
            if at is not None
        ]
        over.append(_MARKET.c.source.not_in(list(venue_times)) & (_MARKET.c.window_ends_at <= now))
        with self.reading() as session:
            return list(
                session.exec(
                    select(MarketRow)
                    .where(
                        or_(
                            col(MarketRow.state) == MarketState.DISPUTED,
                            (col(MarketRow.state) == MarketState.SUBMITTED) & or_(*over),
                        )
                    )
                    .where(col(MarketRow.id) > after)
                    .order_by(col(MarketRow.id))
                    .limit(limit)
                ).all()
            )

    def markets_to_settle(self, limit: int = 1000) -> list[MarketRow]:
        """Final markets whose answer someone waits for and nobody has settled yet."""
        with self.reading() as session:
            return list(
                session.exec(
                    select(MarketRow)
                    .where(col(MarketRow.state) == MarketState.FINAL)
                    .where(col(MarketRow.awaits_settlement).is_(True))
                    .order_by(col(MarketRow.state_changed_at))
                    .limit(limit)
                ).all()
            )

    def mark_settled(self, market_id: str, reference: str) -> None:
        with self.session() as session:
            row = session.exec(
                select(MarketRow).where(col(MarketRow.id) == market_id).with_for_update()
            ).one()
            row.submission = {**row.submission, "settled": reference or True}
            row.awaits_settlement = False
            session.add(row)

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
        """Lease up to `limit` markets in `states` whose lease has expired and whose next
        attempt is due.

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
            col(MarketRow.next_attempt_at) <= now,
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

    def leave(self, owner: str) -> None:
        """A replica that stops: its singleton jobs are free at once (not when their
        leases expire) and it no longer counts among the replicas that share work."""
        with self.session() as session:
            session.exec(delete(JobLeaseRow).where(col(JobLeaseRow.owner) == owner))
            session.exec(delete(ReplicaRow).where(col(ReplicaRow.id) == owner))

    def release_lease(self, market_id: str, owner: str) -> None:
        with self._writing() as connection:
            connection.execute(_RELEASE_LEASE, {"market_id": market_id, "owner": owner})

    def apply_event(
        self,
        market_id: str,
        event: MarketEvent,
        *,
        actor: str,
        reason: str = "",
        lease_owner: str | None = None,
        updates: dict[str, Any] | None = None,
    ) -> MarketRow:
        """Move a market through the lifecycle table, with an audit row, atomically.

        With `lease_owner`, the caller must still hold the market's lease.
        """
        with self._writing() as connection:
            return self._transition(
                connection,
                market_id,
                event,
                actor=actor,
                reason=reason,
                lease_owner=lease_owner,
                updates=updates,
            )

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
        """`apply_event` inside the caller's transaction; `extend_lease` seconds from now."""
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
            _INSERT_AUDIT,
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
        return _market_row({**row, **values})

    def audit(self, market_id: str) -> list[AuditRow]:
        with self.reading() as session:
            return list(
                session.exec(
                    select(AuditRow)
                    .where(col(AuditRow.market_id) == market_id)
                    .order_by(col(AuditRow.id))
                ).all()
            )

    # -- research ------------------------------------------------------------------------

    def start_run(self, market_id: str, attempt: int, owner: str) -> int:
        with self._writing() as connection:
            return self._insert_run(connection, market_id, attempt, owner)

    def start_research(
        self, market_id: str, owner: str, attempt: int, reason: str
    ) -> tuple[MarketRow, int]:
        """`due` -> `researching` as attempt `attempt`, and its research run: one transaction."""
        with self._writing() as connection:
            row = self._transition(
                connection,
                market_id,
                MarketEvent.RESEARCH_STARTED,
                actor=owner,
                reason=reason,
                lease_owner=owner,
                updates={"attempts": attempt},
            )
            return row, self._insert_run(connection, market_id, attempt, owner)

    def _insert_run(self, connection: Connection, market_id: str, attempt: int, owner: str) -> int:
        run_id: int = connection.execute(
            _INSERT_RUN,
            {
                "market_id": market_id,
                "attempt": attempt,
                "started_at": self.clock(),
                "finished_at": None,
                "status": "running",
                "owner": owner,
            },
        ).scalar_one()
        return run_id

    def finish_research(
        self,
        market_id: str,
        owner: str,
        run_id: int,
        answers: Sequence[tuple[AgentResult | AgentFailure, float]],
        *,
        lease_seconds: float,
        reason: str,
    ) -> MarketRow:
        """Store the run's answers and move the market on to `consensus` with its lease
        extended by `lease_seconds`, in one transaction (LeaseLost stores nothing)."""
        with self._writing() as connection:
            row = self._transition(
                connection,
                market_id,
                MarketEvent.RESEARCH_FINISHED,
                actor=owner,
                reason=reason,
                lease_owner=owner,
                extend_lease=lease_seconds,
            )
            self._store_answers(connection, run_id, answers)
            return row

    def _store_answers(
        self,
        connection: Connection,
        run_id: int,
        answers: Sequence[tuple[AgentResult | AgentFailure, float]],
    ) -> None:
        """Every agent's answer (result with sources, or failure) and the run closed."""
        if connection.execute(_RUN_EXISTS, {"run_id": run_id}).first() is None:
            raise StoreError(f"research run {run_id} is not known")
        now = self.clock()
        sources: list[dict[str, Any]] = []
        for answer, latency_seconds in answers:
            row: dict[str, Any] = {
                "run_id": run_id,
                "agent_id": answer.agent_id,
                "outcome": None,
                "confidence": None,
                "reasoning": "",
                "provider": None,
                "model_family": None,
                "error": None,
                "latency_seconds": latency_seconds,
                "created_at": now,
            }
            if isinstance(answer, AgentFailure):
                connection.execute(_INSERT_RESULT, {**row, "error": answer.error})
                continue
            result_id = connection.execute(
                _INSERT_RESULT,
                {
                    **row,
                    "outcome": answer.outcome,
                    "confidence": answer.confidence,
                    "reasoning": answer.reasoning,
                    "provider": answer.provider,
                    "model_family": answer.model_family,
                },
            ).scalar_one()
            sources += [
                {
                    "agent_result_id": result_id,
                    "url": s.url,
                    "title": s.title,
                    "category": s.category,
                    "credibility_score": s.credibility_score,
                    "relevance_score": s.relevance_score,
                    "published_at": s.published_at.isoformat() if s.published_at else None,
                }
                for s in answer.sources
            ]
        if sources:
            connection.execute(_INSERT_SOURCE, sources)  # one executemany
        connection.execute(_CLOSE_RUN, {"run_id": run_id, "v_finished_at": now})

    def run_answers(self, run_id: int) -> tuple[list[AgentResult], list[AgentFailure]]:
        """The answers recorded for a run, rebuilt as core models."""
        with self.reading() as session:
            rows = session.exec(
                select(AgentResultRow)
                .where(col(AgentResultRow.run_id) == run_id)
                .order_by(col(AgentResultRow.agent_id))
            ).all()
            ids = [r.id for r in rows if r.error is None]
            sources: dict[int, list[AgentSourceRow]] = {i: [] for i in ids if i is not None}
            for source in session.exec(
                select(AgentSourceRow)
                .where(col(AgentSourceRow.agent_result_id).in_(list(sources)))
                .order_by(col(AgentSourceRow.id))
            ).all():
                sources[source.agent_result_id].append(source)
        results, failures = [], []
        for row in rows:
            if row.error is not None:
                failures.append(AgentFailure(agent_id=row.agent_id, error=row.error))
                continue
            assert row.id is not None
            assert row.outcome is not None
            assert row.confidence is not None
            results.append(
                AgentResult(
                    agent_id=row.agent_id,
                    outcome=row.outcome,
                    confidence=row.confidence,
                    reasoning=row.reasoning,
                    provider=row.provider,
                    model_family=row.model_family,
                    sources=tuple(
                        ResearchSource(
                            url=s.url,
                            title=s.title,
                            category=s.category,
                            credibility_score=s.credibility_score,
                            relevance_score=s.relevance_score,
                            published_at=s.published_at,
                        )
                        for s in sources[row.id]
                    ),
                )
            )
        return results, failures

    def latest_run(self, market_id: str, status: str | None = None) -> ResearchRunRow | None:
        with self.reading() as session:
            query = (
                select(ResearchRunRow)
                .where(col(ResearchRunRow.market_id) == market_id)
                .order_by(col(ResearchRunRow.id).desc())
            )
            if status is not None:
                query = query.where(col(ResearchRunRow.status) == status)
            return session.exec(query).first()

    # -- verdicts and reviews --------------------------------------------------------------

    def record_verdict(
        self,
        market_id: str,
        owner: str,
        run_id: int,
        result: ConsensusResult,
        proof: dict[str, Any],
        *,
        event: MarketEvent,
        reason: str,
        updates: Mapping[str, Any] | None = None,
        review_reasons: Sequence[str] | None = None,
    ) -> tuple[MarketRow, int | None]:
        """Store a verdict with its proof, move the market by `event` and, with
        `review_reasons`, open its review item: one transaction. Returns the market and
        the review item's id (None without a review)."""
        with self._writing() as connection:
            consensus_id = self._insert_verdict(connection, market_id, run_id, result, proof)
            row = self._transition(
                connection,
                market_id,
                event,
                actor=owner,
                reason=reason,
                lease_owner=owner,
                updates=updates,
            )
            review_id = None
            if review_reasons is not None:
                review_id = self._insert_review(connection, market_id, consensus_id, review_reasons)
            return row, review_id

    def _insert_verdict(
        self,
        connection: Connection,
        market_id: str,
        run_id: int,
        result: ConsensusResult,
        proof: dict[str, Any],
    ) -> int:
        return self._insert_proof(
            connection,
            market_id=market_id,
            run_id=run_id,
            outcome=result.outcome,
            reached=result.reached,
            action=result.action,
            review_reasons=list(result.review_reasons),
            proof=proof,
        )

    def start_delivery_of_decision(
        self, market_id: str, owner: str, outcome: str, proof: dict[str, Any], *, reason: str
    ) -> MarketRow:
        """Store the proof of a person's decision beside the verdicts it overrides and move
        the market on to `submitting` with it, in one transaction (LeaseLost stores
        nothing): a crash never leaves a second decision proof behind."""
        with self._writing() as connection:
            row = self._transition(
                connection,
                market_id,
                MarketEvent.SUBMISSION_STARTED,
                actor=owner,
                reason=reason,
                lease_owner=owner,
                updates={"decided_outcome": outcome, "proof_checksum": proof["checksum"]},
            )
            self._insert_proof(
                connection,
                market_id=market_id,
                run_id=None,
                outcome=outcome,
                reached=False,
                action="decided",
                review_reasons=[],
                proof=proof,
            )
            return row

    def _insert_proof(self, connection: Connection, *, proof: dict[str, Any], **values: Any) -> int:
        consensus_id: int = connection.execute(
            _INSERT_CONSENSUS,
            {**values, "checksum": proof["checksum"], "proof": proof, "created_at": self.clock()},
        ).scalar_one()
        return consensus_id

    def consensus(self, consensus_id: int) -> ConsensusRow:
        with self.reading() as session:
            row = session.get(ConsensusRow, consensus_id)
            if row is None:
                raise StoreError(f"consensus {consensus_id} is not known")
            return row

    def latest_consensus(self, market_id: str) -> ConsensusRow | None:
        with self.reading() as session:
            return session.exec(
                select(ConsensusRow)
                .where(col(ConsensusRow.market_id) == market_id)
                .order_by(col(ConsensusRow.id).desc())
            ).first()

    def open_review(self, market_id: str, consensus_id: int | None, reasons: Sequence[str]) -> int:
        with self._writing() as connection:
            return self._insert_review(connection, market_id, consensus_id, reasons)

    def hand_to_person(
        self, market_id: str, event: MarketEvent, *, actor: str, reasons: Sequence[str]
    ) -> tuple[MarketRow, int]:
        """Move a market to review by `event` and open its review item, in one
        transaction: a market never waits for a person without an item that shows it."""
        with self._writing() as connection:
            row = self._transition(
                connection,
                market_id,
                event,
                actor=actor,
                reason="; ".join(reasons),
                lease_owner=None,
            )
            return row, self._insert_review(connection, market_id, None, reasons)

    def _insert_review(
        self,
        connection: Connection,
        market_id: str,
        consensus_id: int | None,
        reasons: Sequence[str],
    ) -> int:
        review_id: int = connection.execute(
            _INSERT_REVIEW,
            {
                "market_id": market_id,
                "consensus_id": consensus_id,
                "reasons": list(reasons),
                "status": "open",
                "decided_outcome": None,
                "decided_reason": None,
                "decided_by": None,
                "decided_at": None,
                "created_at": self.clock(),
            },
        ).scalar_one()
        return review_id

    def reviews(self, status: str | None = "open") -> list[ReviewItemRow]:
        with self.reading() as session:
            query = select(ReviewItemRow).order_by(col(ReviewItemRow.id))
            if status is not None:
                query = query.where(col(ReviewItemRow.status) == status)
            return list(session.exec(query).all())

    def decided_review(self, market_id: str) -> ReviewItemRow | None:
        """The latest decided review item of a market."""
        with self.reading() as session:
            return session.exec(
                select(ReviewItemRow)
                .where(col(ReviewItemRow.market_id) == market_id)
                .where(col(ReviewItemRow.status) == "decided")
                .order_by(col(ReviewItemRow.id).desc())
            ).first()

    def review(self, review_id: int) -> ReviewItemRow:
        with self.reading() as session:
            row = session.get(ReviewItemRow, review_id)
            if row is None:
                raise StoreError(f"review {review_id} does not exist")
            return row

    def decide_review(
        self, review_id: int, outcome: str, reason: str, decided_by: str
    ) -> MarketRow:
        """Record a person's decision and move the market to `reviewed`, atomically."""
        now = self.clock()
        with self.session() as session:
            item = session.exec(
                select(ReviewItemRow).where(col(ReviewItemRow.id) == review_id).with_for_update()
            ).first()
            if item is None:
                raise StoreError(f"review {review_id} does not exist")
            if item.status != "open":
                raise StoreError(
                    f"review {review_id} was already decided by {item.decided_by} "
                    f"({item.decided_outcome})"
                )
            market = session.exec(
                select(MarketRow).where(col(MarketRow.id) == item.market_id).with_for_update()
            ).one()
            allowed = [*market.outcomes, "INVALID"]
            if outcome not in allowed:
                raise StoreError(
                    f"outcome {outcome!r} is not one of this market's outcomes: "
                    f"{', '.join(allowed)}"
                )
            current = MarketState(market.state)
            new_state = transition(current, MarketEvent.REVIEW_DECIDED)
            item.status = "decided"
            item.decided_outcome = outcome
            item.decided_reason = reason
            item.decided_by = decided_by
            item.decided_at = now
            market.state = new_state
            market.state_changed_at = now
            market.decided_outcome = outcome
            market.next_attempt_at = 0.0
            market.version += 1
            session.add_all([item, market])
            session.add(
                AuditRow(
                    market_id=market.id,
                    at=now,
                    from_state=current,
                    event=MarketEvent.REVIEW_DECIDED,
                    to_state=new_state,
                    reason=f"review {review_id}: {outcome} ({reason})",
                    actor=decided_by,
                )
            )
            return market

    # -- singleton jobs and checkpoints ----------------------------------------------------

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

    def get_checkpoint(self, name: str) -> dict[str, Any] | None:
        with self.reading() as session:
            row = session.get(CheckpointRow, name)
            return dict(row.value) if row is not None else None

    def set_checkpoint(self, name: str, value: dict[str, Any]) -> None:
        with self.session() as session:
            row = session.get(CheckpointRow, name)
            if row is None:
                session.add(CheckpointRow(name=name, value=value, updated_at=self.clock()))
            else:
                row.value = value
                row.updated_at = self.clock()
                session.add(row)
