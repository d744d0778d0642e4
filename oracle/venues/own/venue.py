"""The oracle contract as the daemon's market source and resolver.

Questions come from `QuestionRequested` events (the chain layer's scanner, its
checkpoint kept in the daemon's database and advanced only after the daemon stored the
questions). Answers go through the chain layer's transaction manager, whose intents are
kept in the same database, so a restarted daemon finds every transaction it may have
sent, and the proposal submitter's pre-send check never proposes a question twice.

Outcome encoding: binary YES = 0, NO = 1; categorical by index; INVALID = 65535. The
proof hash committed is `bytes20(sha256(proof))`, the first 20 bytes of the checksum.

A categorical question names its outcomes with a last line `Outcomes: A | B | C` in its
text (as many names as its outcome count, in index order); that line is taken off the
question the agents see. Without it, the outcomes are named by their indices.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from hexbytes import HexBytes

from oracle.chain.contracts import (
    AgentOracle,
    ConditionalTokensAdapter,
    QuestionView,
    Status,
    outcome_index,
    proof_hash,
)
from oracle.chain.intents import Intent, IntentState
from oracle.chain.rpc import RpcPool
from oracle.chain.txmanager import TxManager
from oracle.core.markets import MarketSpec
from oracle.core.timing import venue_window
from oracle.daemon.chain_parts import (
    ChainConnection,
    ConnectedVenue,
    chain_failure,
    intent_failure,
)
from oracle.daemon.ports import (
    Deliver,
    MarketRef,
    Receipt,
    Resolution,
    ResolutionStatus,
)
from oracle.errors import ChainError, ResolverError
from oracle.log import emit
from oracle.venues.own.scanner import MarketSource as QuestionScanner
from oracle.venues.own.scanner import RequestedQuestion
from oracle.venues.own.settings import ChainSourceConfig
from oracle.venues.own.submitter import Answer, ProposalSubmitter

logger = logging.getLogger("oracle.daemon.chain")
# On close, how long a batch in flight may still take: with every node down it would
# retry for `chain.rpc.call_deadline` and hold the stop past the drain (the daemon has
# already given its markets `daemon.drain_timeout`).
FLUSH_GRACE_SECONDS = 5.0


# `[^\S\n]*`, not `\s*`: over a run of newlines `\s*` backtracked quadratically (the
# text is anyone's); blank lines before the outcomes line go with the question's rstrip.
_OUTCOMES_LINE = re.compile(r"\n[^\S\n]*outcomes\s*:\s*(?P<names>[^\n]+?)\s*$", re.IGNORECASE)


def split_outcomes(text: str, default: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
    """(question without its `Outcomes:` line, outcome names) for a question's text."""
    match = _OUTCOMES_LINE.search(text)
    if match is None:
        return text, default
    names = tuple(n.strip() for n in match.group("names").split("|"))
    if len(names) != len(default) or len(set(names)) != len(names) or not all(names):
        return text, default
    return text[: match.start()].rstrip(), names


_ANSWERED = (Status.PROPOSED, Status.FINAL, Status.DISPUTED)


def _status(question_status: Status) -> ResolutionStatus:
    return {
        Status.REQUESTED: ResolutionStatus.OPEN,
        Status.PROPOSED: ResolutionStatus.PROPOSED,
        Status.DISPUTED: ResolutionStatus.DISPUTED,
        Status.FLAGGED: ResolutionStatus.DISPUTED,  # the owner's emergency path: wait
        Status.FINAL: ResolutionStatus.FINAL,
    }.get(question_status, ResolutionStatus.OPEN)


@dataclass(frozen=True)
class ChainParts:
    """What a chain venue works with, made from the `chain:` settings by the composition
    root (`oracle.app`) once the deployment and the signer proved usable."""

    pool: RpcPool
    manager: TxManager
    oracle: AgentOracle
    submitter: ProposalSubmitter
    scanner: QuestionScanner
    adapter_address: str | None


OpenChain = Callable[[], Awaitable[ChainParts]]


