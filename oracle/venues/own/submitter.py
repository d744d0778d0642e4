"""Submitters: proposals (single, batched, operator-signed), settlement, payout reports.

Every action goes through the `TxManager` under an idempotency key, names its subjects,
and has a pre-send check that reads the contract:

    propose:<question id>:<round>          propose / proposeSigned
    propose-batch:<digest of ids+rounds>   proposeBatch / proposeBatchSigned
    settle:<question id>[:<attempt>]       settle (a callback waits; again while it fails)
    payout:<question id>                   ConditionalTokensAdapter.resolve

and subjects `propose:<chain id>:<oracle>:<question id>:<round>` (one per question of a
proposal), `settle:<chain id>:<oracle>:<question id>[:<attempt>]`,
`payout:<chain id>:<oracle>:<question id>`.

A question in a round goes into one transaction only: while an intent holds it (sent
and unfinished, recorded and not yet sent, or confirmed: of this process, an earlier one,
or another replica's), no other is built for it; the answer waits for that intent
(ours) or is reported as carried by it (another signer's, whose signed transaction is
relayed if the node lost it). A batch leaves such questions out and sends the rest. The
pre-send check stops a transaction that could no longer succeed: a batch is not sent
when any of its questions is no longer open in the round it was signed for (its
questions then go into new transactions).

In multi-operator mode (the contract's threshold > 0) the configured operator signers
sign the EIP-712 `Proposal` / `ProposalBatch` for the question's current round.

Questions are read in one JSON-RPC batch per call (`AgentOracle.get_questions`): a batch
is read once before it is sent (that read is also the new intent's pre-send check) and
once after its transaction is final (`BatchOutcome.questions`, shared by its answers).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hexbytes import HexBytes

from oracle.chain.batching import Batcher
from oracle.chain.contracts import (
    INVALID_OUTCOME,
    AgentOracle,
    ConditionalTokens,
    ConditionalTokensAdapter,
    QuestionView,
    Status,
)
from oracle.chain.eip712 import (
    SignedProposal,
    batch_typed_data,
    operator_signatures,
    proposal_typed_data,
)
from oracle.chain.intents import Intent, IntentState
from oracle.chain.keys import Signer
from oracle.chain.settings import SubmitterSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import SubjectsHeld, TxError
from oracle.log import emit

logger = logging.getLogger(__name__)
# Times a send is planned again after another intent took one of its questions meanwhile.
_RACES = 3
ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"


@dataclass(frozen=True)
class Answer:
    """A verdict to put on-chain: outcome index (65535 = INVALID) and the 20-byte proof hash."""

    question_id: bytes
    outcome: int
    proof_hash: bytes

    def __post_init__(self) -> None:
        if len(self.question_id) != 32:
            raise ValueError("question_id must be 32 bytes")
        if len(self.proof_hash) != 20:
            raise ValueError("proof_hash must be 20 bytes (bytes20(sha256(proof)))")
        if not 0 <= self.outcome <= INVALID_OUTCOME:
            raise ValueError("outcome must be a uint16")

    @property
    def qid(self) -> str:
        return HexBytes(self.question_id).to_0x_hex()

    def as_tuple(self) -> tuple[bytes, int, bytes]:
        return (self.question_id, self.outcome, self.proof_hash)


@dataclass(frozen=True)
class BatchOutcome:
    """How a batch ended: for each of its questions (by id), the intent that carries its
    proposal (this batch's, or one recorded before or by another replica; None: no intent
    we know of), and the question read from the chain once those intents ended."""

    carriers: Mapping[bytes, Intent | None]
    questions: Mapping[bytes, QuestionView]


@dataclass(frozen=True)
class Settlement:
    """How settling a question stands: the latest `settle` transaction, whether the
    callback took the answer, and how many more attempts `settle` may make."""

    intent: Intent | None
    delivered: bool
    attempts_left: int


@dataclass(frozen=True)
class _Plan:
    """What to do with some answers, from one read of their questions and holders."""

    fresh: list[tuple[Answer, int]]  # open, held by no intent: (answer, round) to send
    held: dict[bytes, Intent]  # question id -> the intent that holds it
    closed: list[tuple[Answer, int]]  # not open, held by no intent we know of


class ProposalSubmitter:
    """Proposes answers on the oracle contract through one `TxManager`."""

    def __init__(
        self,
        manager: TxManager,
        oracle: AgentOracle,
        *,
        operators: Sequence[Signer] = (),
        settings: SubmitterSettings | None = None,
    ) -> None:
        self.manager = manager
        self.oracle = oracle
        self.operators = list(operators)
        self.settings = settings or SubmitterSettings()
        self._batcher: Batcher[Answer, BatchOutcome] = Batcher(
            self._flush,
            max_size=self.settings.batch_max_size,
            max_wait=self.settings.batch_max_wait,
        )
        # For intents found in the store after a restart (no request callback at hand).
        manager.register_precheck("propose:", self._recorded_proposal_done, contract=oracle.address)
        manager.register_precheck(
            "propose-batch:", self._recorded_proposal_done, contract=oracle.address
        )
        manager.register_precheck("settle:", self._recorded_settle_done, contract=oracle.address)

    def _called_questions(self, intent: Intent) -> list[bytes]:
        """The question ids in a recorded oracle call's calldata."""
        function, args = self.oracle.decode_call(intent.data)
        if function in ("propose", "proposeSigned", "settle"):
            return [bytes(args["questionId"])]
        if function in ("proposeBatch", "proposeBatchSigned"):
            return [
                bytes(p["questionId"] if isinstance(p, dict) else p[0]) for p in args["proposals"]
            ]
        raise ValueError(f"{intent.key}: not a proposal or settle call ({function})")

    async def _recorded_proposal_done(self, intent: Intent) -> bool:
        """Whether a recorded proposal could no longer succeed: one of its questions is no
        longer open in the round it was made for (a batch reverts whole)."""
        rounds = [parsed for parsed in map(self._parse_proposal_subject, intent.subjects) if parsed]
        if rounds:
            views = await self.oracle.get_questions([qid for qid, _ in rounds])
            return any(
                v.status != Status.REQUESTED or v.round != r
                for v, (_, r) in zip(views, rounds, strict=True)
            )
        # Recorded before intents named their subjects: no rounds known.
        questions = await self.oracle.get_questions(self._called_questions(intent))
        return any(q.status != Status.REQUESTED for q in questions)

    # -- subjects ---------------------------------------------------------------------------

    def _subject(self, kind: str, question_id: bytes, number: int | None = None) -> str:
        """`kind:<chain id>:<oracle>:<question id>[:<number>]` (a round, an attempt)."""
        qid = HexBytes(question_id).to_0x_hex()
        where = f"{self.manager.chain_id}:{self.oracle.address.lower()}"
        return f"{kind}:{where}:{qid}" + (f":{number}" if number is not None else "")

    def _proposal_subject(self, question_id: bytes, round_: int) -> str:
        return self._subject("propose", question_id, round_)

    @staticmethod
    def _parse_proposal_subject(subject: str) -> tuple[bytes, int] | None:
        """(question id, round) of a proposal subject; None for another kind."""
        parts = subject.split(":")  # propose:<chain id>:<oracle>:<question id>:<round>
        if len(parts) != 5 or parts[0] != "propose":
            return None
        return bytes(HexBytes(parts[3])), int(parts[4])

    async def _recorded_settle_done(self, intent: Intent) -> bool:
        (qid,) = self._called_questions(intent)
        return (await self.oracle.get_question(qid)).settled

    # -- checks -----------------------------------------------------------------------------

    async def _done(self, answers: Sequence[Answer], rounds: Sequence[int]) -> bool:
        """True when some of `answers` can no longer be proposed in the round we signed
        for, so the transaction would revert (a batch reverts whole)."""
        questions = await self.oracle.get_questions([a.question_id for a in answers])
        return any(
            q.status != Status.REQUESTED or q.round != round_
            for q, round_ in zip(questions, rounds, strict=True)
        )

    async def _signed(self) -> bool:
        threshold = (await self.oracle.config()).threshold
        if threshold and len(self.operators) < threshold:
            raise ValueError(
                f"multi-operator mode needs {threshold} operator signatures; "
                f"{len(self.operators)} operator signer(s) configured"
            )
        return threshold > 0

    # -- proposals --------------------------------------------------------------------------

    async def _plan(self, answers: Sequence[Answer]) -> _Plan:
        """One read of the questions and of the intents holding them, sorted into what to
        send, what another intent carries, and what is closed."""
        unique = list({a.question_id: a for a in answers}.values())
        views = await self.oracle.get_questions([a.question_id for a in unique])
        subjects = [
            self._proposal_subject(a.question_id, v.round)
            for a, v in zip(unique, views, strict=True)
        ]
        holders = await self.manager.holders(subjects)
        plan = _Plan([], {}, [])
        for answer, view, subject in zip(unique, views, subjects, strict=True):
            holder = holders.get(subject)
            if holder is not None:
                plan.held[answer.question_id] = holder
            elif view.status == Status.REQUESTED:
                plan.fresh.append((answer, view.round))
            else:
                plan.closed.append((answer, view.round))
        return plan

    async def propose(self, answer: Answer) -> Intent:
        """Propose one answer, or find the intent that already carries it (ours: once it
        ended); a question no longer open is recorded as skipped."""
        for _ in range(_RACES):
            plan = await self._plan([answer])
            if answer.question_id in plan.held:
                return await self.manager.take_over(plan.held[answer.question_id])
            (_, round_), is_open = (plan.fresh or plan.closed)[0], bool(plan.fresh)
            # Not open: the pre-send check runs and records the intent as skipped.
            try:
                return await self._propose_in_round(answer, round_, just_checked=is_open)
            except SubjectsHeld:
                continue  # taken by another intent since we read: look again
        raise TxError(f"{answer.qid}: taken by other transactions {_RACES} times in a row")

    async def _propose_in_round(self, answer: Answer, round_: int, *, just_checked: bool) -> Intent:
        """Propose `answer` for `round_`; `just_checked`: the caller read the question a
        moment ago and it was open in that round (see `TxRequest.just_checked`)."""
        key = f"propose:{answer.qid}:{round_}"
        if await self._signed():
            proposal = SignedProposal(answer.question_id, round_, answer.outcome, answer.proof_hash)
            typed = proposal_typed_data(self.manager.chain_id, self.oracle.address, proposal)
            signatures = await operator_signatures(self.operators, typed)
            data = self.oracle.encode("proposeSigned", *answer.as_tuple(), signatures)
        else:
            data = self.oracle.encode("propose", *answer.as_tuple())
        intent = await self._submit(key, data, [(answer, round_)], just_checked=just_checked)
        emit(logger, logging.INFO, "submit.proposal", key=key, state=intent.state)
        return intent

    async def _submit(
        self, key: str, data: str, fresh: Sequence[tuple[Answer, int]], *, just_checked: bool
    ) -> Intent:
        """Submit `data`, proposing each (answer, round) of `fresh`, as intent `key`: each
        question's round is a subject it holds, and it is done already once any of them
        can no longer be proposed in that round (`_done`)."""
        answers = [a for a, _ in fresh]
        rounds = [r for _, r in fresh]

        async def already_done() -> bool:
            return await self._done(answers, rounds)

        return await self.manager.submit(
            TxRequest(
                key=key,
                to=self.oracle.address,
                data=data,
                already_done=already_done,
                just_checked=just_checked,
                subjects=tuple(self._proposal_subject(a.question_id, r) for a, r in fresh),
            )
        )

    async def propose_batch(self, answers: Sequence[Answer]) -> Intent | None:
        """Propose, in one new transaction, those of `answers` whose questions are open and
        carried by no other intent; returns its intent (None: nothing left to send)."""
        return (await self._deliver(answers, wait=False))[1]

    async def _deliver(
        self, answers: Sequence[Answer], *, wait: bool = True
    ) -> tuple[dict[bytes, Intent | None], Intent | None]:
        """The intent carrying each answer's question (with `wait`: once ours ended), and
        the new transaction sent for those nothing carried yet (None: none was needed)."""
        carriers: dict[bytes, Intent | None] = {}
        sent: Intent | None = None
        for _ in range(_RACES):
            plan = await self._plan(answers)
            carriers = {a.question_id: None for a, _ in plan.closed}
            carriers.update(plan.held)
            try:
                sent = await self._send_new(plan.fresh) if plan.fresh else None
            except SubjectsHeld:
                continue  # taken by another intent since we read: look again
            carriers.update({a.question_id: sent for a, _ in plan.fresh})
            break
        else:
            raise TxError(f"{len(answers)} answers: taken by other transactions {_RACES} times")
        if wait:
            others = {c.key: c for c in carriers.values() if c is not None and c is not sent}
            ended = dict(
                zip(
                    others,
                    await asyncio.gather(*map(self.manager.take_over, others.values())),
                    strict=True,
                )
            )
            carriers = {q: ended.get(c.key, c) if c else None for q, c in carriers.items()}
        return carriers, sent

    async def _send_new(self, fresh: Sequence[tuple[Answer, int]]) -> Intent:
        """One transaction proposing each (answer, round): `propose` for one, else a batch."""
        if len(fresh) == 1:
            answer, round_ = fresh[0]
            return await self._propose_in_round(answer, round_, just_checked=True)
        items = [a for a, _ in fresh]
        fingerprint = hashlib.sha256(
            ",".join(sorted(f"{a.qid}:{r}" for a, r in fresh)).encode()
        ).hexdigest()[:32]
        key = f"propose-batch:{fingerprint}"
        tuples = [a.as_tuple() for a in items]
        if await self._signed():
            signed = [SignedProposal(a.question_id, r, a.outcome, a.proof_hash) for a, r in fresh]
            typed = batch_typed_data(self.manager.chain_id, self.oracle.address, signed)
            signatures = await operator_signatures(self.operators, typed)
            data = self.oracle.encode("proposeBatchSigned", tuples, signatures)
        else:
            data = self.oracle.encode("proposeBatch", tuples)
        # The plan's read found every question open: it is the pre-send check.
        intent = await self._submit(key, data, fresh, just_checked=True)
        emit(
            logger,
            logging.INFO,
            "submit.batch",
            key=key,
            questions=[a.qid for a in items],
            state=intent.state,
        )
        return intent

    async def enqueue(self, answer: Answer) -> BatchOutcome:
        """Add to the current batch; sent at `batch_max_size` answers or `batch_max_wait` s."""
        return await self._batcher.add(answer)

    async def _flush(self, answers: list[Answer]) -> BatchOutcome:
        carriers, _ = await self._deliver(answers)
        # Read after the transactions ended, once for the whole batch: what each answer's
        # caller checks (did our proof land, in which round) is the chain as it now stands.
        qids = list(dict.fromkeys(a.question_id for a in answers))
        questions = await self.oracle.get_questions(qids)
        return BatchOutcome(carriers, dict(zip(qids, questions, strict=True)))

    async def drain(self, timeout: float | None = None) -> bool:
        """Send what is queued and wait for the batches in flight (`Batcher.drain`)."""
        return await self._batcher.drain(timeout)

    # -- settlement and payouts -------------------------------------------------------------

    async def settle(self, question_id: bytes) -> Settlement | None:
        """`settle` a final question that has a callback, until the callback takes the
        answer: a confirmed `settle` whose callback failed leaves the question unsettled,
        and the next call sends another (its own key and subject), at most
        `settle_attempts` in all. None when there is nothing to settle."""
        question = await self.oracle.get_question(question_id)
        if question.callback == ZERO_ADDRESS or question.status != Status.FINAL:
            return None
        qid = HexBytes(question_id).to_0x_hex()

        async def already_done() -> bool:
            return (await self.oracle.get_question(question_id)).settled

        attempts = self.settings.settle_attempts
        keys = [f"settle:{qid}" + (f":{attempt}" if attempt else "") for attempt in range(attempts)]
        if question.settled:  # delivered: by the last of our attempts, or by someone else
            recorded = [await self.manager.intent(key) for key in keys]
            sent = [i for i in recorded if i is not None and i.state == IntentState.CONFIRMED]
            return Settlement(sent[-1] if sent else None, True, 0)
        intent = None
        for attempt, key in enumerate(keys):
            intent = await self.manager.intent(key)
            if intent is not None and intent.state == IntentState.CONFIRMED:
                continue  # that attempt's callback failed: the next one is due
            intent = await self._submit_or_find(
                TxRequest(
                    key=key,
                    to=self.oracle.address,
                    data=self.oracle.encode("settle", question_id),
                    already_done=already_done,
                    subjects=(self._subject("settle", question_id, attempt or None),),
                )
            )
            delivered = (await self.oracle.get_question(question_id)).settled
            return Settlement(intent, delivered, attempts - attempt - 1)
        return Settlement(intent, False, 0)

    async def report_payouts(
        self, adapter: ConditionalTokensAdapter, question_id: bytes
    ) -> Intent | None:
        """Have the adapter report a final question's payouts to Conditional Tokens (if the
        settle callback did not already); None while the question is not final."""
        question = await self.oracle.get_question(question_id)
        if question.status != Status.FINAL:
            return None
        tokens = ConditionalTokens(self.oracle.pool, await adapter.conditional_tokens())
        condition = await tokens.condition_id(adapter.address, question_id, question.outcome_count)
        qid = HexBytes(question_id).to_0x_hex()

        async def already_done() -> bool:
            return await tokens.payout_denominator(condition) != 0

        return await self._submit_or_find(
            TxRequest(
                key=f"payout:{qid}",
                to=adapter.address,
                data=adapter.encode("resolve", question_id),
                already_done=already_done,
                subjects=(self._subject("payout", question_id),),
            )
        )

    async def _submit_or_find(self, request: TxRequest) -> Intent:
        """Submit `request`, or find the intent that already carries it (`submit_once`)."""
        return await self.manager.submit_once(request.key, lambda: self.manager.submit(request))
