"""The markets: discovery, the lifecycle moves that need no other record, their audit
trail, and the queries that find the markets each stage of the daemon works on."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from typing import Any

from sqlalchemy import ColumnElement, func, insert, or_, update
from sqlalchemy import select as core_select
from sqlalchemy.exc import IntegrityError
from sqlmodel import col, select

from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.markets import MarketSpec
from oracle.core.timing import Plan
from oracle.errors import StoreError
from oracle.store._transaction import INSERT_AUDIT, MARKET, Transactions, market_row
from oracle.store.reviews import insert_review
from oracle.store.tables import AuditRow, MarketRow

_INSERT_MARKET = insert(MARKET)
_IDS_PER_QUERY = 500


class Markets(Transactions):
    def add_discovered(
        self,
        specs: Iterable[MarketSpec],
        actor: str,
        plans: Mapping[str, Plan] | None = None,
    ) -> list[str]:
        """Track markets not seen before; returns the ids that were new. Idempotent.

        `plans`: each market's first research by the schedule (`oracle.core.timing`), by
        id; a market without one is first researched at its `resolve_after`."""
        specs = list({spec.market_id: spec for spec in specs}.values())
        plans = plans or {}
        try:
            return self._add_markets(specs, actor, plans)
        except IntegrityError:
            # Another replica added some of them meanwhile: add the rest one by one.
            added = []
            for spec in specs:
                try:
                    added += self._add_markets([spec], actor, plans)
                except IntegrityError:
                    continue
            return added

    def name_chains(self, source_chains: Mapping[str, str]) -> int:
        """Record each source's chain (the entry of `chains` it is on) for its markets
        and for the markets to come; markets without a chain get theirs (a database
        migrated without the configuration). Returns how many markets were named."""
        self.source_chains = dict(source_chains)
        named = 0
        with self._writing() as connection:
            for source, chain in sorted(source_chains.items()):
                named += connection.execute(
                    update(MARKET)
                    .where(MARKET.c.source == source, MARKET.c.chain.is_(None))
                    .values(chain=chain)
                ).rowcount
        return named

    def _add_markets(
        self, specs: Sequence[MarketSpec], actor: str, plans: Mapping[str, Plan]
    ) -> list[str]:
        """New markets in the lifecycle's first state (created there, not moved)."""
        if not specs:
            return []
        now = self.clock()
        with self._writing() as connection:
            known = set(
                connection.execute(
                    core_select(MARKET.c.id).where(MARKET.c.id.in_([s.market_id for s in specs]))
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
                        "chain": self.source_chains.get(spec.source),
                        "external_id": spec.external_id,
                        "question": spec.question,
                        "criteria": spec.criteria,
                        "outcomes": list(spec.outcomes),
                        "details": dict(spec.details),
                        "resolve_after": spec.resolve_after,
                        "state": _first_state(spec).value,
                        "state_changed_at": now,
                        "attempts": 0,
                        "failures": 0,
                        "delivery_failures": 0,
                        "deferrals": 0,
                        "next_attempt_at": _first_research(spec, plans.get(spec.market_id)),
                        "answer_window": None
                        if spec.window is None
                        else spec.window.model_dump(mode="json"),
                        "early_checks": _early_checks(plans.get(spec.market_id)),
                        "late_deferrals": 0,
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
                INSERT_AUDIT,
                [
                    {
                        "market_id": spec.market_id,
                        "at": now,
                        "from_state": None,
                        "event": "discovered",
                        "to_state": _first_state(spec).value,
                        "reason": _discovered_reason(spec, plans.get(spec.market_id)),
                        "actor": actor,
                    }
                    for spec in new
                ],
            )
            for spec in new:
                if spec.unreadable is not None:  # straight to a person, in this transaction
                    insert_review(connection, spec.market_id, None, [spec.unreadable], now)
        return [spec.market_id for spec in new]

    def known_ids(self, market_ids: Iterable[str]) -> set[str]:
        """Which of `market_ids` are tracked already."""
        ids = list(dict.fromkeys(market_ids))
        known: set[str] = set()
        with self._reader.connect() as connection:
            # A venue re-delivers its whole list on every poll: asked in slices, as one
            # statement's parameters are bounded (SQLite: 32766).
            for start in range(0, len(ids), _IDS_PER_QUERY):
                chunk = ids[start : start + _IDS_PER_QUERY]
                query = core_select(MARKET.c.id).where(MARKET.c.id.in_(chunk))
                known.update(connection.execute(query).scalars())
        return known

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

    def research_now(
        self,
        source: str,
        external_ids: Sequence[str],
        at: float,
        actor: str,
        reason: str,
    ) -> list[str]:
        """Markets of `source` by external id still waiting for their research (discovered
        or deferred), or for their next try (failed_retry: a delivery waiting for another's
        answer, as a second opinion, among them), at a time later than `at` (the venue's
        now) are tried at `at`:
        their `next_attempt_at` moves there, each with an audit row giving `reason`, in one
        transaction; returns their ids. No state changes (the next `promote` moves them as
        any market whose time has come); others, and ids not known, are left alone."""
        if not external_ids:
            return []
        waiting = (
            (MARKET.c.source == source)
            & MARKET.c.external_id.in_(list(external_ids))
            & MARKET.c.state.in_(
                [
                    MarketState.DISCOVERED.value,
                    MarketState.DEFERRED.value,
                    MarketState.FAILED_RETRY.value,
                ]
            )
            & (MARKET.c.next_attempt_at > at)
        )
        now = self.clock()
        with self._writing() as connection:
            rows = list(
                connection.execute(
                    core_select(MARKET.c.id, MARKET.c.state).where(waiting).with_for_update()
                ).all()
            )
            if not rows:
                return []
            connection.execute(
                update(MARKET)
                .where(MARKET.c.id.in_([row.id for row in rows]))
                .values(next_attempt_at=at, version=MARKET.c.version + 1)
            )
            connection.execute(
                INSERT_AUDIT,
                [
                    {
                        "market_id": row.id,
                        "at": now,
                        "from_state": row.state,
                        "event": "research_now",
                        "to_state": row.state,
                        "reason": reason,
                        "actor": actor,
                    }
                    for row in rows
                ],
            )
        return [row.id for row in rows]

    def audit(self, market_id: str) -> list[AuditRow]:
        with self.reading() as session:
            return list(
                session.exec(
                    select(AuditRow)
                    .where(col(AuditRow.market_id) == market_id)
                    .order_by(col(AuditRow.id))
                ).all()
            )

    def promote_due(
        self,
        now: float,
        actor: str,
        limit: int = 1000,
        *,
        venue_times: Mapping[str, float | None] | None = None,
    ) -> list[str]:
        """Discovered markets whose first research time has come become due, in one
        transaction (each with its audit row); returns their ids. A market is judged by
        its venue's clock in `venue_times` (source -> time; None: unknown, so none of its
        markets is due), else by `now`."""
        query = (
            core_select(MARKET.c.id)
            .where(MARKET.c.state == MarketState.DISCOVERED.value)
            .where(_time_has_come(MARKET.c.next_attempt_at, now, venue_times))
            .order_by(MARKET.c.next_attempt_at)
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
                    reason="its first research time has come",
                    lease_owner=None,
                )
            return ids

    def waiting(
        self,
        now: float,
        limit: int = 1000,
        *,
        venue_times: Mapping[str, float | None] | None = None,
    ) -> list[MarketRow]:
        """Failed or deferred markets whose wait has run out, each by its venue's clock
        (as in `promote_due`)."""
        query = (
            core_select(MARKET)
            .where(
                MARKET.c.state.in_([MarketState.FAILED_RETRY, MarketState.DEFERRED]),
                _time_has_come(MARKET.c.next_attempt_at, now, venue_times),
            )
            .order_by(MARKET.c.next_attempt_at)
            .limit(limit)
        )
        # Core, not the ORM: `promote` asks several times a second, mostly for nothing.
        with self._reader.connect() as connection:
            return [market_row(dict(row)) for row in connection.execute(query).mappings()]

    def markets_to_watch(
        self,
        *,
        unreadable: Collection[str] = (),
        fed: Mapping[str, float] | None = None,
        after: str = "",
        limit: int = 500,
    ) -> list[MarketRow]:
        """Disputed markets, and every submitted one, except the submitted ones of the
        venues in `unreadable` (their clock cannot be read now: their state would not be
        either), and of the venues in `fed` (source -> the venue's now: its events tell
        the daemon of a dispute at once) those whose challenge window is still running;
        by id after `after`: a page of at most `limit`; the caller pages on until a short
        one, so none is ever left out."""
        submitted = col(MarketRow.state) == MarketState.SUBMITTED
        if unreadable:
            submitted = submitted & MARKET.c.source.not_in(list(unreadable))
        if fed:
            window_over = [
                (MARKET.c.source == source)
                & (MARKET.c.window_ends_at.is_(None) | (MARKET.c.window_ends_at <= at))
                for source, at in fed.items()
            ]
            submitted = submitted & or_(MARKET.c.source.not_in(list(fed)), *window_over)
        with self.reading() as session:
            return list(
                session.exec(
                    select(MarketRow)
                    .where(or_(col(MarketRow.state) == MarketState.DISPUTED, submitted))
                    .where(col(MarketRow.id) > after)
                    .order_by(col(MarketRow.id))
                    .limit(limit)
                ).all()
            )

    def markets_by_external_id(
        self, source: str, external_ids: Sequence[str], states: Collection[MarketState]
    ) -> list[MarketRow]:
        """The markets of `source` among `external_ids` in one of `states`, by id."""
        if not external_ids:
            return []
        with self.reading() as session:
            return list(
                session.exec(
                    select(MarketRow)
                    .where(MARKET.c.source == source)
                    .where(MARKET.c.external_id.in_(list(external_ids)))
                    .where(col(MarketRow.state).in_(list(states)))
                    .order_by(col(MarketRow.id))
                ).all()
            )


def _time_has_come(
    column: Any, now: float, venue_times: Mapping[str, float | None] | None
) -> ColumnElement[bool]:
    """`column` <= the time on each market's venue clock (`venue_times`: source -> time;
    None: unknown, so none of that venue's markets qualifies), else `now`."""
    venue_times = venue_times or {}
    passed = [
        (MARKET.c.source == source) & (column <= at)
        for source, at in venue_times.items()
        if at is not None
    ]
    passed.append(MARKET.c.source.not_in(list(venue_times)) & (column <= now))
    return or_(*passed)


def _first_research(spec: MarketSpec, plan: Plan | None) -> float:
    return spec.resolve_after if plan is None else plan.at


def _early_checks(plan: Plan | None) -> int:
    return 0 if plan is None else plan.progress.early_checks


def _first_state(spec: MarketSpec) -> MarketState:
    """Where a new market starts: discovered, or, when its venue cannot read it exactly,
    awaiting a person (`MarketSpec.unreadable`)."""
    return MarketState.DISCOVERED if spec.unreadable is None else MarketState.NEEDS_REVIEW


def _discovered_reason(spec: MarketSpec, plan: Plan | None) -> str:
    reason = f"reported by source {spec.source}"
    if spec.unreadable is not None:
        return f"{reason}; {spec.unreadable}: to a person, never researched, nothing sent"
    if spec.window is not None:
        reason += f"; answerable: {spec.window.origin} ({spec.window.evidence})"
    if plan is not None:
        reason += f"; first research: {plan.reason}"
    return reason
