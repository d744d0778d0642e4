"""Reality.eth as the daemon's market source and resolver: v3 (`RealityETH_v3_0`), v2.1
(`Realitio_v2_1`, `contract: v2.1`) or v3 with ERC-20 bonds (`RealityETH_ERC20_v3_0`,
`bond_token`): the bonds, caps and metrics are then in that token.

Markets come from `LogNewQuestion` events (the chain layer's `QuestionSource`: configured
askers, arbitrators and templates, checkpoint in the daemon's database, reorg rewind).
Each question becomes a market whose external id is the question id, whose question is
its title, whose outcomes are YES and NO for a bool question or the labels of a
single-select one (INVALID, `0xff…ff`, is open to the agents on every question, and an
agreed one goes as `invalid` says: answered with a bond, or to a person; TOO_EARLY,
Reality.eth's "answered too soon", only with `allow_unresolved`), due at its `opening_ts`
(before it nobody can answer). A uint, datetime or multiple-select question is a value
market (`oracle.core.values`; `encode_value` / `decode_value` as Reality.eth's tools
encode it). A question the daemon cannot read exactly is skipped with a line.

A question finalized as answered too soon is reopened (`reopen`) and the reopening
answered as the same market (every call follows `reopened_questions`, `_following`); a
bond war on our superseded answer may be offered to a person for arbitration by the
question's arbitrator (`arbitration`, `request_arbitration`, four-eyes).

`propose` answers through `RealityAnswerer` (one intent per round, `max_previous` the
bond replied to): the first answer posts the bond policy's `initial_wei` (the question's
`min_bond` when higher), a defence the doubled bond; both are weighed against the caps
first (`oracle.venues.reality.policy.cap_refusal`: a refusal is a `reality.bond_refused`
log line, `oracle_bond_refusals_total{venue,reason}` and a retried delivery). Nothing is
sent when the standing answer is already ours or the verdict's, when the question is
finalized or pending arbitration, or when someone else answered first: their answer is
recorded beside ours, with a `disagreement` when they differ (the daemon opens a review
item; with `counter_answer: after_review` and the question open, the receipt offers a
`counter_answer`). The daemon calls `propose`
only for a consensus to submit or a person's decision: review, research-again and
too-early verdicts never post a bond.

`state` follows the question at every watch (the receipt's window ends at once: the bond
game is played during the question's timeout): finalized is FINAL with the final answer
as an outcome; pending arbitration is DISPUTED; an answer that superseded ours is decided
by the bond policy (`after_superseded`): `defend` is reported as RESET, which sends the
market back to research and then to `propose`, which answers at double the bond; `review`
(no `defend`, or a defence past a cap) is reported as DISPUTED, the state in which the
daemon waits for someone else to settle the question and shows it to people
(`oracle_market_attention_timestamp_seconds{reason="disputed"}`); with `counter_answer:
after_review` and the question open, its receipt records the answer that superseded ours
(the round a defence answers over) and offers a `defend`: a person confirming it sends the
defence through `challenge`, declining leaves the question to finalize. `settle` claims
once the question is finalized: the history rebuilt from the logs, `claimWinnings`,
`withdraw`; a question that finalized on another's answer records our lost bond
(`reality.bond_lost`, `oracle_bonds_lost_total{reason="outanswered"}`).

`challenge` answers over another's answer once a person confirmed it in the review queue
(a counter-answer, or the defence of our superseded answer):
the question is read again (finalized, pending arbitration, or already showing the decided
answer: recorded, nothing sent), then the decided answer at the doubled bond (at least
the question's `min_bond`), within the same caps as any answer, with `max_previous` the
bond confirmed against: an answer that raced ours is not an error; the question is
recorded as it now stands (a new disagreement item when it still contradicts the decided
outcome). It is our answer from then on, so the bond policy follows it.

With `commit_reveal: true` every answer (first, defence, counter-answer) is sent as a
commitment (`submitAnswerCommitment`, the answer hashed with a nonce) and then revealed
(`submitAnswerReveal`) as soon as the commitment is included, so nobody can copy the
answer from the mempool. The nonce is never stored or logged: it is the hash of the
signer's deterministic EIP-712 signature over (chain, contract, question, answer, bond)
(`RealityAnswerer.commitment_nonce`), so a restarted daemon recomputes it; whenever the
question's last bonded entry is our unrevealed commitment, the venue reveals it first
(one reveal intent per commitment). The reveal must land within the question's timeout / 8
of the commitment: a daemon down longer loses that bond (`reality.reveal_missed`,
`oracle_bonds_lost_total{reason="reveal_missed"}`), raised as `AnswerLost`, which the
daemon hands to a person, never retrying it; the market records the lost commitment
(`answers_lost`), so a person's decision answers again over it and never tries to reveal
it. Claims count a revealed commitment as its answer.

With `claim_batch` above 1, `settle` claims the question with up to `claim_batch` - 1
other finalized questions of ours in one `claimMultipleAndWithdrawBalance`
(`_settle_batched`). A defence the bond caps refuse opens a review item even with
`counter_answer: never` (`_defence_refused`): nothing is offered or sent, a person is
told.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from decimal import Decimal
from typing import Any

from eth_utils.address import to_checksum_address
from hexbytes import HexBytes

from oracle.chain.checkpoint import CheckpointStore, InMemoryCheckpointStore
from oracle.chain.contracts import load_artifact
from oracle.chain.erc20 import Erc20
from oracle.chain.events import EventDecoder, address_topic
from oracle.chain.intents import BondHold, Intent, IntentState
from oracle.chain.rpc import RpcPool
from oracle.chain.scanner import LogScanner
from oracle.chain.settings import ScannerSettings
from oracle.chain.txmanager import TxManager
from oracle.core.amounts import ETH, Token, token_details
from oracle.core.bonds import Refusal
from oracle.core.markets import HIDDEN_CHARACTERS, VALUE_FORMAT, MarketSpec
from oracle.core.outcomes import InvalidPolicy
from oracle.core.scoring import Finality
from oracle.core.timing import venue_window
from oracle.daemon.chain_parts import (
    ChainConnection,
    ConnectedVenue,
    TokenBonds,
    chain_failure,
    intent_failure,
)
from oracle.daemon.metrics import DaemonMetrics
from oracle.daemon.ports import (
    Challenged,
    ChallengeSent,
    Deliver,
    MarketRef,
    Receipt,
    Resolution,
    ResolutionStatus,
)
from oracle.errors import (
    AnswerLost,
    ArbitrationRefused,
    BondRefused,
    ChainError,
    RealityQuestionError,
    ResolverError,
    RevealMissed,
)
from oracle.log import emit
from oracle.venues.reality.arbitration import ArbitrationRequester
from oracle.venues.reality.binding import (
    ARBITRATION_REQUEST,
    NATIVE,
    NEW_ANSWER,
    REALITY_ETH,
    AnswerLog,
    AnswerOutcome,
    AnswerSource,
    NewQuestion,
    QuestionSource,
    QuestionView,
    RealityAnswerer,
    RealityETH,
)
from oracle.venues.reality.policy import (
    ArbitrationPolicy,
    BondPolicy,
    after_superseded,
    arbitration_due,
    cap_refusal,
    defence_refusal,
    first_bond,
    superseded,
)
from oracle.venues.reality.reopen import reopen_question, reopened_as
from oracle.venues.reality.rules import (
    INVALID,
    NO,
    NULL_HASH,
    TOO_EARLY,
    TOO_SOON_ANSWER,
    YES,
    Phase,
    QuestionKind,
    RealityQuestion,
    claim_payouts,
    decode_value,
    encode_value,
    parse_question,
    value_format_of,
)
from oracle.venues.reality.settings import RealitySourceConfig

logger = logging.getLogger("oracle.daemon.reality")


def market_outcomes(question: RealityQuestion, *, allow_unresolved: bool) -> tuple[str, ...]:
    """What the agents may answer (INVALID is reserved, so not listed: it is open to them
    through `RealityVenue.invalid_policy`): YES and NO, a single-select's labels, a
    multiple-select's labels (the options of the set they answer), nothing for a uint or
    datetime (they answer a value, `value_format_of`). A label that reads as a reserved
    answer is refused: its verdict could not be told apart. TOO_EARLY is added with
    `allow_unresolved`, except to a multiple-select (its labels are options, not
    answers)."""
    if question.kind == QuestionKind.BOOL:
        names: tuple[str, ...] = (YES, NO)
    elif question.kind == QuestionKind.SINGLE_SELECT:
        names = question.outcomes
        for index, label in enumerate(names):
            if label.upper() in (INVALID, TOO_EARLY):
                raise RealityQuestionError(
                    f"reality question: outcomes: label {index} reads as the reserved answer "
                    f"{label.upper()}"
                )
    elif question.kind == QuestionKind.MULTIPLE_SELECT:
        return question.outcomes
    else:
        names = ()
    return (*names, TOO_EARLY) if allow_unresolved else names


def outcome_of_answer(question: RealityQuestion, answer: bytes) -> str:
    """The outcome a bytes32 answer stands for: a label, a value's canonical spelling
    (`decode_value`), or `answer:0x…` when it names none."""
    try:
        return decode_value(question, answer)
    except RealityQuestionError:
        return f"answer:{HexBytes(answer).to_0x_hex()}"


def _same(a: str, b: str) -> bool:
    return a.lower() == b.lower()


def _ours_on_question(history: list[AnswerLog], us: str) -> int:
    return sum(h.entry.bond for h in history if _same(h.entry.answerer, us))


async def revealed_commitments(reality: RealityETH, history: list[AnswerLog]) -> dict[bytes, bytes]:
    """The commitments of `history` that were revealed, each to its answer."""
    revealed: dict[bytes, bytes] = {}
    for log in history:
        if log.entry.is_commitment:
            _, is_revealed, answer = await reality.read("commitments", log.entry.answer)
            if is_revealed:
                revealed[log.entry.answer] = bytes(answer)
    return revealed


@dataclass(frozen=True)
class RealityParts:
    """What the venue works with, made by the composition root when it starts."""

    pool: RpcPool
    manager: TxManager
    reality: RealityETH
    answerer: RealityAnswerer
    source: QuestionSource
    start_block: int
    scanner_settings: ScannerSettings = field(default_factory=ScannerSettings)
    # Where the scan of others' answers keeps its position (the daemon's database).
    checkpoints: CheckpointStore = field(default_factory=InMemoryCheckpointStore)
    # The chain's own token (`chains[].native_token`): what native bonds are named in.
    native_token: Token = ETH


OpenReality = Callable[[], Awaitable[RealityParts]]


@dataclass(frozen=True)
class Holdings:
    """Our bonds on questions not finalized (at risk), and what we won and have not
    withdrawn yet (claimable: finalized questions not claimed, and the contract's balance
    for us), in wei."""

    at_risk: int
    claimable: int


class _OthersAnswers:
    """The questions someone other than this signer answered or sent to arbitration: the
    contract's `LogNewAnswer` and `LogNotifyOfArbitrationRequest` events (of every
    question: the node cannot filter by asker), ours dropped, scanned behind the
    confirmation depth from checkpoints in the daemon's database."""

    def __init__(self, parts: RealityParts) -> None:
        self._us = parts.manager.address.lower()
        name = parts.source.scanner.name
        self._source = AnswerSource(
            parts.pool,
            parts.reality.address,
            parts.checkpoints,
            parts.scanner_settings,
            start_block=parts.start_block,
            name=f"{name}:others-answers",
        )
        self._arbitration = LogScanner(
            parts.pool,
            address=parts.reality.address,
            decoder=EventDecoder(load_artifact(REALITY_ETH).abi, ARBITRATION_REQUEST),
            checkpoints=parts.checkpoints,
            name=f"{name}:arbitration-requests",
            settings=parts.scanner_settings,
            start_block=parts.start_block,
        )

    async def poll(self) -> list[str]:
        found = {
            HexBytes(answer.question_id).to_0x_hex(): None
            for answer in await self._source.poll()
            if answer.entry.answerer.lower() != self._us
        }
        for log in await self._arbitration.poll():
            if str(log.args["user"]).lower() != self._us:
                found[HexBytes(log.args["question_id"]).to_0x_hex()] = None
        return list(found)


