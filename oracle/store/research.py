"""Research runs: a market's move into and out of `researching` with the run it starts
and every agent's answer it stores, each in the transaction of the move."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sqlalchemy import Connection, Table, bindparam, insert, update
from sqlmodel import col, select

from oracle.core.lifecycle import MarketEvent
from oracle.core.models import AgentFailure, AgentResult, ResearchSource
from oracle.errors import StoreError
from oracle.scrub import scrub
from oracle.store._transaction import Transactions
from oracle.store.tables import AgentResultRow, AgentSourceRow, MarketRow, ResearchRunRow


class AgentIdentity(NamedTuple):
    """Who a configured agent is. A result names its own provider and model family; a
    failure names none, so the agent's are stored with it (the accuracy ledger counts a
    failure under its family)."""

    provider: str | None
    model_family: str | None


_RUN: Table = ResearchRunRow.__table__  # type: ignore[attr-defined]
_RESULT: Table = AgentResultRow.__table__  # type: ignore[attr-defined]
_SOURCE: Table = AgentSourceRow.__table__  # type: ignore[attr-defined]

_CLOSE_RUN = (
    update(_RUN)
    .where(_RUN.c.id == bindparam("run_id"))
    .values(status="done", finished_at=bindparam("v_finished_at"))
)
_INSERT_RUN = insert(_RUN).returning(_RUN.c.id)
# Many rows in one statement, their ids returned in the order of the rows given.
_INSERT_RESULTS = insert(_RESULT).returning(_RESULT.c.id, sort_by_parameter_order=True)
_INSERT_SOURCE = insert(_SOURCE)


class ResearchRuns(Transactions):
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
        updates: dict[str, Any] | None = None,
        agents: Mapping[str, AgentIdentity] | None = None,
    ) -> MarketRow:
        """Store the run's answers and move the market on to `consensus` with its lease
        extended by `lease_seconds`, in one transaction (LeaseLost stores nothing); with
        `updates`, the market columns the research was given (criteria and details its
        source read again before it) are written with them; `agents` names the provider
        and model family stored with each failed agent's row."""
        with self._writing() as connection:
            row = self._transition(
                connection,
                market_id,
                MarketEvent.RESEARCH_FINISHED,
                actor=owner,
                reason=reason,
                lease_owner=owner,
                updates=updates,
                extend_lease=lease_seconds,
            )
            self._store_answers(connection, run_id, answers, agents or {})
            return row

    def _store_answers(
        self,
        connection: Connection,
        run_id: int,
        answers: Sequence[tuple[AgentResult | AgentFailure, float]],
        agents: Mapping[str, AgentIdentity],
    ) -> None:
        """Every agent's answer (result with sources, or failure) and the run closed: the
        run closed first (nothing is stored for a run not known), then the answers in one
        multi-row insert and their sources in another."""
        now = self.clock()
        if connection.execute(_CLOSE_RUN, {"run_id": run_id, "v_finished_at": now}).rowcount == 0:
            raise StoreError(f"research run {run_id} is not known")
        rows: list[dict[str, Any]] = []
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
                identity = agents.get(answer.agent_id, AgentIdentity(None, None))
                row["error"] = scrub(answer.error)
                row["provider"] = identity.provider
                row["model_family"] = identity.model_family
            else:
                row["outcome"] = answer.outcome
                row["confidence"] = answer.confidence
                row["reasoning"] = scrub(answer.reasoning)
                row["provider"] = answer.provider
                row["model_family"] = answer.model_family
            rows.append(row)
        if not rows:
            return
        result_ids = connection.execute(_INSERT_RESULTS, rows).scalars().all()
        sources = [
            {
                "agent_result_id": result_id,
                "url": scrub(s.url),
                "title": scrub(s.title),
                "category": s.category,
                "credibility_score": s.credibility_score,
                "relevance_score": s.relevance_score,
                "published_at": s.published_at.isoformat() if s.published_at else None,
                "quote": scrub(s.quote),
                "read": s.read,
            }
            for (answer, _), result_id in zip(answers, result_ids, strict=True)
            if isinstance(answer, AgentResult)
            for s in answer.sources
        ]
        if sources:
            connection.execute(_INSERT_SOURCE, sources)  # one executemany

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
                            quote=s.quote,
                            read=s.read,
                        )
                        for s in sources[row.id]
                    ),
                )
            )
        return results, failures

    def run_records(
        self, run_id: int
    ) -> tuple[list[AgentResultRow], dict[int, list[AgentSourceRow]]]:
        """A run's answers as stored, not validated again (the review console shows
        them even when a row would no longer pass today's checks), with each answer's
        sources by answer id: two queries."""
        with self.reading() as session:
            rows = list(
                session.exec(
                    select(AgentResultRow)
                    .where(col(AgentResultRow.run_id) == run_id)
                    .order_by(col(AgentResultRow.agent_id))
                ).all()
            )
            sources: dict[int, list[AgentSourceRow]] = {r.id: [] for r in rows if r.id is not None}
            for source in session.exec(
                select(AgentSourceRow)
                .where(col(AgentSourceRow.agent_result_id).in_(list(sources)))
                .order_by(col(AgentSourceRow.id))
            ).all():
                sources[source.agent_result_id].append(source)
        return rows, sources

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
