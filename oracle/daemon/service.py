"""The daemon: poll sources, research due markets, decide, deliver or queue for review.

Jobs (scheduled by :mod:`oracle.daemon.runner`, or run in sequence by `--once`):

- `poll`      (singleton) ask every market source for markets; track new ones (the
              window reader, where configured, reads the answer window of a new
              one that neither its venue nor its words place in time).
- `promote`   (singleton) discovered markets whose time has come become due; failed
              ones whose back-off has passed are retried, or handed to a person once
              `daemon.max_attempts` is spent.
- `dispatch`  (every replica) lease due or abandoned work up to the free capacity and
              drive each market as far as it goes: research, consensus, submission,
              and a challenge a person confirmed (a dispute, a counter-answer).
- `watch`     (singleton) submitted answers are read at every pass, their window
              running or over: a dispute moves the market to disputed at once, a
              window passed undisputed to final; final answers with a waiting
              callback are settled.
- `housekeep` (every replica) refresh the state gauges: markets by state, the review
              queue and its oldest item's age, the pending transactions and the
              oldest one's age (from the shared database), the balance of
              this replica's signer on each funded venue (read from the chain), and
              every `metrics.accuracy_refresh_interval` the accuracy ledger's
              rolling 7- and 30-day figures.

When a scheduled poll stores new markets, those that are due are promoted and dispatched
at once, beside the rest of the poll (`poll(start_due=True)`, `promote_then_start`),
rather than at the next ticks of those jobs: a market starts its research within a poll
of appearing.

Crash safety: every step is a lifecycle transition stored with its audit row before
the next begins, and work is held under a lease that expires. A replica that dies
leaves its markets to be leased again, resumed at the state they reached. Delivery
is idempotent in the resolver, so resuming `submitting` never sends a second answer.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, TypeVar

import orjson

from oracle.core import build_proof, evaluate, render_markdown
from oracle.core.debate import (
    ConflictResolution,
    is_conflict,
    majority_record,
    weighted_plurality,
)
from oracle.core.decision import timing_record, with_timing, with_venue_reasons
from oracle.core.failures import (
    FailureKind,
    Retry,
    RetryPolicy,
    after_failure,
    backoff_delay,
    kind_of,
    quoted,
    review_reason,
)
from oracle.core.lifecycle import MarketEvent, MarketState
from oracle.core.markets import (
    HIDDEN_CHARACTERS,
    MarketSpec,
    answer_window,
    asked_at,
    clean_spec,
    text_window,
    value_format,
)
from oracle.core.models import (
    AgentFailure,
    AgentResult,
    ConsensusInput,
    ConsensusResult,
    Market,
)
from oracle.core.outcomes import InvalidPolicy
from oracle.core.params import ConsensusParams, SourceThresholds
from oracle.core.proof import build_decision_proof, reseal
from oracle.core.review_rules import confirming
from oracle.core.scoring import ROLLING_WINDOWS, Finality, RollingFigures, rolling_figures
from oracle.core.text import clean
from oracle.core.timing import (
    AnswerWindow,
    Plan,
    Progress,
    ScheduleEvent,
    Step,
    plan,
    timed_action,
)
from oracle.daemon.debate import run_debate
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import (
    AnsweredByOthers,
    Challenged,
    Challenger,
    ChallengeSent,
    Funded,
    InvalidAnswers,
    MarketRef,
    MarketSource,
    Receipt,
    Refreshing,
    Resolution,
    ResolutionStatus,
    Resolver,
    VenueClock,
    VenueReview,
    WindowReader,
)
from oracle.daemon.research import AgentPool
from oracle.daemon.settings import DaemonSettings, MetricsSettings
from oracle.errors import (
    AnswerLost,
    AwaitingOthers,
    IllegalTransition,
    LeaseLost,
    ResolverError,
    SourceError,
)
from oracle.files import write_atomically
from oracle.log import emit
from oracle.scrub import scrub_value
from oracle.store.repository import Store
from oracle.store.research import AgentIdentity
from oracle.store.tables import MarketRow

logger = logging.getLogger("oracle.daemon")
T = TypeVar("T")
SECOND_OPINION = "another party answered: research at once (second opinion)"
UNREADABLE_ANSWERED = (
    "another party answered it on the venue: the request this daemon could not read is "
    "answered there, nothing is left to decide"
)
Clock = Callable[[], float]

S, E = MarketState, MarketEvent
WORK_STATES = (S.DUE, S.RESEARCHING, S.CONSENSUS, S.REVIEWED, S.SUBMITTING, S.CHALLENGING)
# Window reads (model requests) at once while a poll stores new markets.
WINDOW_READS_AT_ONCE = 8


@dataclass(frozen=True)
class Researched:
    """One finished research run's answers, as they were stored."""

    run_id: int
    results: tuple[AgentResult, ...]
    failures: tuple[AgentFailure, ...]


@dataclass(frozen=True)
class Judgement:
    """The rules a verdict is computed by (the `consensus` and `sources` settings)."""

    params: ConsensusParams
    thresholds: SourceThresholds


def default_replica_id() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def _market_ref(row: MarketRow) -> MarketRef:
    return MarketRef(
        market_id=row.id,
        source=row.source,
        external_id=row.external_id,
        outcomes=tuple(row.outcomes),
        details=dict(row.details),
        submission=dict(row.submission),
    )


def _window(row: MarketRow) -> AnswerWindow:
    """The market's answer window; one tracked before windows existed closes at its
    `resolve_after`, as it was researched then."""
    if row.answer_window is not None:
        return AnswerWindow.model_validate(row.answer_window)
    return AnswerWindow(
        closes_at=row.resolve_after,
        origin="venue",
        evidence="resolve_after (tracked before answer windows)",
    )


def _core_market(
    row: MarketRow, now: float | None = None, invalid: InvalidPolicy | None = None
) -> Market:
    """The market as the core judges it; `now`: the venue's clock for this research;
    `invalid`: the venue's word on INVALID for it (`InvalidAnswers`)."""
    return Market(
        id=row.id,
        question=row.question,
        criteria=row.criteria,
        outcomes=tuple(row.outcomes),
        resolve_after=row.resolve_after,
        window=_window(row),
        now=now,
        invalid=invalid,
        values=value_format(row.details),
    )


# Review items a person must still act on: open ones, and decisions awaiting approval.
AWAITING_PEOPLE = ("open", "needs_approval")


