"""The accuracy ledger: each market's final outcome with how it became final, stored in
the transaction of the move that makes the market final (or by a person, for a market
whose venue settles elsewhere), and read back as `oracle.core.scoring` scores it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Sequence
from typing import Any

from sqlalchemy import Connection, String, Table, bindparam, cast, delete, insert
from sqlalchemy import select as core_select
from sqlmodel import col, select

from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.models import INVALID
from oracle.core.scoring import Disagreement, DisputeEnd, Finality, Forecast, ScoredMarket
from oracle.core.track_record import Answer
from oracle.errors import StoreError
from oracle.store._transaction import MARKET, Transactions
from oracle.store.tables import (
    AgentResultRow,
    AuditRow,
    ConsensusRow,
    FinalOutcomeRow,
    MarketRow,
)

_FINAL: Table = FinalOutcomeRow.__table__  # type: ignore[attr-defined]
_CONSENSUS: Table = ConsensusRow.__table__  # type: ignore[attr-defined]
_ANSWER: Table = AgentResultRow.__table__  # type: ignore[attr-defined]
_AUDIT: Table = AuditRow.__table__  # type: ignore[attr-defined]
_INSERT_FINAL = insert(_FINAL)
_LOCK_MARKET = core_select(MARKET).where(MARKET.c.id == bindparam("market_id")).with_for_update()
# States in which the market's decided outcome is the answer the venue holds.
_ANSWERED = (MarketState.SUBMITTED, MarketState.DISPUTED, MarketState.FINAL)
_DISPUTE_EVENTS = (
    MarketEvent.DISPUTED,
    MarketEvent.DISPUTE_UPHELD,
    MarketEvent.DISPUTE_REJECTED,
    MarketEvent.PROPOSAL_RESET,
)
_CHUNK = 500  # ids per IN (...) list
# A receipt's flags for an answer the daemon did not give, its verdict kept beside it: UMA
# (another proposed first), Reality.eth (another answered first), OOv3 (another's
# assertion), and any venue that kept a verdict it could not propose (`second_opinion`).
SECOND_OPINION_FLAGS = ("proposed_by_other", "answered_by_other", "asserted_by_other")
SECOND_OPINION = "second_opinion"
# Where a receipt names who proposed our own answer, when it has no `signer`.
_OWN_SIGNER_KEYS = ("signer", "proposer", "answerer", "asserter")
UNRECORDED = "(signer not recorded)"


def _chunks(ids: Sequence[str]) -> Iterator[list[str]]:
    for start in range(0, len(ids), _CHUNK):
        yield list(ids[start : start + _CHUNK])


class Outcomes(Transactions):
    def _write_final(self, connection: Connection, **values: Any) -> None:
        """Insert or replace a market's final outcome (a person may correct it)."""
        connection.execute(delete(_FINAL).where(_FINAL.c.market_id == values["market_id"]))
        connection.execute(_INSERT_FINAL, values)

    def finalize(
        self,
        market_id: str,
        event: MarketEvent,
        *,
        actor: str,
        reason: str,
        outcome: str | None,
        finality: Finality,
    ) -> MarketRow:
        """Move a market to `final` by `event` and record its final outcome (`outcome`,
        else the answer it was given, which stood) with `finality`: one transaction."""
        with self._writing() as connection:
            row = self._transition(
                connection, market_id, event, actor=actor, reason=reason, lease_owner=None
            )
            final = outcome or row.decided_outcome
            if final is not None:
                self._write_final(
                    connection,
                    market_id=market_id,
                    venue=row.source,
                    outcome=final,
                    finality=finality.value,
                    final_at=self.clock(),
                    delivered_outcome=row.decided_outcome,
                    recorded_by=actor,
                    reason=reason,
                )
            return row

    def record_final_outcome(
        self, market_id: str, outcome: str, *, recorded_by: str, reason: str
    ) -> FinalOutcomeRow:
        """A person records (or corrects) the outcome a market's venue settled on, for a
        venue the daemon cannot read it from. The outcome must be one of the market's, or
        INVALID."""
        with self._writing() as connection:
            row = connection.execute(_LOCK_MARKET, {"market_id": market_id}).mappings().first()
            if row is None:
                raise StoreError(f"market {market_id!r} is not known")
            allowed = [*row["outcomes"], INVALID]
            if outcome not in allowed:
                raise StoreError(
                    f"outcome {outcome!r} is not one of this market's outcomes: "
                    f"{', '.join(allowed)}"
                )
            values = {
                "market_id": market_id,
                "venue": row["source"],
                "outcome": outcome,
                "finality": Finality.PERSON.value,
                "final_at": self.clock(),
                "delivered_outcome": (
                    row["decided_outcome"] if row["state"] in _ANSWERED else None
                ),
                "recorded_by": recorded_by,
                "reason": reason,
            }
            self._write_final(connection, **values)
            return FinalOutcomeRow.model_validate(values)

    def final_outcome(self, market_id: str) -> FinalOutcomeRow | None:
        with self.reading() as session:
            return session.get(FinalOutcomeRow, market_id)

    def scored_markets(
        self, *, since: float | None = None, venue: str | None = None, chain: str | None = None
    ) -> list[ScoredMarket]:
        """Markets final since `since` (on `venue`, on `chain`: an entry of `chains`), each
        with the verdict that decided it and its agents' answers: what `oracle.core.scoring`
        scores. Column reads, not ORM rows: a refresh of the rolling figures reads 30 days
        of them."""
        query = core_select(
            _FINAL.c.market_id,
            _FINAL.c.venue,
            _FINAL.c.outcome,
            _FINAL.c.finality,
            _FINAL.c.final_at,
            _FINAL.c.delivered_outcome,
            MARKET.c.outcomes,
        ).join(MARKET, MARKET.c.id == _FINAL.c.market_id)
        if since is not None:
            query = query.where(_FINAL.c.final_at >= since)
        if venue is not None:
            query = query.where(_FINAL.c.venue == venue)
        if chain is not None:
            query = query.where(MARKET.c.chain == chain)
        with self.reading() as session:
            finals = session.execute(query.order_by(_FINAL.c.final_at)).all()
            ids = [final.market_id for final in finals]
            # Each market's consensus rows (not their proofs), oldest first.
            consensus: dict[str, list[tuple[int | None, str, str]]] = defaultdict(list)
            for chunk in _chunks(ids):
                for market_id, run_id, action, outcome in session.execute(
                    core_select(
                        _CONSENSUS.c.market_id,
                        _CONSENSUS.c.run_id,
                        _CONSENSUS.c.action,
                        _CONSENSUS.c.outcome,
                    )
                    .where(_CONSENSUS.c.market_id.in_(chunk))
                    .order_by(_CONSENSUS.c.id)
                ):
                    consensus[market_id].append((run_id, action, outcome))
            verdicts = {
                market_id: next((r for r in reversed(rows) if r[0] is not None), None)
                for market_id, rows in consensus.items()
            }
            run_ids = [v[0] for v in verdicts.values() if v is not None and v[0] is not None]
            forecasts: dict[int, list[Forecast]] = defaultdict(list)
            for start in range(0, len(run_ids), _CHUNK):
                for run_id, agent_id, family, outcome, confidence, error in session.execute(
                    core_select(
                        _ANSWER.c.run_id,
                        _ANSWER.c.agent_id,
                        _ANSWER.c.model_family,
                        _ANSWER.c.outcome,
                        _ANSWER.c.confidence,
                        _ANSWER.c.error,
                    )
                    .where(_ANSWER.c.run_id.in_(run_ids[start : start + _CHUNK]))
                    .order_by(_ANSWER.c.id)
                ):
                    failed = error is not None
                    forecasts[run_id].append(
                        Forecast(
                            agent_id,
                            family,
                            None if failed else outcome,
                            None if failed else confidence,
                        )
                    )
        scored = []
        for final in finals:
            verdict = verdicts.get(final.market_id)
            rows = consensus.get(final.market_id)
            answered_by = None
            if final.delivered_outcome is not None:
                answered_by = "person" if rows and rows[-1][1] == "decided" else "policy"
            scored.append(
                ScoredMarket(
                    market_id=final.market_id,
                    venue=final.venue,
                    outcomes=tuple(final.outcomes),
                    final_outcome=final.outcome,
                    finality=final.finality,
                    final_at=final.final_at,
                    forecasts=tuple(forecasts[verdict[0]]) if verdict and verdict[0] else (),
                    verdict=verdict[1] if verdict else None,
                    verdict_outcome=verdict[2] if verdict else None,
                    delivered_outcome=final.delivered_outcome,
                    answered_by=answered_by,
                )
            )
        return scored

    def disagreements(
        self, *, since: float | None = None, venue: str | None = None, chain: str | None = None
    ) -> list[Disagreement]:
        """Every disagreement with another proposer (seen since `since`, on `venue`, on
        `chain`) and how
        it ended: a dispute of an answer the oracle gave, from the audit trail; and a
        rival's answer that was on the venue first and contradicted our verdict (UMA: the
        receipt's `proposed_by_other`, `agrees: false`), where `answer_stood` means the
        venue settled on our verdict and `overturned` on theirs."""
        with self.reading() as session:
            query = (
                select(AuditRow, MarketRow.source, MarketRow.decided_outcome)
                .join(MarketRow, col(MarketRow.id) == col(AuditRow.market_id))
                .where(col(AuditRow.event).in_([e.value for e in _DISPUTE_EVENTS]))
                .order_by(col(AuditRow.id))
            )
            if venue is not None:
                query = query.where(col(MarketRow.source) == venue)
            if chain is not None:
                query = query.where(col(MarketRow.chain) == chain)
            rows = list(session.exec(query).all())
            finals = {
                f.market_id: f
                for chunk in _chunks(sorted({a.market_id for a, _, _ in rows}))
                for f in session.exec(
                    select(FinalOutcomeRow).where(col(FinalOutcomeRow.market_id).in_(chunk))
                ).all()
            }
        found: list[Disagreement] = []
        open_disputes: dict[str, tuple[float, str | None]] = {}
        for audit, _, decided in rows:
            market_id = audit.market_id
            final = finals.get(market_id)
            ours = final.delivered_outcome if final is not None else decided
            if audit.event == MarketEvent.DISPUTED:
                open_disputes[market_id] = (audit.at, ours)
                continue
            if audit.event == MarketEvent.PROPOSAL_RESET and audit.from_state == "submitted":
                # Disputed and reopened within the window, before the watch job looked.
                open_disputes.setdefault(market_id, (audit.at, None))
            if market_id not in open_disputes:
                continue
            seen_at, ours_then = open_disputes.pop(market_id)
            if audit.event == MarketEvent.DISPUTE_UPHELD:
                ended = DisputeEnd.OVERTURNED
                theirs = final.outcome if final is not None else None
            elif audit.event == MarketEvent.DISPUTE_REJECTED:
                ended, theirs = DisputeEnd.ANSWER_STOOD, None
            else:
                ended, theirs = DisputeEnd.REOPENED, None
            if since is None or seen_at >= since:
                found.append(Disagreement(market_id, ours_then or ours, theirs, ended))
        for market_id, (seen_at, ours_then) in open_disputes.items():
            if since is None or seen_at >= since:
                found.append(Disagreement(market_id, ours_then, None, DisputeEnd.OPEN))
        return found + self._rivals_first(since=since, venue=venue, chain=chain)

    def _rivals_first(
        self, *, since: float | None, venue: str | None, chain: str | None = None
    ) -> list[Disagreement]:
        """Markets where another proposer's contradicting answer was on the venue first."""
        with self.reading() as session:
            query = (
                select(AuditRow.at, MarketRow)
                .join(MarketRow, col(MarketRow.id) == col(AuditRow.market_id))
                .where(col(AuditRow.event) == MarketEvent.PROPOSAL_CONFIRMED.value)
                # The receipt's key narrows the scan; its value is read below.
                .where(cast(col(MarketRow.submission), String).like("%proposed_by_other%"))
            )
            if venue is not None:
                query = query.where(col(MarketRow.source) == venue)
            if chain is not None:
                query = query.where(col(MarketRow.chain) == chain)
            if since is not None:
                query = query.where(col(AuditRow.at) >= since)
            rows = list(session.exec(query).all())
            finals = {
                f.market_id: f
                for chunk in _chunks(sorted({m.id for _, m in rows}))
                for f in session.exec(
                    select(FinalOutcomeRow).where(col(FinalOutcomeRow.market_id).in_(chunk))
                ).all()
            }
        found = []
        for _, market in rows:
            receipt = market.submission
            if receipt.get("proposed_by_other") is not True or receipt.get("agrees") is not False:
                continue
            ours, theirs = receipt.get("our_outcome"), receipt.get("their_outcome")
            final = finals.get(market.id)
            if final is None:
                ended = DisputeEnd.OPEN
            elif final.outcome == ours:
                ended = DisputeEnd.ANSWER_STOOD
            else:
                ended = DisputeEnd.OVERTURNED
            found.append(Disagreement(market.id, ours, theirs, ended))
        return found

    def track_record(self, *, since: float, venue: str | None = None) -> list[Answer]:
        """Every answer given or kept since `since` (on `venue`), for the whitelist record
        (`oracle.core.track_record`): each market whose answer was confirmed on its venue
        (the first `proposal_confirmed` in its audit trail, when), in a state where that
        answer stands (submitted, disputed, final), with its final outcome when it has one.
        A receipt flagged as another's answer (`proposed_by_other`, `answered_by_other`,
        `asserted_by_other`) or as a verdict kept without proposing (`second_opinion`) is
        a second opinion of `our_outcome`, unless we answered over it after all (a
        confirmed counter-answer); else the market's delivered answer is a proposal. The
        signer is the receipt's `signer` (for our own answers also its proposer, answerer
        or asserter)."""
        query = (
            core_select(
                _AUDIT.c.market_id,
                _AUDIT.c.at,
                MARKET.c.source,
                MARKET.c.state,
                MARKET.c.submission,
                MARKET.c.decided_outcome,
            )
            .join(MARKET, MARKET.c.id == _AUDIT.c.market_id)
            .where(_AUDIT.c.event == MarketEvent.PROPOSAL_CONFIRMED.value)
            .where(_AUDIT.c.at >= since)
            .where(MARKET.c.state.in_([s.value for s in _ANSWERED]))
            .order_by(_AUDIT.c.id)
        )
        if venue is not None:
            query = query.where(MARKET.c.source == venue)
        with self.reading() as session:
            rows = session.execute(query).all()
            first: dict[str, Any] = {}
            for row in rows:
                first.setdefault(row.market_id, row)
            finals = {
                f.market_id: f
                for chunk in _chunks(sorted(first))
                for f in session.exec(
                    select(FinalOutcomeRow).where(col(FinalOutcomeRow.market_id).in_(chunk))
                ).all()
            }
        answers = []
        for market_id, row in first.items():
            receipt = row.submission or {}
            final = finals.get(market_id)
            answered_over = (receipt.get("challenged") or {}).get("result") == "answered"
            kept = not answered_over and (
                receipt.get(SECOND_OPINION) is True
                or any(receipt.get(flag) is True for flag in SECOND_OPINION_FLAGS)
            )
            if kept:
                outcome = receipt.get("our_outcome") or row.decided_outcome
                signer = receipt.get("signer")
            else:
                outcome = final.delivered_outcome if final is not None else None
                outcome = outcome or row.decided_outcome
                signer = next((receipt[k] for k in _OWN_SIGNER_KEYS if receipt.get(k)), None)
            if outcome is None:
                continue
            answers.append(
                Answer(
                    market_id=market_id,
                    venue=row.source,
                    signer=str(signer) if signer else UNRECORDED,
                    kind="second_opinion" if kept else "proposal",
                    at=row.at,
                    outcome=str(outcome),
                    final_outcome=final.outcome if final is not None else None,
                )
            )
        return answers