class ChainVenue(ConnectedVenue[ChainParts]):
    """Market source and resolver for one oracle contract."""

    def __init__(self, config: ChainSourceConfig, open_chain: OpenChain) -> None:
        self.name = config.name
        self.config = config
        self._gas_reported: set[str] = set()
        self._chain = ChainConnection(
            self.name, open_chain, logger, "chain.venue_started", self._started
        )

    def _started(self, parts: ChainParts) -> dict[str, str]:
        return {"oracle": parts.oracle.address, "reporter": parts.manager.address}

    @property
    def pool(self) -> RpcPool | None:
        return self._parts.pool if self._parts is not None else None

    @property
    def manager(self) -> TxManager | None:
        return self._parts.manager if self._parts is not None else None

    # -- MarketSource -------------------------------------------------------------------------

    async def poll(self, deliver: Deliver) -> list[str]:
        with self._source_failure():
            parts = await self._ready()
        oracle = parts.oracle

        async def handle(questions: list[RequestedQuestion]) -> None:
            specs = []
            views = await oracle.get_questions([q.question_id for q in questions])
            for question, view in zip(questions, views, strict=True):
                text, outcomes = split_outcomes(question.text, question.market().outcomes)
                specs.append(
                    MarketSpec(
                        source=self.name,
                        external_id=question.question_id,
                        question=text or "(empty question text)",
                        resolve_after=float(question.earliest_time),
                        window=venue_window(
                            float(question.earliest_time), "the contract's resolve_after"
                        ),
                        outcomes=outcomes,
                        details={
                            "question_id": question.question_id,
                            "requester": question.requester,
                            "outcome_count": question.outcome_count,
                            "liveness": question.liveness,
                            "callback": None if int(view.callback, 16) == 0 else view.callback,
                            "block_number": question.block_number,
                            "tx_hash": question.tx_hash,
                        },
                    )
                )
            await deliver(specs)

        with self._source_failure():
            await parts.scanner.poll(handle)
        return []

    async def answered_by_others(self) -> list[str]:
        """The questions someone disputed since the last call (`AnsweredByOthers`): on
        this contract only reporters answer, so a dispute is the others' word."""
        with self._source_failure():
            parts = await self._ready()
            return await parts.scanner.disputed(parts.manager.address)

    # -- Resolver -----------------------------------------------------------------------------

    async def propose(self, market: MarketRef, outcome: str, proof_checksum: str) -> Receipt:
        qid = bytes(HexBytes(market.details["question_id"]))
        try:
            parts = await self._ready()
            oracle, submitter = parts.oracle, parts.submitter
            answer = Answer(
                qid, outcome_index(outcome, market.outcomes), proof_hash(proof_checksum)
            )
            carrier, view = await self._submit(oracle, submitter, answer)
            on_chain = bytes(HexBytes(view.proof_hash))
            if view.status in _ANSWERED and on_chain == answer.proof_hash:
                return Receipt(
                    reference=await self._carrying_transaction(oracle, carrier, market),
                    final_after=float(view.deadline),
                    gas_used=self._gas_share(carrier),
                    details={"question_id": market.details["question_id"], "round": view.round},
                )
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        except ValueError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        if carrier is not None and carrier.state in (IntentState.REVERTED, IntentState.FAILED):
            raise intent_failure(self.name, "proposal", carrier)
        if view.status in _ANSWERED:
            # Someone (another reporter) answered first; ours cannot be placed this round.
            raise ResolverError(
                f"source {self.name}: question already carries another proposal "
                f"(proof {view.proof_hash})",
                retryable=False,
            )
        if carrier is not None and not carrier.final:
            raise ResolverError(
                f"source {self.name}: carried by transaction {carrier.latest.tx_hash} of "
                f"signer {carrier.sender} ({carrier.state.value}), not on-chain yet"
            )
        raise ResolverError(f"source {self.name}: the proposal is not on-chain yet")

    async def _submit(
        self, oracle: AgentOracle, submitter: ProposalSubmitter, answer: Answer
    ) -> tuple[Intent | None, QuestionView]:
        """The intent carrying our proposal (ours once final; another replica's as it
        stands), and the question as the chain shows it after that: its round guards
        reset detection (`state`), so it must be read, not taken from what we sent. A
        batch reads its questions once for all."""
        if self.config.batch:
            outcome = await submitter.enqueue(answer)
            return outcome.carriers[answer.question_id], outcome.questions[answer.question_id]
        intent = await submitter.propose(answer)
        return intent, await oracle.get_question(answer.question_id)

    async def _carrying_transaction(
        self, oracle: AgentOracle, carrier: Intent | None, market: MarketRef
    ) -> str:
        """The transaction that put the question's standing proposal on-chain: the intent
        that carried it, or, when no intent we know of did (recorded by a replica that
        died before it saw the receipt, or by an older version), the chain's own event."""
        inclusion = carrier.inclusion if carrier is not None else None
        if inclusion is not None and inclusion.status == 1:
            return inclusion.tx_hash
        found = await oracle.proposal_transaction(
            market.details["question_id"], int(market.details.get("block_number") or 0)
        )
        return found or "unknown"

    def _gas_share(self, carrier: Intent | None) -> int:
        """Our batch's gas, counted once: the first market to report it takes it all."""
        if carrier is None or carrier.inclusion is None or self.manager is None:
            return 0
        if carrier.sender.lower() != self.manager.address.lower():
            return 0  # another replica paid for it
        if carrier.inclusion.tx_hash in self._gas_reported:
            return 0
        self._gas_reported.add(carrier.inclusion.tx_hash)
        return carrier.inclusion.gas_used

    async def state(self, market: MarketRef) -> Resolution:
        try:
            view = await (await self._ready()).oracle.get_question(market.details["question_id"])
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        status = _status(view.status)
        submitted_round = market.submission.get("round")
        if (
            status is ResolutionStatus.OPEN
            and submitted_round is not None
            and view.round > submitted_round
        ):
            status = ResolutionStatus.RESET  # the arbiter reopened it for a new answer
        outcome = None
        if status is ResolutionStatus.FINAL:
            outcome = _outcome_name(view.outcome, market.outcomes)
        return Resolution(status, outcome, float(view.deadline) if view.deadline else None)

    async def settle(self, market: MarketRef) -> str | None:
        """Push the final answer to the question's callback: the reference of the `settle`
        that delivered it (or of the last one, once every attempt's callback failed: its
        consumer then reads `finalResult` itself); ResolverError while attempts remain."""
        qid = bytes(HexBytes(market.details["question_id"]))
        try:
            parts = await self._ready()
            settlement = await parts.submitter.settle(qid)
            adapter_address = parts.adapter_address
            if (
                self.config.report_payouts
                and adapter_address is not None
                and str(market.details.get("requester", "")).lower() == adapter_address.lower()
            ):
                adapter = ConditionalTokensAdapter(parts.pool, adapter_address)
                await parts.submitter.report_payouts(adapter, qid)
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        if settlement is None:
            return None
        intent = settlement.intent
        reference = None
        if intent is not None and intent.attempts:
            reference = intent.inclusion.tx_hash if intent.inclusion else intent.latest.tx_hash
        if settlement.delivered:
            return reference
        if settlement.attempts_left:
            raise ResolverError(
                f"source {self.name}: the callback did not take the answer "
                f"({settlement.attempts_left} more settle attempts)"
            )
        emit(logger, logging.WARNING, "chain.callback_undelivered", market=market.market_id)
        return f"undelivered:{reference}"

    async def aclose(self) -> None:
        if self._parts is not None and not await self._parts.submitter.drain(FLUSH_GRACE_SECONDS):
            # What the cut batch had recorded is resumed by the next start (`resume`); a
            # market it had not reached is still `submitting` and is delivered again.
            emit(logger, logging.WARNING, "chain.flush_cut", source=self.name)
        await self._chain.aclose()


def _outcome_name(index: int, outcomes: tuple[str, ...]) -> str:
    if index == 65535:
        return "INVALID"
    return outcomes[index] if index < len(outcomes) else str(index)