class Daemon:
    def __init__(
        self,
        *,
        settings: DaemonSettings,
        judgement: Judgement,
        store: Store,
        pool: AgentPool,
        sources: Sequence[MarketSource],
        resolvers: Mapping[str, Resolver],
        metrics: DaemonMetrics,
        metrics_settings: MetricsSettings | None = None,
        window_reader: WindowReader | None = None,
        clock: Clock = time.time,
    ) -> None:
        self.settings = settings
        self.judgement = judgement
        self.store = store
        self.pool = pool
        self.sources = list(sources)
        self._sources_by_name = {source.name: source for source in self.sources}
        self.resolvers = dict(resolvers)
        self.metrics = metrics
        self.metrics_settings = metrics_settings or MetricsSettings()
        self.window_reader = window_reader
        self._accuracy_refreshed_at: float | None = None
        self.clock = clock
        self.replica = settings.replica_id or default_replica_id()
        self.retry_policy = RetryPolicy(
            settings.max_attempts, settings.retry_backoff, settings.retry_backoff_max
        )
        self.lease_seconds = judgement.params.agent_timeout + settings.lease_margin
        self.draining = False
        # The sources whose last poll failed, each with its error: `run_once` reports
        # them, so that `oracle run --once` under cron does not exit 0 on a pass that
        # never reached its venue.
        self.failed_polls: dict[str, str] = {}
        self._tasks: set[asyncio.Task[None]] = set()
        # promote and dispatch also run when the step before them found work (see
        # `poll(start_due=True)`), besides their own schedule: one run at a time all the same.
        self._promote_lock = asyncio.Lock()
        self._dispatch_lock = asyncio.Lock()
        self._promotion: asyncio.Task[None] | None = None
        self._venue_clocks = {
            name: resolver
            for name, resolver in self.resolvers.items()
            if isinstance(resolver, VenueClock)
        }

    async def start(self) -> None:
        """Start every venue once, before the first job: connect, check, and resume what a
        previous process left in flight (whichever replica then runs which job)."""
        venues: list[MarketSource | Resolver] = [*self.sources, *self.resolvers.values()]
        for venue in {id(v): v for v in venues}.values():
            await venue.start()

    async def _venue_times(self) -> dict[str, float | None]:
        """Each venue clock's time now, by source (None: it cannot be read now, so its
        markets wait: judging them by another clock could act too early)."""
        times: dict[str, float | None] = {}
        for name, clock in self._venue_clocks.items():
            try:
                times[name] = await clock.now()
            except ResolverError as error:
                times[name] = None
                self.metrics.errors.labels("clock").inc()
                emit(logger, logging.WARNING, "venue.clock_unavailable", source=name, error=error)
        return times

    async def _venue_now(self, source: str) -> float:
        """The time on `source`'s venue clock (the daemon's clock for a venue without one);
        ResolverError when it cannot be read: a market's timing is never judged by
        another clock."""
        clock = self._venue_clocks.get(source)
        return self.clock() if clock is None else await clock.now()

    async def _venue_now_to_record(self, source: str) -> float:
        """The venue's time for a record or a plan (a retry's time, a latency, a new
        market's first research), the daemon's clock when the venue's cannot be read: none
        of them is held up by it, and whether a time has come is judged by the venue's
        clock all the same (`promote_due`, `waiting`)."""
        try:
            return await self._venue_now(source)
        except ResolverError:
            return self.clock()

    def _scheduled(
        self, specs: Sequence[MarketSpec], now: float
    ) -> tuple[list[MarketSpec], dict[str, Plan]]:
        """New markets with their answer windows, and each one's first research."""
        schedule = self.settings.schedule
        windowed = [replace(spec, window=answer_window(spec, now, schedule)) for spec in specs]
        plans = {
            spec.market_id: plan(spec.window, ScheduleEvent.DISCOVERED, now, Progress(), schedule)
            for spec in windowed
            if spec.window is not None
        }
        return windowed, plans

    async def _read_windows(self, specs: list[MarketSpec], now: float) -> list[MarketSpec]:
        """`specs`, each new one whose venue and words name no time with the window the
        window reader found. A market is read once, before it is first stored: a venue
        lists its markets again on every poll."""
        reader = self.window_reader
        unwindowed = [spec for spec in specs if spec.window is None]
        if reader is None or not unwindowed:
            return specs
        known = await self._db(self.store.known_ids, [spec.market_id for spec in unwindowed])
        found: dict[str, AnswerWindow] = {}
        to_ask: dict[str, MarketSpec] = {}
        for spec in unwindowed:
            if spec.market_id in known or spec.market_id in found or spec.market_id in to_ask:
                continue
            in_words = text_window(spec, now)
            if in_words is not None:
                found[spec.market_id] = in_words  # `_scheduled` takes it as it is
            else:
                to_ask[spec.market_id] = spec
        gate = asyncio.Semaphore(WINDOW_READS_AT_ONCE)

        async def ask(spec: MarketSpec) -> None:
            async with gate:
                window = await reader.read(
                    spec.question,
                    spec.criteria,
                    spec.outcomes,
                    asked_at(spec, now),
                    market_id=spec.market_id,
                )
            if window is not None:
                found[spec.market_id] = window

        await asyncio.gather(*(ask(spec) for spec in to_ask.values()))
        return [
            replace(spec, window=found[spec.market_id])
            if spec.window is None and spec.market_id in found
            else spec
            for spec in specs
        ]

    async def _db(self, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
        return await asyncio.to_thread(function, *args, **kwargs)

    # -- poll ------------------------------------------------------------------------------

    async def poll(self, *, start_due: bool = False) -> int:
        """Ask every source for markets; returns how many were new. With `start_due`
        (the scheduled job), markets stored that are due are promoted and dispatched
        at once, beside the rest of the poll, not at the next ticks of those jobs."""
        if not await self._db(self.store.try_acquire_job, "poll", self.replica, self._job_lease()):
            return 0
        added = 0
        for source in self.sources:
            self.metrics.source_polls.labels(source.name).inc()

            async def deliver(specs: list[MarketSpec], source_name: str = source.name) -> None:
                nonlocal added
                now = await self._venue_now_to_record(source_name)
                # Market text enters the daemon here: cleaned before anything reads it.
                cleaned = [clean_spec(spec) for spec in specs]
                # One the venue cannot read goes to a person as it is: no window, no plan.
                unreadable = {s.market_id: s for s in cleaned if s.unreadable is not None}
                readable = [s for s in cleaned if s.unreadable is None]
                specs, plans = self._scheduled(await self._read_windows(readable, now), now)
                specs = [*specs, *unreadable.values()]
                new = await self._db(self.store.add_discovered, specs, self.replica, plans)
                self.metrics.markets_discovered.labels(source_name).inc(len(new))
                for market_id in new:
                    emit(logger, logging.INFO, "market.discovered", market=market_id)
                    if market_id in unreadable:
                        self.metrics.review_reasons.labels("unreadable").inc()
                        emit(
                            logger,
                            logging.WARNING,
                            "market.unreadable",
                            market=market_id,
                            reason=unreadable[market_id].unreadable,
                        )
                added += len(new)
                if new and start_due:
                    self._promote_soon()

            try:
                skipped = await source.poll(deliver)
            except SourceError as error:
                self.metrics.source_errors.labels(source.name, "poll").inc()
                emit(logger, logging.WARNING, "source.poll_failed", source=source.name, error=error)
                self.failed_polls[source.name] = str(error)
                continue
            self.failed_polls.pop(source.name, None)
            for line in skipped:
                self.metrics.source_errors.labels(source.name, "malformed").inc()
                emit(
                    logger,
                    logging.WARNING,
                    "source.market_skipped",
                    source=source.name,
                    reason=line,
                )
            if await self._second_opinion(source) and start_due:
                self._promote_soon()
        return added

    async def _second_opinion(self, source: MarketSource) -> int:
        """Markets of `source` another party proposed or answered on, still waiting for
        their research, are researched at once (the schedule's `OTHER_ANSWERED`: now, by the
        venue's clock); returns how many. A failure is counted and logged as a failed poll."""
        if not isinstance(source, AnsweredByOthers):
            return 0
        name = source.name
        try:
            external_ids = await source.answered_by_others()
            if not external_ids:
                return 0
            now = await self._venue_now(name)
        except (SourceError, ResolverError) as error:
            self.metrics.source_errors.labels(name, "poll").inc()
            emit(logger, logging.WARNING, "source.poll_failed", source=name, error=error)
            self.failed_polls[name] = str(error)
            return 0
        moved = await self._db(
            self.store.research_now, name, external_ids, now, self.replica, SECOND_OPINION
        )
        for market_id in moved:
            emit(logger, logging.INFO, "market.second_opinion", market=market_id)
        # Ours among them was disputed or answered back: its state is read now, not when
        # the watch reaches it once its window is over (`watch`).
        reported = await self._db(
            self.store.markets_by_external_id,
            name,
            external_ids,
            (S.SUBMITTED, S.DISPUTED, S.NEEDS_REVIEW),
        )
        for row in reported:
            if row.state != S.NEEDS_REVIEW:
                await self._watch_one(row)
            elif row.details.get("unreadable"):
                # A request the daemon could not read, now answered on the venue by another
                # party: nothing is left for a person (the item would stay open for ever).
                closed = await self._db(
                    self.store.close_reviews, row.id, UNREADABLE_ANSWERED, self.replica
                )
                if closed:
                    emit(logger, logging.INFO, "market.unreadable_answered", market=row.id)
        return len(moved)

    def _replica_liveness(self) -> float:
        """How recently a replica must have asked for work to get a share of it: a few of
        its dispatch rounds (a busy replica with no free capacity does not ask)."""
        return 3 * self.settings.dispatch_interval + 1.0

    def _job_lease(self) -> float:
        return 3 * max(self.settings.poll_interval, self.settings.watch_interval)

    def _promote_soon(self) -> None:
        """Run `promote_then_start` in the background, unless it runs already (then the
        scheduled promote, a tick later, finds what this one would have)."""
        if self.draining or (self._promotion is not None and not self._promotion.done()):
            return
        self._promotion = asyncio.create_task(self._promote_now(), name="promote-now")

    async def _promote_now(self) -> None:
        try:
            await self.promote_then_start()
        except Exception as error:  # reported like a failed scheduled job; retried next tick
            self.metrics.errors.labels("promote").inc()
            error_text = f"{type(error).__name__}: {error}"
            emit(logger, logging.ERROR, "job.failed", job="promote", error=error_text)

    async def promote_then_start(self) -> int:
        """`promote`, then `dispatch` at once if it moved anything (the scheduled job)."""
        moved = await self.promote()
        if moved:
            await self.dispatch()
        return moved

    # -- promote ---------------------------------------------------------------------------

    async def promote(self) -> int:
        async with self._promote_lock:
            return await self._promote()

    async def _promote(self) -> int:
        if not await self._db(
            self.store.try_acquire_job, "promote", self.replica, self._job_lease()
        ):
            return 0
        now = self.clock()
        venue_times = await self._venue_times()
        due = await self._db(self.store.promote_due, now, self.replica, venue_times=venue_times)
        moved = len(due)
        for row in await self._db(self.store.waiting, now, venue_times=venue_times):
            try:
                moved += await self._after_wait(row)
            except IllegalTransition:
                continue  # another replica moved it first
        return moved

    async def _after_wait(self, row: MarketRow) -> int:
        """A failed or deferred market whose wait is over: retried, or handed to a person
        when its budget is spent (the move and the review item in one transaction)."""
        if row.state == S.DEFERRED:
            # Whether a person must look is the schedule's call, made with the verdict.
            await self._apply(row.id, E.RESEARCH_AGAIN, f"deferral {row.deferrals} is over")
        elif "challenge_pending" in row.submission:
            await self._apply(row.id, E.RETRY_CHALLENGE, "the confirmed challenge is retried")
        elif row.decided_outcome is not None and row.proof_checksum is not None:
            await self._apply(row.id, E.RETRY_SUBMISSION, "delivery is retried")
        elif row.failures >= self.settings.max_attempts:
            return await self._hand_to_person(
                row,
                E.RETRIES_EXHAUSTED,
                "retries_exhausted",
                f"gave up after {row.failures} failed research attempts",
            )
        else:
            await self._apply(row.id, E.RETRY, f"retry after {row.failures} failed attempts")
        return 1

    async def _hand_to_person(
        self, row: MarketRow, event: MarketEvent, code: str, reason: str
    ) -> int:
        _, review_id = await self._db(
            self.store.hand_to_person, row.id, event, actor=self.replica, reasons=[reason]
        )
        self.metrics.review_reasons.labels(code).inc()
        emit(logger, logging.INFO, "market.review_opened", market=row.id, review=review_id)
        return 1

    # -- dispatch --------------------------------------------------------------------------

    async def dispatch(self) -> int:
        """Lease work up to the free capacity and start it; returns how many started."""
        async with self._dispatch_lock:
            if self.draining:
                return 0
            free = self.settings.max_concurrent_markets - len(self._tasks)
            if free <= 0:
                return 0
            rows = await self._db(
                self.store.claim,
                self.replica,
                WORK_STATES,
                free,
                self.lease_seconds,
                share_within=self._replica_liveness(),
                in_flight=len(self._tasks),
            )
            self._start(rows)
            return len(rows)

    def _start(self, rows: Sequence[MarketRow]) -> None:
        for row in rows:
            task = asyncio.create_task(self._process(row), name=f"market:{row.id}")
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        self.metrics.inflight.set(len(self._tasks))

    async def wait_idle(self) -> None:
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)

    async def _process(self, row: MarketRow) -> None:
        market_id = row.id
        released = False
        try:
            released = (await self._drive(row)).lease_owner is None
        except LeaseLost:
            emit(logger, logging.WARNING, "market.lease_lost", market=market_id)
        except asyncio.CancelledError:
            emit(logger, logging.WARNING, "market.interrupted", market=market_id, state=row.state)
            raise
        except Exception as error:  # never let one market stop the daemon
            self.metrics.errors.labels("process").inc()
            emit(
                logger,
                logging.ERROR,
                "market.error",
                market=market_id,
                error=f"{type(error).__name__}: {error}",
            )
            await self._fail(market_id, f"{type(error).__name__}: {error}")
        finally:
            if not released:  # else the move that ended its work released it (`_deliver`)
                await asyncio.shield(self._db(self.store.release_lease, market_id, self.replica))
            self.metrics.inflight.set(len(self._tasks))

    async def _drive(self, row: MarketRow) -> MarketRow:
        """Drive the market as far as it goes; returns it as it was left."""
        researched: Researched | None = None
        while True:
            state = MarketState(row.state)
            if state in (S.DUE, S.RESEARCHING) and self.draining:
                return row  # no research starts now; the lease is released, a later run resumes
            if state is S.DUE:
                attempt = row.attempts + 1
                row, run_id = await self._db(
                    self.store.start_research, row.id, self.replica, attempt, f"attempt {attempt}"
                )
                row, researched = await self._research(row, run_id)
            elif state is S.RESEARCHING:  # resumed: the previous run was interrupted
                run_id = await self._db(self.store.start_run, row.id, row.attempts, self.replica)
                row, researched = await self._research(row, run_id)
            elif state is S.CONSENSUS:
                row = await self._decide(row, researched)
            elif state is S.REVIEWED:
                row = await self._prepare_reviewed(row)
            elif state is S.SUBMITTING:
                row = await self._deliver(row)
            elif state is S.CHALLENGING:
                row = await self._challenge(row)
            else:
                return row

    async def _research(self, row: MarketRow, run_id: int) -> tuple[MarketRow, Researched | None]:
        """Research the market as its source shows it now (`Refreshing`; what it read is
        stored with the answers); a source that cannot be read fails the attempt (retried
        with back-off), never a research on stale text."""
        try:
            now = await self._venue_now(row.source)
        except ResolverError as error:
            return await self._fail(row.id, f"reading the venue's clock: {error}"), None
        source = self._sources_by_name.get(row.source)
        market = _core_market(row, now, self._invalid_policy(row))
        refreshed: dict[str, Any] | None = None
        if isinstance(source, Refreshing):
            try:
                current = await source.refresh(_market_ref(row))
            except SourceError as error:
                self.metrics.source_errors.labels(row.source, "refresh").inc()
                emit(logger, logging.WARNING, "market.refresh_failed", market=row.id, error=error)
                return await self._fail(row.id, f"reading the market again: {error}"), None
            if current is not None:
                criteria = clean(current.criteria)
                details = dict(current.details)
                hidden = int(row.details.get(HIDDEN_CHARACTERS, 0)) + criteria.removed
                if hidden:
                    details[HIDDEN_CHARACTERS] = hidden
                refreshed = {"criteria": criteria.text, "details": details}
                market = market.model_copy(update={"criteria": criteria.text})
        answers = await self.pool.research(market)
        for answer in answers:
            failed = isinstance(answer.answer, AgentFailure)
            self.metrics.agent_latency.labels(answer.agent_id).observe(answer.latency_seconds)
            self.metrics.agent_answers.labels(
                answer.agent_id, "failed" if failed else "answered"
            ).inc()
        row = await self._db(
            self.store.finish_research,
            row.id,
            self.replica,
            run_id,
            [(a.answer, a.latency_seconds) for a in answers],
            lease_seconds=self.lease_seconds,
            reason=f"run {run_id}: {len(answers)} agents asked",
            updates=refreshed,
            agents={a.name: AgentIdentity(a.provider, a.model_family) for a in self.pool.agents},
        )
        return row, Researched(
            run_id,
            tuple(a.answer for a in answers if isinstance(a.answer, AgentResult)),
            tuple(a.answer for a in answers if isinstance(a.answer, AgentFailure)),
        )

    def _invalid_policy(self, row: MarketRow) -> InvalidPolicy | None:
        """Whether the market's venue takes INVALID, and what an agreed one does there."""
        source = self._sources_by_name.get(row.source)
        if isinstance(source, InvalidAnswers):
            return source.invalid_policy(_market_ref(row))
        return None

    async def _decide(self, row: MarketRow, researched: Researched | None) -> MarketRow:
        """Judge the research this replica just did, or, when resuming, the stored run."""
        if researched is None:
            run = await self._db(self.store.latest_run, row.id, "done")
            if run is None or run.id is None:
                return await self._step(row.id, E.FAILED, "no finished research run to judge")
            results, failures = await self._db(self.store.run_answers, run.id)
            researched = Researched(run.id, tuple(results), tuple(failures))
        try:
            now = await self._venue_now(row.source)
        except ResolverError as error:
            return await self._fail(row.id, f"reading the venue's clock: {error}")
        consensus_input = ConsensusInput(
            market=_core_market(row, now, self._invalid_policy(row)),
            results=researched.results,
            failures=researched.failures,
        )
        params, thresholds = self.judgement.params, self.judgement.thresholds
        result = evaluate(consensus_input, params, thresholds)
        debate = majority = None
        counted = [vote.outcome for vote in result.votes if vote.counted]
        conflict = is_conflict(counted, result.reached)
        if conflict and params.conflict_resolution is ConflictResolution.DEBATE:
            consensus_input, result, debate = await self._debate(consensus_input, result)
        elif conflict and params.conflict_resolution is ConflictResolution.MAJORITY:
            # A label for the reviewer, never a verdict: the policy has already sent this
            # conflict to review (no quorum), and it stays there.
            majority = majority_record(weighted_plurality(result.votes))
            emit(
                logger,
                logging.INFO,
                "market.majority",
                market=consensus_input.market.id,
                proposed=majority["proposed"],
                share=majority["share"],
            )
        source = self._sources_by_name.get(row.source)
        if isinstance(source, VenueReview):
            result = with_venue_reasons(result, source.review_reasons(_market_ref(row)))
        timed = timed_action(
            _window(row),
            outcome=result.outcome,
            action=result.action,
            now=now,
            progress=Progress(row.early_checks, row.late_deferrals),
            params=self.settings.schedule,
        )
        result = with_timing(result, timed)
        proof = build_proof(
            consensus_input,
            result,
            params,
            thresholds,
            debate=debate,
            majority=majority,
            timing=timing_record(timed),
            hidden_characters=int(row.details.get(HIDDEN_CHARACTERS, 0)),
        )
        # No configured secret in a proof, whatever text carried it (oracle.scrub).
        if (clean := scrub_value(proof)) != proof:
            proof = reseal(clean)
        # On disk before the verdict is committed: a market never moves on without it.
        self._write_proof(row.id, proof)
        if result.action == "submit":
            event = E.CONSENSUS_SUBMIT
            reason = f"{result.outcome} agreed by {result.agreement_ratio:.0%} of valid agents"
            updates: dict[str, Any] = {
                "decided_outcome": result.outcome,
                "proof_checksum": proof["checksum"],
            }
        elif result.action == "review":
            event, reason, updates = E.CONSENSUS_REVIEW, "; ".join(result.review_reasons), {}
        else:
            # A wait always has its plan; without one (never) the market is researched now.
            wait = timed.plan or Plan(
                Step.NOW, now, Progress(row.early_checks, row.late_deferrals), ""
            )
            event, reason = E.CONSENSUS_RESEARCH_AGAIN, timed.reason
            updates = {
                "next_attempt_at": wait.at,
                "deferrals": row.deferrals + 1,
                "early_checks": wait.progress.early_checks,
                "late_deferrals": wait.progress.late_deferrals,
            }
        row, review_id = await self._db(
            self.store.record_verdict,
            row.id,
            self.replica,
            researched.run_id,
            result,
            proof,
            event=event,
            reason=reason,
            updates=updates,
            review_reasons=list(result.review_reasons) if result.action == "review" else None,
        )
        self.metrics.consensus.labels(result.action, str(result.reached).lower()).inc()
        for code in result.review_codes:
            self.metrics.review_reasons.labels(code).inc()
        emit(
            logger,
            logging.INFO,
            "market.verdict",
            market=row.id,
            outcome=result.outcome,
            action=result.action,
            proof=proof["checksum"],
            reasons="; ".join(result.review_reasons),
        )
        if review_id is not None:
            emit(logger, logging.INFO, "market.review_opened", market=row.id, review=review_id)
        return row

    async def _debate(
        self, consensus_input: ConsensusInput, result: ConsensusResult
    ) -> tuple[ConsensusInput, ConsensusResult, dict[str, Any]]:
        """The conflict in `result` debated (`oracle.daemon.debate`): the standing answers,
        their verdict, and the record of the rounds for the proof."""
        params, thresholds = self.judgement.params, self.judgement.thresholds
        outcome = await run_debate(self.pool, consensus_input, result, params, thresholds)
        self.metrics.debates.labels(outcome.stop.value, outcome.result.action).inc()
        self.metrics.debate_rounds.inc(outcome.rounds)
        for flip in outcome.flips:
            self.metrics.debate_flips.labels(str(flip.supported).lower()).inc()
        emit(
            logger,
            logging.INFO,
            "market.debate",
            market=consensus_input.market.id,
            stop=outcome.stop,
            rounds=outcome.rounds,
            before=result.leading_outcome,
            after=outcome.result.leading_outcome,
            action=outcome.result.action,
            unsupported_flips=",".join(outcome.record["unsupported_flips"]),
        )
        return outcome.consensus_input, outcome.result, outcome.record

    async def _prepare_reviewed(self, row: MarketRow) -> MarketRow:
        """Build the decision proof for a person's answer, then start its delivery."""
        review = await self._db(self.store.decided_review, row.id)
        if review is None or review.decided_outcome is None:
            raise RuntimeError("market is reviewed but has no decided review item")
        if review.approval_reason is not None and review.approved_by is None:
            # Four-eyes: the store keeps such a market in review until it is approved;
            # this holds the rule even against a row written around the store.
            raise RuntimeError(f"review {review.id} awaits approval: {review.approval_reason}")
        base = await self._db(self.store.latest_consensus, row.id)
        proof = build_decision_proof(
            base.proof
            if base is not None
            else {"market": {"id": row.id, "question": row.question}},
            outcome=review.decided_outcome,
            reason=review.decided_reason or "",
            decided_by=review.decided_by or "unknown",
            decided_at=review.decided_at or self.clock(),
            approved_by=review.approved_by,
            approved_at=review.approved_at,
        )
        self._write_proof(row.id, proof)  # on disk before the market moves on with it
        return await self._db(
            self.store.start_delivery_of_decision,
            row.id,
            self.replica,
            review.decided_outcome,
            proof,
            reason=f"decided {review.decided_outcome} by {review.decided_by}",
        )

    async def _deliver(self, row: MarketRow) -> MarketRow:
        resolver = self.resolvers.get(row.source)
        try:
            if resolver is None:
                raise ResolverError(f"no resolver for source {row.source!r}", retryable=False)
            if row.decided_outcome is None or row.proof_checksum is None:
                raise ResolverError("nothing decided to deliver", retryable=False)
            receipt = await resolver.propose(
                _market_ref(row), row.decided_outcome, row.proof_checksum
            )
        except AnswerLost as error:
            self.metrics.submissions.labels("failed").inc()
            return await self._answer_lost(row, error)
        except ResolverError as error:
            self.metrics.submissions.labels("failed").inc()
            return await self._refused(row, error, "market.delivery_failed")
        self.metrics.submissions.labels("confirmed").inc()
        self.metrics.gas_used.inc(receipt.gas_used)
        now = await self._venue_now_to_record(row.source)
        self.metrics.due_to_submitted.observe(max(now - row.resolve_after, 0.0))
        emit(
            logger,
            logging.INFO,
            "market.submitted",
            market=row.id,
            outcome=row.decided_outcome,
            reference=receipt.reference,
            proof=row.proof_checksum,
        )
        row = await self._step(
            row.id,
            E.PROPOSAL_CONFIRMED,
            f"accepted as {receipt.reference}",
            updates={
                "submission": {
                    "reference": receipt.reference,
                    "final_after": receipt.final_after,
                    "gas_used": receipt.gas_used,
                    **receipt.details,
                    **_challenge_offered(receipt),
                },
                "window_ends_at": receipt.final_after,
                "delivery_failures": 0,
                # Its work here is done: the lease is released in this move's transaction,
                # not in one of its own after it.
                "lease_owner": None,
                "lease_expires_at": 0.0,
            },
        )
        await self._disagreement(row, receipt)
        return row

    async def _disagreement(self, row: MarketRow, receipt: Receipt) -> None:
        """Someone else's answer stands on the venue and contradicts ours: a person looks
        (and, where the venue offers it, confirms answering back)."""
        if receipt.disagreement is None:
            return
        reasons = [receipt.disagreement]
        if receipt.challenge is not None:
            reasons.append(
                f"deciding {row.decided_outcome} (or another outcome than theirs) confirms "
                f"{confirming(receipt.challenge)}; deciding their outcome leaves it standing "
                "and sends nothing"
            )
        review_id = await self._db(self.store.open_review, row.id, None, reasons)
        self.metrics.venue_disagreements.labels(row.source).inc()
        emit(
            logger,
            logging.WARNING,
            "market.venue_disagrees",
            market=row.id,
            review=review_id,
            reason=receipt.disagreement,
        )

    async def _challenge(self, row: MarketRow) -> MarketRow:
        """Send the dispute or counter-answer a person confirmed (the market reached
        `challenging` only by that confirmation), once; or record why nothing was sent."""
        pending = dict(row.submission.get("challenge_pending") or {})
        resolver = self.resolvers.get(row.source)
        outcome = str(pending.get("outcome"))
        try:
            if not pending or not isinstance(resolver, Challenger):
                raise ResolverError(
                    f"market {row.id}: no confirmed challenge its venue can send",
                    retryable=False,
                )
            result = await resolver.challenge(_market_ref(row), outcome)
        except AnswerLost as error:
            self.metrics.challenges.labels(row.source, "failed").inc()
            return await self._answer_lost(row, error)
        except ResolverError as error:
            self.metrics.challenges.labels(row.source, "failed").inc()
            return await self._refused(row, error, "market.challenge_failed")
        sent = result.sent.value if result.sent is not None else "moot"
        self.metrics.challenges.labels(row.source, sent).inc()
        emit(
            logger,
            logging.INFO,
            "market.challenged",
            market=row.id,
            action=pending.get("action"),
            outcome=outcome,
            sent=sent,
            reason=result.reason,
            reference=result.receipt.reference if result.receipt else None,
        )
        return await self._after_challenge(row, pending, result)

    async def _after_challenge(
        self, row: MarketRow, pending: dict[str, Any], result: Challenged
    ) -> MarketRow:
        done = {**pending, "result": result.sent.value if result.sent else "moot"}
        done["reason"] = result.reason
        receipt = result.receipt
        submission = {k: v for k, v in row.submission.items() if k != "challenge_pending"}
        updates: dict[str, Any] = {}
        if receipt is not None:
            done["reference"] = receipt.reference
            submission = {
                "reference": receipt.reference,
                "final_after": receipt.final_after,
                "gas_used": receipt.gas_used,
                **receipt.details,
                **_challenge_offered(receipt),
            }
            updates["window_ends_at"] = receipt.final_after
        submission.pop("challenge_pending", None)
        updates["submission"] = {**submission, "challenged": done}
        updates["delivery_failures"] = 0
        if result.sent is ChallengeSent.DISPUTED:
            event = E.CHALLENGE_DISPUTED
        elif result.sent is ChallengeSent.ANSWERED:
            event = E.CHALLENGE_ANSWERED
        else:
            event = E.CHALLENGE_MOOT
        row = await self._step(row.id, event, result.reason[:1000], updates=updates)
        if result.sent is None and receipt is not None:
            await self._disagreement(row, receipt)  # the venue moved on, still against us
        return row

    async def _answer_lost(self, row: MarketRow, error: AnswerLost) -> MarketRow:
        """An answer paid for that can no longer take effect: recorded in the submission
        and handed to a person (never retried on its own), with the review item that
        says why, in one transaction."""
        reason = (
            f"{error}; deciding an outcome answers again over it (at double its bond, "
            "within the bond caps); the lost bond is not recovered"
        )
        lost = [*row.submission.get("answers_lost", []), error.record]
        # A confirmed challenge that lost its answer is over: the person decides anew.
        kept = {k: v for k, v in row.submission.items() if k != "challenge_pending"}
        moved, review_id = await self._db(
            self.store.hand_to_person,
            row.id,
            E.ANSWER_LOST,
            actor=self.replica,
            reasons=[reason],
            updates={"submission": {**kept, "answers_lost": lost}},
        )
        self.metrics.review_reasons.labels("answer_lost").inc()
        emit(
            logger,
            logging.ERROR,
            "market.answer_lost",
            market=row.id,
            review=review_id,
            reason=str(error),
        )
        return moved

    async def _refused(self, row: MarketRow, error: ResolverError, event: str) -> MarketRow:
        """A delivery (an answer or a challenge) the venue refused: logged, then failed as
        its kind says (a person at once for a refusal that waiting will not cure)."""
        kind = (
            FailureKind.WAITING if isinstance(error, AwaitingOthers) else kind_of(error.retryable)
        )
        emit(
            logger,
            logging.INFO if kind is FailureKind.WAITING else logging.WARNING,
            event,
            market=row.id,
            kind=kind.value,
            attempt=row.delivery_failures + 1,
            error=quoted(str(error)),
        )
        return await self._fail(row.id, str(error), kind)

    async def _fail(
        self, market_id: str, reason: str, kind: FailureKind = FailureKind.TRANSIENT
    ) -> MarketRow:
        """A failed step. Research (and judging) counts in `failures`, retried with
        back-off and handed to a person by `promote` once `daemon.max_attempts` is spent;
        a delivery or a confirmed challenge keeps its verdict and follows
        `oracle.core.failures` (`_delivery_failed`)."""
        row = await self._db(self.store.get_market, market_id)
        now = await self._venue_now_to_record(row.source)
        if row.state in (S.SUBMITTING, S.CHALLENGING):
            return await self._delivery_failed(row, reason, kind, now)
        failures = row.failures + 1
        delay = backoff_delay(failures, self.retry_policy)
        try:
            return await self._step(
                market_id,
                E.FAILED,
                reason[:1000],
                updates={"next_attempt_at": now + delay, "failures": failures},
            )
        except (IllegalTransition, LeaseLost):
            return row  # it already moved on, or another replica holds it now

    async def _delivery_failed(
        self, row: MarketRow, reason: str, kind: FailureKind, now: float
    ) -> MarketRow:
        """A delivery (or confirmed challenge) attempt failed: retried later, each wait
        longer than the one before, or handed to a person, at once when the refusal is
        permanent and after `daemon.max_attempts` failed attempts otherwise
        (`oracle.core.failures.after_failure`), with the venue's reason in the item."""
        challenging = row.state == S.CHALLENGING
        action = "challenge" if challenging else "propose"
        self.metrics.delivery_failures.labels(row.source, action, kind.value).inc()
        step = after_failure(kind, row.delivery_failures, now, self.retry_policy)
        if isinstance(step, Retry):
            try:
                return await self._step(
                    row.id,
                    E.FAILED,
                    f"attempt {step.attempts} failed ({kind.value}), retried in "
                    f"{step.delay:g} s: {quoted(reason, 800)}",
                    updates={"next_attempt_at": step.at, "delivery_failures": step.attempts},
                )
            except (IllegalTransition, LeaseLost):
                return row  # it already moved on, or another replica holds it now
        if challenging:
            pending = row.submission.get("challenge_pending") or {}
            what = f"the confirmed {str(pending.get('action') or 'challenge').replace('_', '-')}"
        else:
            what = f"delivering {row.decided_outcome}"
        updates: dict[str, Any] = {"delivery_failures": 0}
        if challenging:  # the confirmed challenge is over: the person decides anew
            updates["submission"] = {
                k: v for k, v in row.submission.items() if k != "challenge_pending"
            }
        try:
            moved, review_id = await self._db(
                self.store.hand_to_person,
                row.id,
                E.DELIVERY_STOPPED,
                actor=self.replica,
                reasons=[review_reason(what, step, reason)],
                updates=updates,
            )
        except (IllegalTransition, LeaseLost):
            return row
        self.metrics.review_reasons.labels(step.code).inc()
        emit(
            logger,
            logging.ERROR,
            "market.delivery_stopped",
            market=row.id,
            review=review_id,
            code=step.code,
            action=action,
            attempts=step.attempts,
            error=quoted(reason),
        )
        return moved

    async def _apply(
        self,
        market_id: str,
        event: MarketEvent,
        reason: str,
        updates: dict[str, Any] | None = None,
        *,
        leased: bool = False,
    ) -> MarketRow:
        """A transition; with `leased`, LeaseLost unless this replica still holds the lease."""
        return await self._db(
            self.store.apply_event,
            market_id,
            event,
            actor=self.replica,
            reason=reason,
            lease_owner=self.replica if leased else None,
            updates=updates,
        )

    async def _step(
        self,
        market_id: str,
        event: MarketEvent,
        reason: str,
        updates: dict[str, Any] | None = None,
    ) -> MarketRow:
        """A transition of a market this replica leases."""
        return await self._apply(market_id, event, reason, updates, leased=True)

    def _write_proof(self, market_id: str, proof: dict[str, Any]) -> None:
        directory = self.settings.proofs_dir / proof_directory(market_id)
        directory.mkdir(parents=True, exist_ok=True)
        base = directory / proof["checksum"]
        write_atomically(base.with_suffix(".json"), _json(proof))
        write_atomically(base.with_suffix(".md"), render_markdown(proof))

    # -- watch and settle ------------------------------------------------------------------

    async def watch(self) -> int:
        if not await self._db(self.store.try_acquire_job, "watch", self.replica, self._job_lease()):
            return 0
        changed = 0
        # A venue whose events report disputes and answers back (`AnsweredByOthers`: read
        # after each poll, see `_second_opinion`) has its submitted answers read here once
        # their window is over; any other venue's at every pass, window running or over:
        # either way a dispute is known within a poll or a watch interval, not once the
        # window ends.
        times = await self._venue_times()
        unreadable = [name for name, at in times.items() if at is None]
        fed = {
            source.name: at
            for source in self.sources
            if isinstance(source, AnsweredByOthers)
            and (at := times.get(source.name, self.clock())) is not None
        }
        after, page = "", 500
        while True:
            rows = await self._db(
                self.store.markets_to_watch,
                unreadable=unreadable,
                fed=fed,
                after=after,
                limit=page,
            )
            for row in rows:
                changed += await self._watch_one(row)
            if len(rows) < page:
                break
            after = rows[-1].id
        for row in await self._db(self.store.markets_to_settle):
            resolver = self.resolvers.get(row.source)
            if resolver is None:
                continue
            try:
                reference = await resolver.settle(_market_ref(row))
            except ResolverError as error:
                self.metrics.errors.labels("settle").inc()
                kind = kind_of(error.retryable)
                self.metrics.delivery_failures.labels(row.source, "settle", kind.value).inc()
                if kind is FailureKind.PERMANENT:
                    # Trying again at every watch pass cannot help: not tried again.
                    await self._db(self.store.stop_settling, row.id, quoted(str(error)))
                    emit(
                        logger,
                        logging.ERROR,
                        "market.settle_refused",
                        market=row.id,
                        error=quoted(str(error)),
                    )
                    continue
                emit(logger, logging.WARNING, "market.settle_failed", market=row.id, error=error)
                continue
            await self._db(self.store.mark_settled, row.id, reference or "")
            emit(logger, logging.INFO, "market.settled", market=row.id, reference=reference)
        return changed

    async def _watch_one(self, row: MarketRow) -> int:
        resolver = self.resolvers.get(row.source)
        if resolver is None:
            return 0
        try:
            return await self._follow(row, await resolver.state(_market_ref(row)))
        except (ResolverError, IllegalTransition) as error:
            self.metrics.errors.labels("watch").inc()
            emit(logger, logging.WARNING, "market.watch_failed", market=row.id, error=error)
            return 0

    async def _follow(self, row: MarketRow, resolution: Resolution) -> int:
        status = resolution.status
        if row.state == S.SUBMITTED and status is ResolutionStatus.FINAL:
            await self._finalize(
                row,
                E.WINDOW_PASSED,
                "challenge window passed undisputed",
                resolution,
                Finality.TIME,
            )
        elif row.state == S.SUBMITTED and status is ResolutionStatus.DISPUTED:
            receipt = resolution.receipt
            updates = None
            if receipt is not None:  # ours superseded: recorded, and a person may answer back
                updates = {
                    "submission": {
                        **row.submission,
                        **receipt.details,
                        **_challenge_offered(receipt),
                    }
                }
            disputed = await self._apply(
                row.id, E.DISPUTED, resolution.reason or "the answer was disputed", updates
            )
            if receipt is not None:
                await self._disagreement(disputed, receipt)
        elif row.state == S.DISPUTED and status is ResolutionStatus.FINAL:
            upheld = resolution.outcome is not None and resolution.outcome != row.decided_outcome
            await self._finalize(
                row,
                E.DISPUTE_UPHELD if upheld else E.DISPUTE_REJECTED,
                f"arbiter settled on {resolution.outcome}",
                resolution,
                Finality.ARBITER,
            )
        elif status is ResolutionStatus.RESET:
            await self._apply(
                row.id,
                E.PROPOSAL_RESET,
                resolution.reason or "the arbiter asked for a new answer",
                updates={
                    "decided_outcome": None,
                    "proof_checksum": None,
                    "submission": {},
                    "window_ends_at": None,
                },
            )
        else:
            return 0
        if status is ResolutionStatus.FINAL:
            # Items opened beside the answer (a disagreement with another proposer) can
            # no longer change anything: closed, saying how the venue settled.
            await self._db(
                self.store.close_reviews,
                row.id,
                f"the venue settled on {resolution.outcome}",
                self.replica,
            )
        emit(logger, logging.INFO, "market.resolution", market=row.id, status=status.value)
        return 1

    async def _finalize(
        self,
        row: MarketRow,
        event: MarketEvent,
        reason: str,
        resolution: Resolution,
        inferred: Finality,
    ) -> None:
        """The move to `final`, with the outcome the venue settled on and how (what the
        venue says, else `inferred`) in the accuracy ledger, in one transaction."""
        finality = resolution.finality or inferred
        final = await self._db(
            self.store.finalize,
            row.id,
            event,
            actor=self.replica,
            reason=reason,
            outcome=resolution.outcome,
            finality=finality,
        )
        emit(
            logger,
            logging.INFO,
            "market.final",
            market=row.id,
            outcome=resolution.outcome or final.decided_outcome,
            finality=finality.value,
        )

    # -- housekeeping ----------------------------------------------------------------------

    async def housekeep(self) -> None:
        metrics = self.metrics
        counts = await self._db(self.store.count_by_state)
        for state in MarketState:
            metrics.markets.labels(state.value).set(counts.get(state.value, 0))
        # A decision awaiting approval (four-eyes) still waits for a person.
        queue = await self._db(self.store.review_queue, AWAITING_PEOPLE)
        reviews = [item for item, _ in queue]
        now = self.clock()
        metrics.reviews_open.set(len(reviews))
        oldest_review = min((review.created_at for review in reviews), default=now)
        metrics.review_oldest_open_age.set(max(now - oldest_review, 0.0))
        pending, oldest_intent = await self._db(self.store.pending_transactions)
        metrics.tx_pending.set(pending)
        age = now - oldest_intent if oldest_intent is not None else 0.0
        metrics.tx_oldest_pending_age.set(max(age, 0.0))
        metrics.show_attention(await self._db(self._awaiting_people))
        await self._read_balances()
        await self._refresh_accuracy(now)

    async def _refresh_accuracy(self, now: float) -> None:
        """The accuracy ledger's rolling figures, every metrics.accuracy_refresh_interval
        (they read 30 days of final outcomes, answers and verdicts)."""
        ledger = self.metrics_settings
        last = self._accuracy_refreshed_at
        if last is not None and now - last < ledger.accuracy_refresh_interval:
            return

        def figures() -> tuple[RollingFigures, ...]:
            # Read and scored off the event loop: 10,000 final markets take seconds
            # (bench/accuracy_refresh.py).
            markets = self.store.scored_markets(since=now - max(ROLLING_WINDOWS.values()))
            return rolling_figures(markets, now, min_answers=ledger.accuracy_min_answers)

        self.metrics.show_accuracy(await self._db(figures))
        self._accuracy_refreshed_at = now

    async def _read_balances(self) -> None:
        venues: list[object] = [*self.sources, *self.resolvers.values()]
        for venue in {id(v): v for v in venues}.values():
            if not isinstance(venue, Funded):
                continue
            try:
                balance = await venue.signer_balance()
            except ResolverError as error:  # the gauge keeps its last value; the rest goes on
                self.metrics.errors.labels("housekeep").inc()
                emit(
                    logger,
                    logging.WARNING,
                    "venue.balance_unavailable",
                    source=venue.name,
                    error=error,
                )
                continue
            if balance is not None:
                self.metrics.signer_balance.labels(venue.name, balance.signer).set(balance.wei)

    def _awaiting_people(self) -> list[dict[str, str | float]]:
        """Each market a person must act on, with what an alert about it shows: open review
        items (since they opened) and disputed answers (since the dispute was seen)."""
        items = []
        for review, row in self.store.review_queue(AWAITING_PEOPLE):
            consensus = (
                self.store.consensus(review.consensus_id)
                if review.consensus_id is not None
                else self.store.latest_consensus(row.id)
            )
            proof = consensus.proof if consensus is not None else {}
            answer = proof.get("verdict", {}).get("leading_outcome") or (
                consensus.outcome if consensus is not None else ""
            )
            items.append(
                _attention(
                    row, "review", review.created_at, proof=proof, answer=answer, review=review.id
                )
            )
        for row in self.store.markets([S.DISPUTED]):
            consensus = self.store.latest_consensus(row.id)
            proof = consensus.proof if consensus is not None else {}
            items.append(
                _attention(
                    row, "disputed", row.state_changed_at, proof=proof, answer=row.decided_outcome
                )
            )
        return items

    # -- one pass --------------------------------------------------------------------------

    async def run_once(self) -> dict[str, str]:
        """One full pass: poll, promote, work everything that is due, watch, settle.
        Returns the sources this pass could not poll, each with its error (the rest of
        the pass still ran: what was stored before is worked on)."""
        await self.start()
        await self.poll()
        await self.promote()
        while await self.dispatch() or self._tasks:
            await self.wait_idle()
        await self.watch()
        await self.housekeep()
        return dict(self.failed_polls)

    async def drain(self) -> None:
        """Start no new work; free this replica's singleton jobs (a replacement polls at
        once) and its share of new work (the others take it all); let in-flight markets
        finish within the drain timeout."""
        self.draining = True
        if self._promotion is not None:
            # Bounded like the markets in flight: a promotion waiting on a venue's clock
            # (a chain whose nodes are all down retries for `chain.rpc.call_deadline`)
            # must not hold the stop. Cancelling it loses nothing: the next replica's
            # promote finds the same due markets.
            await _finish_or_cancel([self._promotion], self.settings.drain_timeout)
        await self._leave()
        pending = list(self._tasks)
        if pending:
            emit(logger, logging.INFO, "daemon.draining", in_flight=len(pending))
            await _finish_or_cancel(pending, self.settings.drain_timeout)

    async def _leave(self) -> None:
        try:
            await self._db(self.store.leave, self.replica)
        except Exception as error:  # the database is gone: the leases expire by themselves
            emit(logger, logging.WARNING, "daemon.leave_failed", error=type(error).__name__)