class _OurAnswers:
    """The questions this signer answered and has not been paid out for: its `LogNewAnswer`
    events (scanned from the venue's start block, again after a restart: the position is
    kept in memory on purpose), dropped once claimed or lost."""

    def __init__(self, parts: RealityParts) -> None:
        self._reality = parts.reality
        self._us = parts.manager.address
        self._from = parts.start_block
        self._scanner = LogScanner(
            parts.pool,
            address=parts.reality.address,
            decoder=EventDecoder(load_artifact(REALITY_ETH).abi, NEW_ANSWER, strings_as_bytes=True),
            checkpoints=InMemoryCheckpointStore(),
            name="reality-our-answers",
            # Unconfirmed answers count too: a cap errs on the side of posting less.
            settings=parts.scanner_settings.model_copy(update={"confirmations": 0}),
            start_block=parts.start_block,
            topics=[None, address_topic(parts.manager.address)],  # user: us
        )
        self._bonds: dict[str, dict[tuple[str, int], int]] = {}  # question -> log -> bond

    async def payout(self, view: QuestionView) -> int:
        """What claiming the finalized question `view` credits us (0 once claimed)."""
        if view.history_hash == NULL_HASH:
            return 0
        history = await self._reality.history(view.question_id, self._from)
        revealed = await revealed_commitments(self._reality, history)
        credits = claim_payouts(
            [h.entry for h in history],
            best_answer=view.best_answer,
            final_bond=view.bond,
            bounty=view.bounty,
            revealed=revealed,
            bounty_queued=self._reality.version == "v2.1",
        )
        return credits.get(self._us.lower(), 0)

    def questions(self) -> list[str]:
        """The questions we answered and were not paid out for yet (as last scanned)."""
        return list(self._bonds)

    async def holdings(self) -> Holdings:
        for log in await self._scanner.poll():
            answer = AnswerLog.from_log(log)
            question = HexBytes(answer.question_id).to_0x_hex()
            # Keyed by log: a log seen twice (two polls at once, a rewind) counts once.
            self._bonds.setdefault(question, {})[(log.tx_hash, log.log_index)] = answer.entry.bond
        questions = list(self._bonds)
        at_risk = claimable = 0
        for view in await self._reality.get_questions(questions):
            if view.phase != Phase.FINALIZED:
                at_risk += sum(self._bonds.get(view.id_hex, {}).values())
                continue
            won = await self.payout(view)
            if won == 0:  # claimed, or lost: nothing more will come of it
                self._bonds.pop(view.id_hex, None)
            claimable += won
        claimable += await self._reality.balance_of(self._us)
        return Holdings(at_risk, claimable)