async def _finish_or_cancel(tasks: list[asyncio.Task[Any]], timeout: float) -> None:
    """Let `tasks` finish within `timeout` seconds; cancel the rest and wait for them."""
    _, still_running = await asyncio.wait(tasks, timeout=timeout)
    for task in still_running:
        task.cancel()
    await asyncio.gather(*still_running, return_exceptions=True)


def _challenge_offered(receipt: Receipt) -> dict[str, Any]:
    """The submission's record of what confirming the receipt's disagreement would do."""
    if receipt.disagreement is None or receipt.challenge is None:
        return {}
    return {"challenge": receipt.challenge}


def _json(document: dict[str, Any]) -> str:
    """A proof file's text: `json.dumps(document, indent=2, ensure_ascii=False)` and a
    newline, byte for byte. json indents in pure Python; orjson writes the same text
    several times faster, except for values it writes otherwise (a float below 1e-4 in
    size: `0.00001` for `1e-05`; NaN and infinities: null) or refuses (keys that are not
    strings, integers beyond 64 bits, lone surrogates). json's C encoder, which does not
    indent, tells those apart first: a document holding any is written by json as before."""
    try:
        compact = json.dumps(document, ensure_ascii=False, allow_nan=False)
    except (ValueError, TypeError, RecursionError):
        compact = None  # NaN, an infinity, or not plain JSON data
    if compact is not None and _EXPONENT_FLOAT.search(compact) is None:
        try:
            return orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n"
        except orjson.JSONEncodeError:
            pass
    return json.dumps(document, indent=2, ensure_ascii=False) + "\n"