class RealityVenue(ConnectedVenue[RealityParts]):
    """Market source and resolver for one Reality.eth contract (v3, v2.1 or ERC-20 v3)."""

    def __init__(
        self,
        config: RealitySourceConfig,
        open_chain: OpenReality,
        metrics: DaemonMetrics | None = None,
    ) -> None:
        self.name = config.name
        self.config = config
        bond = config.bond
        self.policy = BondPolicy(
            initial=bond.initial_wei,
            defend=bond.defend,
            max_per_question=bond.max_per_question_wei,
            max_total=bond.max_total_wei,
        )
        self._chain = ChainConnection(
            self.name,
            open_chain,
            logger,
            "reality.venue_started",
            self._started,
            gauges=lambda parts: self._report_bonds(),
        )
        self._metrics = metrics
        # The bond currency: `native`, or the ERC-20 token (RealityETH_ERC20_v3_0).
        self.currency = (
            NATIVE if config.bond_token is None else to_checksum_address(config.bond_token)
        )
        self._ours: _OurAnswers | None = None
        self._others: _OthersAnswers | None = None
        # Its gauges are this venue's own (`_report_bonds`); no balance floor here.
        self._bond_token = TokenBonds(None, self.name, Decimal(0))
        self._superseded_seen: set[tuple[str, int]] = set()  # (market, bond) reported
        self._claims_counted: set[str] = set()
        self._batch_claimed: dict[str, str] = {}  # question -> the batched claim's transaction
        self._losses_counted: set[str] = set()
        self._arbitration: ArbitrationRequester | None = None
        self._arbitration_policy = (
            ArbitrationPolicy(
                max_fee=config.arbitration.max_fee_wei,
                bond_threshold=config.arbitration.bond_threshold_wei,
            )
            if config.arbitration.max_fee_wei is not None
            else None
        )

    # -- connection ---------------------------------------------------------------------------

    def _started(self, parts: RealityParts) -> dict[str, str]:
        self._ours = _OurAnswers(parts)
        self._others = _OthersAnswers(parts)
        arbitration = self.config.arbitration
        if arbitration.request != "never" and arbitration.max_fee_wei is not None:
            self._arbitration = ArbitrationRequester(
                parts.manager, parts.reality, max_fee=arbitration.max_fee_wei
            )
        return {"contract": parts.reality.address, "answerer": parts.manager.address}

    async def _report_bonds(self) -> Holdings:
        """Scan our answers into the signer's bond budget: what is at stake in the bond
        currency over every venue of the signer (on chain and reserved), and claimable here.
        The gauge shows this venue's bonds on chain and reserved; with an ERC-20 bond token,
        also the signer's balance of it and what the contract may still take of it (zero
        between answers: each approval is exactly one bond)."""
        assert self._ours is not None
        assert self._parts is not None
        ours = self._ours
        scanned: list[Holdings] = []

        async def scan() -> dict[str, int]:
            scanned.append(await ours.holdings())
            return {self.currency: scanned[-1].at_risk}

        book = await self._parts.manager.scan_bonds(self._parts.reality.address.lower(), scan)
        on_chain, reserved = book.at_stake(self.currency)
        holdings = Holdings(on_chain + reserved, scanned[-1].claimable)
        if self._metrics is not None:
            mine = book.mine.get(self.currency, 0)
            self._metrics.bonds_at_risk.labels(self.name, self.currency).set(mine)
            self._metrics.bonds_claimable.labels(self.name, self.currency).set(holdings.claimable)
            token = self._parts.reality.bond_token
            if token is not None:
                erc20 = Erc20(self._parts.pool, token)
                us = self._parts.manager.address
                balance = await erc20.balance_of(us)
                allowance = await erc20.allowance(us, self._parts.reality.address)
                self._metrics.bond_balance.labels(self.name, token).set(balance)
                self._metrics.bond_allowance.labels(self.name, token).set(allowance)
        return holdings

    # -- MarketSource -------------------------------------------------------------------------

    async def poll(self, deliver: Deliver) -> list[str]:
        with self._source_failure():
            parts = await self._ready()
        skipped: list[str] = []

        async def handle(questions: list[NewQuestion]) -> None:
            named = await self._bond_currency(parts)
            specs = []
            for asked in questions:
                try:
                    spec = self._market(parts, asked)
                    specs.append(replace(spec, details={**spec.details, **named}))
                except RealityQuestionError as error:
                    skipped.append(f"question {asked.id_hex}: {error}")
            await deliver(specs)

        with self._source_failure():
            await parts.source.poll(handle)
        return skipped

    async def _bond_currency(self, parts: RealityParts) -> dict[str, object]:
        """What each market records of the bond currency, for people
        (`oracle.core.amounts`): the chain's native token, or the ERC-20 bond token's
        address with its symbol and decimals, read once."""
        token = parts.reality.bond_token
        if token is None:
            native = parts.native_token
            return token_details(native.symbol, native.decimals)
        return {"currency": token, **await self._bond_token.named(parts.pool, token)}

    def invalid_policy(self, market: MarketRef) -> InvalidPolicy | None:
        """The port's `InvalidAnswers`: every question this venue answers takes Invalid
        (`0xff…ff`); an agreed INVALID goes as the source's `invalid` says."""
        return self.config.invalid

    async def answered_by_others(self) -> list[str]:
        """The questions others answered since the last call (`AnsweredByOthers`)."""
        with self._source_failure():
            await self._ready()
            assert self._others is not None
            return await self._others.poll()

    def _market(self, parts: RealityParts, asked: NewQuestion) -> MarketSpec:
        question = asked.question(self.config.templates)
        outcomes = market_outcomes(question, allow_unresolved=self.config.allow_unresolved)
        values = value_format_of(question)
        criteria = f"A Reality.eth {question.kind.value} question"
        if question.category:
            criteria += f" in the category {question.category}"
        criteria += "; answered as things stand when it opens."
        return MarketSpec(
            source=self.name,
            external_id=asked.id_hex,
            question=question.title,
            criteria=criteria,
            # Nobody can answer before opening_ts; 0 means open from the moment it was asked.
            resolve_after=float(asked.opening_ts or asked.created),
            # A question open from the start says nothing of when its outcome is final:
            # its words do.
            window=venue_window(float(asked.opening_ts), "Reality.eth opening_ts")
            if asked.opening_ts
            else None,
            outcomes=outcomes,
            details={
                "contract": parts.reality.address,
                "question_id": asked.id_hex,
                "template_id": asked.template_id,
                "text": asked.text.decode("utf-8"),  # UTF-8: it was read as a question
                "kind": question.kind.value,
                "category": question.category,
                "language": question.language,
                "asker": asked.asker,
                "arbitrator": asked.arbitrator,
                "timeout": asked.timeout,
                "opening_ts": asked.opening_ts,
                "created": asked.created,
                "block_number": asked.block_number,
                "tx_hash": asked.tx_hash,
                # Counted on by discovery (`oracle.core.markets.clean_spec`).
                **({HIDDEN_CHARACTERS: question.hidden} if question.hidden else {}),
                # A uint, datetime or multiple-select is answered by a value.
                **({VALUE_FORMAT: values.model_dump(exclude_none=True)} if values else {}),
            },
            awaits_settlement=self.config.claim,
        )

    # -- Resolver -----------------------------------------------------------------------------

    def _question(self, details: dict[str, Any]) -> RealityQuestion:
        template = int(details["template_id"])
        return parse_question(template, details["text"], templates={template})

    def _encoded(self, market: MarketRef, outcome: str) -> tuple[RealityQuestion, bytes]:
        """The market's question and `outcome` as its answer (bytes32); a ResolverError,
        not retried, when the question cannot take it."""
        try:
            question = self._question(market.details)
            answer = encode_value(question, outcome, allow_too_soon=self.config.allow_unresolved)
        except RealityQuestionError as error:
            raise ResolverError(f"source {self.name}: {error}", retryable=False) from None
        return question, answer

    async def propose(self, market: MarketRef, outcome: str, proof_checksum: str) -> Receipt:
        """Answer `outcome` on the market's question, once per round (see the module
        docstring); the proof checksum stays with the market: Reality.eth has no place
        for it."""
        market = await self._following(market)
        qid = market.details["question_id"]
        question, answer = self._encoded(market, outcome)
        try:
            parts = await self._ready()
            # A round someone else took first (caught before sending, or by max_previous)
            # is not an error: decided again at once on what the question shows now.
            for _ in range(2):
                receipt = await self._answer_round(parts, market, question, answer, outcome)
                if receipt is not None:
                    return receipt
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        raise ResolverError(
            f"source {self.name}: question {qid}: others took two rounds in a row while we "
            "answered; deciding again at the next attempt"
        )

    async def _answer_round(
        self,
        parts: RealityParts,
        market: MarketRef,
        question: RealityQuestion,
        answer: bytes,
        outcome: str,
    ) -> Receipt | None:
        """Answer the round the question is at, or record the answer that stands; None
        when someone else took the round first."""
        qid = market.details["question_id"]
        us = parts.manager.address
        view = await parts.reality.get_question(qid)
        if view.phase in (Phase.NOT_ASKED, Phase.NOT_OPEN):
            raise ResolverError(
                f"source {self.name}: question {qid} is {view.phase.value} "
                f"(opens at {view.opening_ts}, now {view.now})"
            )
        history = await parts.reality.history(qid, market.details["block_number"])
        if await self._reveal_pending(parts, market, history, answer):
            view = await parts.reality.get_question(qid)
        ours = _ours_on_question(history, us)
        stands = view.answered and view.best_answer == answer
        defending = view.answered and ours > 0 and self.policy.defend
        if view.phase != Phase.OPEN or stands or (view.answered and not defending):
            return await self._standing(
                parts, question, view, history, answer=answer, outcome=outcome
            )
        # Unanswered with a bond: our commitment was lost unrevealed (a person decided to
        # answer again); the contract wants at least double its bond.
        bond = (
            view.next_bond
            if view.answered
            else max(first_bond(self.policy, view.min_bond), view.next_bond)
        )
        key = self._round_key(parts, qid, view.bond)
        holds = []
        if await parts.manager.intent(key) is None:
            holds.append(await self._guard(parts, qid, bond, ours))
        try:
            with parts.manager.bonded(key, holds):
                result = await self._send_round(parts, qid, answer, planned=view.bond, bond=bond)
        except BondRefused as refused:
            raise self._refused(refused, qid) from None
        if result.superseded:
            emit(
                logger,
                logging.INFO,
                "reality.round_taken",
                source=self.name,
                market=market.market_id,
                round=view.bond,
                state=result.intent.state,
            )
            return None
        if not result.answered:
            intent = result.intent
            raise ResolverError(
                f"source {self.name}: question {qid}: the answer ended {intent.state.value}: "
                f"{intent.error or 'no reason'}"
            )
        emit(
            logger,
            logging.INFO,
            "reality.answered",
            source=self.name,
            market=market.market_id,
            outcome=outcome,
            bond=result.bond,
            round=result.planned_bond,
        )
        history = await parts.reality.history(qid, market.details["block_number"])
        return self._receipt(
            result.question, history, answer=answer, outcome=outcome, intent=result.intent, us=us
        )

    def _round_key(self, parts: RealityParts, qid: str, planned: int) -> str:
        """The intent key of our answer (or commitment) over `planned`."""
        if self.config.commit_reveal:
            return parts.answerer.commit_key(qid, planned)
        return parts.answerer.answer_key(qid, planned)

    async def _send_round(
        self, parts: RealityParts, qid: str, answer: bytes, *, planned: int, bond: int
    ) -> AnswerOutcome:
        """Answer over `planned` in the open, or (`commit_reveal`) commit, then reveal at
        once; the outcome as `RealityAnswerer.answer` reports it."""
        if not self.config.commit_reveal:
            return await parts.answerer.answer(qid, answer, planned_bond=planned, bond=bond)
        result = await parts.answerer.commit(qid, answer, planned_bond=planned, bond=bond)
        if not result.answered:
            return result
        await self._reveal(parts, qid, answer, result.bond)
        return replace(result, question=await parts.reality.get_question(qid))

    async def _reveal_pending(
        self, parts: RealityParts, market: MarketRef, history: list[AnswerLog], answer: bytes
    ) -> bool:
        """Reveal our commitment when it is the question's last bonded entry and not
        revealed yet (a crash between commitment and reveal); True when it revealed. A
        commitment the market records as lost (a person saw it) is left alone."""
        if not self.config.commit_reveal:
            return False
        bonded = [h for h in history if h.entry.bond > 0]
        if not bonded:
            return False
        last = bonded[-1].entry
        if not (last.is_commitment and _same(last.answerer, parts.manager.address)):
            return False
        lost = market.submission.get("answers_lost", [])
        if any(int(record.get("bond", -1)) == last.bond for record in lost):
            return False
        _, is_revealed, _ = await parts.reality.read("commitments", last.answer)
        if is_revealed:
            return False
        await self._reveal(parts, market.details["question_id"], answer, last.bond)
        return True

    async def _reveal(self, parts: RealityParts, qid: str, answer: bytes, bond: int) -> None:
        """Reveal our commitment of `answer` with `bond`, once (the nonce is recomputed from
        the signer, never stored or logged). One that cannot be revealed any more (its
        window passed) is `AnswerLost`: recorded, never tried again."""
        try:
            intent = await parts.answerer.reveal(qid, answer, bond)
        except RevealMissed as error:
            emit(
                logger,
                logging.ERROR,
                "reality.reveal_missed",
                source=self.name,
                question=qid,
                bond=bond,
                reason=error.reason,
            )
            if self._metrics is not None:
                self._metrics.bonds_lost.labels(self.name, self.currency, "reveal_missed").inc(bond)
            raise AnswerLost(
                f"source {self.name}: our commitment on question {qid} with a bond of {bond} "
                f"wei can no longer be revealed ({error.reason}): the bond is lost",
                {"kind": "commitment_unrevealed", "question_id": qid, "bond": bond},
            ) from None
        if intent.state not in (IntentState.CONFIRMED, IntentState.SKIPPED):
            raise ResolverError(
                f"source {self.name}: question {qid}: the reveal ended {intent.state.value}: "
                f"{intent.error or 'no reason'}"
            )
        emit(
            logger,
            logging.INFO,
            "reality.revealed",
            source=self.name,
            question=qid,
            bond=bond,
            state=intent.state,
        )

    async def _guard(self, parts: RealityParts, qid: str, bond: int, ours: int) -> BondHold:
        """Refuse (ResolverError, retried later) a bond the caps do not allow as things
        stand; else the bond to reserve when its intent is recorded, where the signer's
        bond budget weighs it again atomically (answers being sent at the same time, by
        any venue or replica, count against the total cap)."""
        holdings = await self._report_bonds()
        refusal = cap_refusal(
            self.policy, bond=bond, ours_on_question=ours, at_risk=holdings.at_risk
        )
        if refusal is not None:
            raise self._bond_refused(logger, "reality.bond_refused", refusal, question=qid)
        return BondHold(
            scope=parts.reality.address.lower(),
            currency=self.currency,
            amount=bond,
            stake=ours + bond,
            max_per_request=self.policy.max_per_question,
            max_outstanding=self.policy.max_total,
            per_request_reason="per_question_cap",
            outstanding_reason="total_cap",
        )

    def _refused(self, refused: BondRefused, qid: str) -> ResolverError:
        """The bond budget refused the bond when its intent was recorded."""
        refusal = Refusal(refused.reason, refused.detail)
        return self._bond_refused(logger, "reality.bond_refused", refusal, question=qid)

    async def _standing(
        self,
        parts: RealityParts,
        question: RealityQuestion,
        view: QuestionView,
        history: list[AnswerLog],
        *,
        answer: bytes,
        outcome: str,
    ) -> Receipt:
        """Nothing sent: the answer that stands now, ours or someone else's, recorded."""
        us = parts.manager.address
        # The last answer with a bond (an arbitrator's ruling is an entry with none).
        bonded = [h for h in history if h.entry.bond > 0]
        last = bonded[-1] if bonded else None
        if last is not None and view.best_answer == answer and _same(last.entry.answerer, us):
            previous = bonded[-2].entry.bond if len(bonded) > 1 else 0
            round_key = (
                parts.answerer.commit_key if last.entry.is_commitment else parts.answerer.answer_key
            )
            intent = await parts.manager.intent(round_key(view.question_id, previous))
            return self._receipt(
                view, history, answer=answer, outcome=outcome, intent=intent, us=us
            )
        details = self._details(view, history, answer, outcome, us)
        if last is None:  # finalized or frozen without an answer: nothing to compare
            return Receipt(
                reference=f"unanswered:{view.id_hex}",
                final_after=float(view.finalize_ts or view.now),
                details=details,
            )
        theirs = outcome_of_answer(question, view.best_answer)
        agrees = view.best_answer == answer
        details.update(
            {
                "answered_by_other": True,
                "answerer": last.entry.answerer,
                "their_outcome": theirs,
                "agrees": agrees,
            }
        )
        disagreement = None
        if not agrees:
            disagreement = (
                f"{last.entry.answerer} answered {theirs} (bond {view.bond} wei) on Reality.eth "
                f"question {view.id_hex}, which is {view.phase.value}; our verdict is {outcome}"
            )
        offer = (
            "counter_answer"
            if disagreement is not None
            and self.config.counter_answer == "after_review"
            and view.phase == Phase.OPEN
            else None
        )
        return Receipt(
            reference=f"answered-by:{last.entry.answerer}",
            final_after=self._watch_from(view),
            details=details,
            disagreement=disagreement,
            challenge=offer,
        )

    async def challenge(self, market: MarketRef, outcome: str) -> Challenged:
        """Answer `outcome` over another's answer, a person having confirmed it (see the
        module docstring): once per round. A confirmed arbitration offer requests
        arbitration instead (`request_arbitration`)."""
        market = await self._following(market)
        if market.submission.get("challenge") == "arbitrate":
            return await self.request_arbitration(market, outcome)
        if self.config.counter_answer != "after_review":
            raise ResolverError(
                f"source {self.name}: counter_answer is {self.config.counter_answer}: "
                "nothing is answered over others",
                retryable=False,
            )
        qid = market.details["question_id"]
        question, answer = self._encoded(market, outcome)
        try:
            parts = await self._ready()
            us = parts.manager.address
            view = await parts.reality.get_question(qid)
            history = await parts.reality.history(qid, market.details["block_number"])
            # The round confirmed against: the bond their answer stood at when recorded
            # (a retry after a crash finds its intent under the same key).
            planned = int(market.submission.get("bond_seen", view.bond))
            key = self._round_key(parts, qid, planned)
            recorded = await parts.manager.intent(key)
            if recorded is not None and await self._reveal_pending(parts, market, history, answer):
                view = await parts.reality.get_question(qid)
            if recorded is None:
                moot = self._counter_moot(view, answer, planned)
                if moot is not None:
                    emit(
                        logger, logging.INFO, "reality.counter_moot", source=self.name, reason=moot
                    )
                    return Challenged(
                        None,
                        moot,
                        await self._standing(
                            parts, question, view, history, answer=answer, outcome=outcome
                        ),
                    )
                bond = view.next_bond
                holds = [await self._guard(parts, qid, bond, _ours_on_question(history, us))]
            else:
                bond = parts.reality.bond_of(recorded.data, recorded.value)
                holds = []
            try:
                with parts.manager.bonded(key, holds):
                    result = await self._send_round(parts, qid, answer, planned=planned, bond=bond)
            except BondRefused as refused:
                raise self._refused(refused, qid) from None
            if not result.answered and not result.superseded:
                intent = result.intent
                raise ResolverError(
                    f"source {self.name}: question {qid}: the counter-answer ended "
                    f"{intent.state.value}: {intent.error or 'no reason'}"
                )
            view = await parts.reality.get_question(qid)
            history = await parts.reality.history(qid, market.details["block_number"])
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        if result.superseded:
            reason = (
                f"another answer came first at bond {view.bond} wei on question {qid}: "
                "nothing of ours stands; the question is recorded as it is now"
            )
            emit(logger, logging.INFO, "reality.counter_raced", source=self.name, reason=reason)
            return Challenged(
                None,
                reason,
                await self._standing(
                    parts, question, view, history, answer=answer, outcome=outcome
                ),
            )
        emit(
            logger,
            logging.INFO,
            "reality.counter_answered",
            source=self.name,
            market=market.market_id,
            outcome=outcome,
            bond=result.bond,
            round=result.planned_bond,
        )
        receipt = self._receipt(
            result.question, history, answer=answer, outcome=outcome, intent=result.intent, us=us
        )
        return Challenged(
            ChallengeSent.ANSWERED,
            f"answered {outcome} over their answer at a bond of {result.bond} wei "
            f"(theirs {result.planned_bond})",
            receipt,
        )

    @staticmethod
    def _counter_moot(view: QuestionView, answer: bytes, planned: int) -> str | None:
        """Why answering over the standing answer makes no sense now, or None."""
        if view.phase != Phase.OPEN:
            return f"question {view.id_hex} is {view.phase.value}: nothing was sent"
        if view.best_answer == answer:
            return f"question {view.id_hex} already shows the decided answer: nothing was sent"
        if view.bond != planned:
            return (
                f"question {view.id_hex} moved on since it was confirmed (bond {planned} -> "
                f"{view.bond} wei): nothing was sent"
            )
        return None

    def _details(
        self,
        view: QuestionView,
        history: list[AnswerLog],
        answer: bytes,
        outcome: str,
        us: str,
    ) -> dict[str, Any]:
        return {
            "question_id": view.id_hex,
            "answer": HexBytes(answer).to_0x_hex(),
            "our_outcome": outcome,
            "best_answer": HexBytes(view.best_answer).to_0x_hex(),
            "bond_seen": view.bond,
            "ours_on_question": _ours_on_question(history, us),
            "finalize_ts": view.finalize_ts,
            "signer": us,  # who answers (or would have): the track record's signer
        }

    @staticmethod
    def _watch_from(view: QuestionView) -> float:
        # The window "ends" at once: the watch follows the question from now on, since a
        # counter-answer can come at any time before it finalizes.
        return float(view.finalize_ts if view.phase == Phase.FINALIZED else view.now)

    def _receipt(
        self,
        view: QuestionView,
        history: list[AnswerLog],
        *,
        answer: bytes,
        outcome: str,
        intent: Intent | None,
        us: str,
    ) -> Receipt:
        """Our answer stands: where it went (our transaction, else its log's)."""
        inclusion = intent.inclusion if intent is not None else None
        ours_sent = intent is not None and inclusion is not None and _same(intent.sender, us)
        details = self._details(view, history, answer, outcome, us)
        bonded = [h for h in history if h.entry.bond > 0]
        details.update({"answerer": us, "bond": bonded[-1].entry.bond if bonded else 0})
        reference = (
            inclusion.tx_hash
            if inclusion is not None
            else (bonded[-1].tx_hash if bonded else f"answered:{view.id_hex}")
        )
        return Receipt(
            reference=reference,
            final_after=self._watch_from(view),
            gas_used=inclusion.gas_used if ours_sent and inclusion is not None else 0,
            details=details,
        )

    async def state(self, market: MarketRef) -> Resolution:
        market = await self._following(market)
        qid = market.details["question_id"]
        try:
            question = self._question(market.details)
        except RealityQuestionError as error:
            raise ResolverError(f"source {self.name}: {error}", retryable=False) from None
        try:
            await self._ready()
            assert self._parts is not None
            view = await self._parts.reality.get_question(qid)
            if view.phase == Phase.FINALIZED and view.best_answer == TOO_SOON_ANSWER:
                return await self._after_too_soon(market, view)
            if view.phase == Phase.FINALIZED:
                outcome = outcome_of_answer(question, view.best_answer)
                return Resolution(
                    ResolutionStatus.FINAL,
                    outcome,
                    float(view.finalize_ts),
                    Finality.REALITY_FINALIZATION,
                )
            if view.phase == Phase.PENDING_ARBITRATION:
                return Resolution(
                    ResolutionStatus.DISPUTED,
                    reason=f"arbitration was requested on question {qid}: it is frozen",
                )
            if not view.answered:
                return Resolution(ResolutionStatus.OPEN)
            submission = market.submission
            if not superseded(
                our_answer=bytes(HexBytes(submission.get("answer", "0x"))),
                ours_on_question=int(submission.get("ours_on_question", 0)),
                seen_bond=int(submission.get("bond_seen", 0)),
                bond=view.bond,
                best_answer=view.best_answer,
            ):
                return Resolution(ResolutionStatus.PROPOSED, None, float(view.finalize_ts))
            holdings = await self._report_bonds()
            arbitration = await self._arbitration_offer(market, question, view, holdings)
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        if arbitration is not None:
            return arbitration
        decision, why = after_superseded(
            self.policy,
            current_bond=view.bond,
            ours_on_question=int(submission.get("ours_on_question", 0)),
            at_risk=holdings.at_risk,
        )
        theirs = outcome_of_answer(question, view.best_answer)
        reason = (
            f"our {submission.get('our_outcome')} was superseded by {theirs} at a bond of "
            f"{view.bond} wei: {why}"
        )
        if (market.market_id, view.bond) not in self._superseded_seen:
            self._superseded_seen.add((market.market_id, view.bond))
            if self._metrics is not None:
                self._metrics.answers_superseded.labels(self.name, decision).inc()
            emit(
                logger,
                logging.WARNING,
                "reality.superseded",
                source=self.name,
                market=market.market_id,
                decision=decision,
                reason=reason,
            )
        if decision == "defend":
            return Resolution(ResolutionStatus.RESET, reason=reason)
        offer = None
        refusal = defence_refusal(
            self.policy,
            current_bond=view.bond,
            ours_on_question=int(submission.get("ours_on_question", 0)),
            at_risk=holdings.at_risk,
        )
        try:
            if self.config.counter_answer == "after_review" and view.phase == Phase.OPEN:
                offer = await self._defence_offer(market, question, view, theirs, reason)
            elif refusal is not None and view.phase == Phase.OPEN:
                offer = await self._defence_refused(market, question, view, theirs, reason)
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        return Resolution(
            ResolutionStatus.DISPUTED,
            None,
            float(view.finalize_ts),
            reason=reason,
            receipt=offer,
        )

    async def _defence_offer(
        self,
        market: MarketRef,
        question: RealityQuestion,
        view: QuestionView,
        theirs: str,
        reason: str,
    ) -> Receipt:
        """The question as it stands after another answer superseded ours, offering a
        person a defence (`counter_answer: after_review`): what the market records (the
        round to answer over is the bond seen now) and the review item's disagreement."""
        assert self._parts is not None
        history = await self._parts.reality.history(
            market.details["question_id"], market.details["block_number"]
        )
        bonded = [h for h in history if h.entry.bond > 0]
        them = bonded[-1].entry.answerer if bonded else "another answerer"
        ours = _ours_on_question(history, self._parts.manager.address)
        details = {
            "best_answer": HexBytes(view.best_answer).to_0x_hex(),
            "bond_seen": view.bond,
            "ours_on_question": ours,
            "finalize_ts": view.finalize_ts,
            "superseded_by": them,
            "answerer": them,
            "their_outcome": theirs,
            "agrees": False,
        }
        outcome = market.submission.get("our_outcome") or outcome_of_answer(
            question, bytes(HexBytes(market.submission.get("answer", "0x")))
        )
        disagreement = (
            f"{them} answered {theirs} over our {outcome} (bond {view.bond} wei; ours on the "
            f"question {ours} wei) on Reality.eth question {view.id_hex}, which finalizes at "
            f"{view.finalize_ts} unless answered again: {reason}"
        )
        return Receipt(
            reference=f"superseded-by:{them}",
            final_after=self._watch_from(view),
            details=details,
            disagreement=disagreement,
            challenge="defend",
        )

    async def _defence_refused(
        self,
        market: MarketRef,
        question: RealityQuestion,
        view: QuestionView,
        theirs: str,
        reason: str,
    ) -> Receipt:
        """`counter_answer: never` and a defence the bond caps refuse: the review item that
        tells a person (the question as `_defence_offer` records it, nothing offered: the
        daemon never answers back past a cap, and with `never` not at all; a person may
        answer or request arbitration by hand; the item closes once the question
        settles)."""
        offer = await self._defence_offer(market, question, view, theirs, reason)
        told = (
            f"{offer.disagreement}. Nothing is sent: a defence past a bond cap never is, and "
            "counter_answer is never; answer or request arbitration by hand if it is wrong. "
            "This item closes when the question settles"
        )
        return replace(offer, disagreement=told, challenge=None)

    async def settle(self, market: MarketRef) -> str | None:
        """Claim what the finalized question owes us and withdraw it, once: the last
        transaction's hash, or None when nothing of ours is to claim (no gas is spent
        claiming for others); ResolverError while it cannot be claimed yet. With
        `claim_batch` above 1, other finalized questions of ours go in the same transaction
        (`_settle_batched`)."""
        market = await self._following(market)
        qid = market.details["question_id"]
        if self.config.claim_batch > 1:
            handled, reference = await self._settle_batched(market)
            if handled:
                return reference
        try:
            parts = await self._ready()
            assert self._ours is not None
            view = await parts.reality.get_question(qid)
            if view.phase != Phase.FINALIZED:
                raise ResolverError(f"source {self.name}: question {qid} is not finalized yet")
            await self._claim_reopened(parts, market)
            won = await self._ours.payout(view)
            held = await parts.reality.balance_of(parts.manager.address)
            # Nothing of ours won: claiming would pay gas to credit others. Still withdraw
            # when someone else claimed the question for us.
            if won == 0 and (view.history_hash != NULL_HASH or held == 0):
                self._record_lost(market, view)
                return None
            claimed = await parts.answerer.claim(qid, from_block=market.details["block_number"])
            if claimed is None:
                raise ResolverError(f"source {self.name}: question {qid} is not finalized yet")
            for intent in (claimed.claim, claimed.withdraw):
                if intent is not None and intent.state not in (
                    IntentState.CONFIRMED,
                    IntentState.SKIPPED,
                ):
                    raise intent_failure(self.name, intent.key, intent)
            if (
                claimed.claim is not None
                and claimed.claim.state == IntentState.CONFIRMED
                and qid not in self._claims_counted
            ):
                self._claims_counted.add(qid)
                if self._metrics is not None:
                    self._metrics.bonds_claimed.labels(self.name, self.currency).inc(won)
            await self._report_bonds()
        except ChainError as error:
            raise chain_failure(self.name, error) from None
        emit(
            logger,
            logging.INFO,
            "reality.claimed",
            source=self.name,
            market=market.market_id,
            won=won,
            withdrawn=claimed.withdrawn,
        )
        last = claimed.withdraw or claimed.claim
        if last is None or last.inclusion is None:
            return None
        return last.inclusion.tx_hash

    async def _settle_batched(self, market: MarketRef) -> tuple[bool, str | None]:
        """`settle` with `claim_batch` above 1: this question and up to `claim_batch` - 1
        other finalized questions where we won something and have not claimed (our
        `LogNewAnswer` scan), in one `claimMultipleAndWithdrawBalance` (the claim and the
        withdrawal in one transaction; `RealityAnswerer.claim_many`). A question claimed in
        an earlier batch returns that batch's transaction, nothing sent. (False, None):
        left to the claim one question at a time (the contract has no batched claim, or
        only a withdrawal is left: someone claimed for us)."""
        qid = market.details["question_id"]
        try:
            parts = await self._ready()
            if not parts.reality.has_batch_claim:
                return False, None
            if qid.lower() in self._batch_claimed:
                return True, self._batch_claimed[qid.lower()]
            await self._report_bonds()  # our answers scanned: the questions to batch
            assert self._ours is not None
            view = await parts.reality.get_question(qid)
            if view.phase != Phase.FINALIZED:
                raise ResolverError(f"source {self.name}: question {qid} is not finalized yet")
            won = await self._ours.payout(view)
            if won == 0:
                if view.history_hash == NULL_HASH and await parts.reality.balance_of(
                    parts.manager.address
                ):
                    return False, None  # claimed for us: only the withdrawal is left
                self._record_lost(market, view)
                return True, None
            batch: list[tuple[bytes | str, int]] = [(qid, int(market.details["block_number"]))]
            wins = {qid.lower(): won}
            others = [q for q in self._ours.questions() if q.lower() != qid.lower()]
            for other in await parts.reality.get_questions(others):
                if len(batch) >= self.config.claim_batch:
                    break
                if other.phase != Phase.FINALIZED or other.history_hash == NULL_HASH:
                    continue
                other_won = await self._ours.payout(other)
                if other_won > 0:
                    batch.append((other.id_hex, parts.start_block))
                    wins[other.id_hex.lower()] = other_won
            claimed = await parts.answerer.claim_many(batch)
            for intent in claimed.intents:
                if intent.state != IntentState.CONFIRMED:
                    # SKIPPED: one of them was claimed meanwhile; decided again next time.
                    raise ResolverError(
                        f"source {self.name}: {intent.key} {intent.state.value}: "
                        f"{intent.error or 'a question of the batch was claimed meanwhile'}"
                    )
            last = claimed.intents[-1].inclusion if claimed.intents else None
            reference = last.tx_hash if last is not None else ""
            for question in claimed.claimed:
                self._batch_claimed[question.lower()] = reference
                if question.lower() not in self._claims_counted:
                    self._claims_counted.add(question.lower())
                    if self._metrics is not None:
                        self._metrics.bonds_claimed.labels(self.name, self.currency).inc(
                            wins.get(question.lower(), 0)
                        )
            await self._report_bonds()
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        emit(
            logger,
            logging.INFO,
            "reality.claimed_batch",
            source=self.name,
            market=market.market_id,
            questions=len(claimed.claimed),
            won=sum(wins.get(q.lower(), 0) for q in claimed.claimed),
            withdrawn=claimed.withdrawn,
        )
        return True, self._batch_claimed.get(qid.lower())

    def _record_lost(self, market: MarketRef, view: QuestionView) -> None:
        """Our bonds on a question that finalized on another's answer: a line and the
        lost-bond counter, once per process (a settled market is not settled again)."""
        ours = int(market.submission.get("ours_on_question", 0))
        # Claimed already (the history is cleared): by us or for us, nothing to tell.
        if ours == 0 or view.history_hash == NULL_HASH or view.id_hex in self._losses_counted:
            return
        self._losses_counted.add(view.id_hex)
        if self._metrics is not None:
            self._metrics.bonds_lost.labels(self.name, self.currency, "outanswered").inc(ours)
        emit(
            logger,
            logging.WARNING,
            "reality.bond_lost",
            source=self.name,
            market=market.market_id,
            bond=ours,
            final_answer=HexBytes(view.best_answer).to_0x_hex(),
        )

    # -- arbitration --------------------------------------------------------------------------

    async def _arbitration_offer(
        self,
        market: MarketRef,
        question: RealityQuestion,
        view: QuestionView,
        holdings: Holdings,
    ) -> Resolution | None:
        """Our answer was superseded: with `arbitration.request: after_review`, the question
        open and the policy's conditions met (`arbitration_due`: the next bond at the
        threshold or past a cap, the fee read from the question's arbitrator below what is
        at stake), a DISPUTED resolution whose receipt offers a person `arbitrate`; else
        None (the bond policy decides)."""
        if self._arbitration is None or self._arbitration_policy is None:
            return None
        if view.phase != Phase.OPEN:
            return None
        ours = int(market.submission.get("ours_on_question", 0))
        next_bond = view.next_bond
        past_cap = (
            cap_refusal(
                self.policy, bond=next_bond, ours_on_question=ours, at_risk=holdings.at_risk
            )
            is not None
        )
        try:
            arbitrator, fee = await self._arbitration.fee(view.question_id)
        except ChainError as error:
            # An arbitrator that does not answer getDisputeFee (not Reality.eth's
            # interface, or no code): no arbitration is offered; the bond policy decides.
            emit(
                logger,
                logging.WARNING,
                "reality.arbitration_fee_unread",
                source=self.name,
                market=market.market_id,
                arbitrator=view.arbitrator,
                error=str(error)[:300],
            )
            return None
        at_stake = ours + view.bond
        due, why = arbitration_due(
            self._arbitration_policy,
            next_bond=next_bond,
            past_cap=past_cap,
            fee=fee,
            at_stake=at_stake,
        )
        if not due:
            emit(
                logger,
                logging.INFO,
                "reality.arbitration_not_offered",
                source=self.name,
                market=market.market_id,
                reason=why,
            )
            return None
        theirs = outcome_of_answer(question, view.best_answer)
        reason = (
            f"our {market.submission.get('our_outcome')} was superseded by {theirs} at a bond "
            f"of {view.bond} wei: {why}; arbitration by {arbitrator} is offered to a person"
        )
        offer = await self._defence_offer(market, question, view, theirs, reason)
        details = {**offer.details, "arbitrator": arbitrator, "arbitration_fee": fee}
        disagreement = (
            f"{offer.disagreement}. Confirming asks the question's arbitrator {arbitrator} to "
            f"rule, paying its fee ({fee} wei now; read again when sent, never above "
            f"{self._arbitration_policy.max_fee})"
        )
        emit(
            logger,
            logging.WARNING,
            "reality.arbitration_offered",
            source=self.name,
            market=market.market_id,
            fee=fee,
            reason=why,
        )
        return Resolution(
            ResolutionStatus.DISPUTED,
            None,
            float(view.finalize_ts),
            reason=reason,
            receipt=replace(
                offer, details=details, disagreement=disagreement, challenge="arbitrate"
            ),
        )

    async def request_arbitration(self, market: MarketRef, outcome: str) -> Challenged:
        """A person confirmed (and a second approved) asking the question's arbitrator to
        rule for `outcome`: read the question again (moved on, finalized, frozen, already
        showing the decided answer: recorded, nothing sent), then `requestArbitration` with
        `max_previous` the bond confirmed against, paying the fee read from the question's
        arbitrator (within `arbitration.max_fee_wei`), once. The question is then pending
        arbitration: the market waits in `disputed` and follows the ruling."""
        market = await self._following(market)
        qid = market.details["question_id"]
        try:
            await self._ready()  # the requester is made when the venue connects
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        if self._arbitration is None:
            raise ResolverError(
                f"source {self.name}: arbitration.request is never: no arbitration is requested",
                retryable=False,
            )
        question, answer = self._encoded(market, outcome)
        planned = int(market.submission.get("bond_seen", 0))
        try:
            parts = await self._ready()
            view = await parts.reality.get_question(qid)
            history = await parts.reality.history(qid, market.details["block_number"])
            if await parts.manager.intent(self._arbitration.key(qid, planned)) is None:
                moot = self._counter_moot(view, answer, planned)
                if moot is not None:
                    emit(
                        logger,
                        logging.INFO,
                        "reality.arbitration_moot",
                        source=self.name,
                        reason=moot,
                    )
                    return Challenged(
                        None,
                        moot,
                        await self._standing(
                            parts, question, view, history, answer=answer, outcome=outcome
                        ),
                    )
            try:
                sent = await self._arbitration.request(qid, planned)
            except ArbitrationRefused as refused:
                view = await parts.reality.get_question(qid)
                return Challenged(
                    None,
                    f"{refused}: nothing was sent",
                    await self._standing(
                        parts, question, view, history, answer=answer, outcome=outcome
                    ),
                )
            view = await parts.reality.get_question(qid)
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        inclusion = sent.intent.inclusion
        details = {
            **self._details(view, history, answer, outcome, parts.manager.address),
            "arbitrator": sent.arbitrator,
            "arbitration_fee": sent.fee,
            "arbitration_requested": sent.intent.key,
        }
        emit(
            logger,
            logging.WARNING,
            "reality.arbitration_requested",
            source=self.name,
            market=market.market_id,
            fee=sent.fee,
            arbitrator=sent.arbitrator,
        )
        return Challenged(
            ChallengeSent.DISPUTED,
            f"arbitration requested from {sent.arbitrator} for {outcome}, paying {sent.fee} wei",
            Receipt(
                reference=inclusion.tx_hash if inclusion is not None else sent.intent.key,
                final_after=float(view.finalize_ts or view.now),
                gas_used=inclusion.gas_used if inclusion is not None else 0,
                details=details,
            ),
        )

    # -- answered too soon, reopened ------------------------------------------------------------

    async def _following(self, market: MarketRef) -> MarketRef:
        """The market as its venue now asks it: when its question was reopened (settled
        too soon, then `reopenQuestion`), the reopening stands in for it (the market's
        `question_id` is the reopening's; `reopens` keeps the original). The text, template,
        arbitrator, timeout and opening time are the original's: the contract checks so."""
        original = market.details.get("reopens") or market.details["question_id"]
        try:
            parts = await self._ready()
            reopening = await reopened_as(parts.reality, original)
        except ChainError as error:
            raise ResolverError(f"source {self.name}: {error}") from None
        if reopening is None:
            return market
        details = {
            **market.details,
            "question_id": HexBytes(reopening).to_0x_hex(),
            "reopens": original,
        }
        return replace(market, details=details)

    async def _after_too_soon(self, market: MarketRef, view: QuestionView) -> Resolution:
        """The question finalized as answered too soon (0xff..fe): with `reopen`, reopen it
        (once; a reopening settled too soon again is replaced by reopening the original)
        and report RESET, so the market is researched again and answers the reopening;
        without, DISPUTED: a person decides."""
        qid = view.id_hex
        assert self._parts is not None
        if not self.config.reopen or not self._parts.reality.reopenable:
            why = "reopen is off" if not self.config.reopen else "this contract cannot reopen"
            return Resolution(
                ResolutionStatus.DISPUTED,
                reason=f"question {qid} finalized as answered too soon and {why}: a "
                "person decides (reopen it by hand, or accept it)",
            )
        details = market.details
        original = details.get("reopens") or qid
        try:
            reopening = await reopen_question(
                self._parts.manager,
                self._parts.reality,
                original=original,
                template_id=int(details["template_id"]),
                text=details["text"],
                arbitrator=details["arbitrator"],
                timeout=int(details["timeout"]),
                opening_ts=int(details["opening_ts"]),
                min_bond=view.min_bond,
            )
        except ChainError as error:
            raise ResolverError(f"source {self.name}: reopening {original}: {error}") from None
        reopened = HexBytes(reopening).to_0x_hex()
        emit(
            logger,
            logging.WARNING,
            "reality.reopened",
            source=self.name,
            market=market.market_id,
            question=original,
            reopening=reopened,
        )
        return Resolution(
            ResolutionStatus.RESET,
            reason=f"question {qid} finalized as answered too soon; reopened as {reopened}: "
            "researched again and answered there as the same market",
        )

    async def _claim_reopened(self, parts: RealityParts, market: MarketRef) -> None:
        """The market followed a reopening: what the original (settled too soon) owes us
        (our answered-too-soon stood) is claimed too, once; its withdrawal is the
        reopening's (the contract holds one balance per account)."""
        original = market.details.get("reopens")
        if original is None:
            return
        assert self._ours is not None
        view = await parts.reality.get_question(original)
        won = await self._ours.payout(view)
        if won == 0:
            return
        claimed = await parts.answerer.claim(original, from_block=market.details["block_number"])
        intent = claimed.claim if claimed is not None else None
        if intent is not None and intent.state not in (IntentState.CONFIRMED, IntentState.SKIPPED):
            raise ResolverError(
                f"source {self.name}: {intent.key} {intent.state.value}: "
                f"{intent.error or 'no reason'}"
            )
        if intent is not None and intent.state == IntentState.CONFIRMED and self._metrics:
            self._metrics.bonds_claimed.labels(self.name, NATIVE).inc(won)
        emit(
            logger,
            logging.INFO,
            "reality.claimed_original",
            source=self.name,
            market=market.market_id,
            question=original,
            won=won,
        )