# How json writes a float below 1e-4 in size ("1e-05"), which orjson writes otherwise; a
# string holding such text only sends its document to json.
_EXPONENT_FLOAT = re.compile(r"[0-9]e-")


def proof_directory(market_id: str) -> str:
    """The directory, under `daemon.proofs_dir`, of a market's proofs (`<checksum>.json`
    and `.md`): its id with anything but letters, digits, `_`, `.` and `-` as `_`."""
    return re.sub(r"[^A-Za-z0-9_.-]", "_", market_id)


def _attention(
    row: MarketRow,
    reason: str,
    since: float,
    *,
    proof: Mapping[str, Any],
    answer: str | None,
    review: int | None = None,
) -> dict[str, str | float]:
    """What `oracle_market_attention_timestamp_seconds` shows of a market awaiting a person.

    `answers`: the agents' answers at stake, grouped by outcome ("YES: alpha, gamma;
    NO: beta"); `proof`: the proof's path under the proofs directory, without extension.
    """
    votes = proof.get("votes") or proof.get("consensus", {}).get("votes") or []
    by_outcome: dict[str, list[str]] = {}
    for vote in votes:
        by_outcome.setdefault(str(vote.get("outcome")), []).append(str(vote.get("agent_id")))
    checksum = row.proof_checksum if reason == "disputed" else proof.get("checksum")
    return {
        "market": row.id,
        "venue": row.source,
        "reason": reason,
        "question": row.question,
        "answer": answer or "",
        "answers": "; ".join(f"{o}: {', '.join(a)}" for o, a in by_outcome.items()),
        "review": "" if review is None else str(review),
        "proof": f"{proof_directory(row.id)}/{checksum}" if checksum else "",
        "since": since,
    }
