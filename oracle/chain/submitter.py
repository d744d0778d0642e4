"""Submitters: proposals (single, batched, operator-signed), settlement, payout reports.

Every action goes through the `TxManager` under an idempotency key and with a pre-send
check that reads the contract, so a question that already carries a proposal for its
current round is never proposed again (not after a crash, not from another batch):

    propose:<question id>:<round>          propose / proposeSigned
    propose-batch:<digest of ids+rounds>   proposeBatch / proposeBatchSigned
    settle:<question id>                   settle (questions with a callback, once final)
    payout:<question id>                   ConditionalTokensAdapter.resolve

In multi-operator mode (the contract's threshold > 0) the configured operator signers
sign the EIP-712 `Proposal` / `ProposalBatch` for the question's current round.

Questions are read in one JSON-RPC batch per call (`AgentOracle.get_questions`): a batch
is read once before it is sent (that read is also the new intent's pre-send check) and
once after its transaction is final (`BatchOutcome.questions`, shared by its answers).
"""

from __future__ import annotations

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
from oracle.chain.intents import Intent
from oracle.chain.keys import Signer
from oracle.chain.settings import SubmitterSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.log import emit

logger = logging.getLogger(__name__)
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
    """How a batch ended: its transaction (None: nothing was left to propose), and each of
    its questions (by id) read from the chain once that transaction was final."""

    intent: Intent | None
    questions: Mapping[bytes, QuestionView]


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
        manager.register_precheck("propose:", self._recorded_proposal_done)
        manager.register_precheck("propose-batch:", self._recorded_proposal_done)
        manager.register_precheck("settle:", self._recorded_settle_done)

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
        questions = await self.oracle.get_questions(self._called_questions(intent))
        return all(q.status != Status.REQUESTED for q in questions)

    async def _recorded_settle_done(self, intent: Intent) -> bool:
        (qid,) = self._called_questions(intent)
        return (await self.oracle.get_question(qid)).settled

    # -- checks -----------------------------------------------------------------------------

    async def _done(self, answers: Sequence[Answer], rounds: Sequence[int]) -> bool:
        """True when none of `answers` can still be proposed in the round we signed for."""
        questions = await self.oracle.get_questions([a.question_id for a in answers])
        return all(
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

    async def propose(self, answer: Answer) -> Intent:
        """Propose one answer (skipped, and recorded as such, if it cannot or need not be)."""
        question = await self.oracle.get_question(answer.question_id)
        # Not open: the pre-send check runs and records the intent as skipped, as it should.
        is_open = question.status == Status.REQUESTED
        return await self._propose_in_round(answer, question.round, just_checked=is_open)

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

        async def already_done() -> bool:
            return await self._done([answer], [round_])

        intent = await self.manager.submit(
            TxRequest(
                key=key,
                to=self.oracle.address,
                data=data,
                already_done=already_done,
                just_checked=just_checked,
            )
        )
        emit(logger, logging.INFO, "submit.proposal", key=key, state=intent.state)
        return intent

    async def propose_batch(self, answers: Sequence[Answer]) -> Intent | None:
        """Propose several answers in one transaction; those already proposed are left out.

        Returns None when nothing is left to propose.
        """
        unique = list({a.question_id: a for a in answers}.values())
        questions = await self.oracle.get_questions([a.question_id for a in unique])
        # Only questions this read found open are proposed: it is the pre-send check.
        open_ = [
            (a, q.round)
            for a, q in zip(unique, questions, strict=True)
            if q.status == Status.REQUESTED
        ]
        if not open_:
            return None
        if len(open_) == 1:
            answer, round_ = open_[0]
            return await self._propose_in_round(answer, round_, just_checked=True)
        items = [a for a, _ in open_]
        rounds = [r for _, r in open_]
        fingerprint = hashlib.sha256(
            ",".join(sorted(f"{a.qid}:{r}" for a, r in open_)).encode()
        ).hexdigest()[:32]
        key = f"propose-batch:{fingerprint}"
        tuples = [a.as_tuple() for a in items]
        if await self._signed():
            signed = [SignedProposal(a.question_id, r, a.outcome, a.proof_hash) for a, r in open_]
            typed = batch_typed_data(self.manager.chain_id, self.oracle.address, signed)
            signatures = await operator_signatures(self.operators, typed)
            data = self.oracle.encode("proposeBatchSigned", tuples, signatures)
        else:
            data = self.oracle.encode("proposeBatch", tuples)

        async def already_done() -> bool:
            return await self._done(items, rounds)

        intent = await self.manager.submit(
            TxRequest(
                key=key,
                to=self.oracle.address,
                data=data,
                already_done=already_done,
                just_checked=True,
            )
        )
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
        intent = await self.propose_batch(answers)
        # Read after the transaction is final, once for the whole batch: what each answer's
        # caller checks (did our proof land, in which round) is the chain as it now stands.
        qids = list(dict.fromkeys(a.question_id for a in answers))
        questions = await self.oracle.get_questions(qids)
        return BatchOutcome(intent, dict(zip(qids, questions, strict=True)))

    async def drain(self) -> None:
        await self._batcher.drain()

    # -- settlement and payouts -------------------------------------------------------------

    async def settle(self, question_id: bytes) -> Intent | None:
        """`settle` a final question that has a callback; None when there is nothing to do."""
        question = await self.oracle.get_question(question_id)
        if question.callback == ZERO_ADDRESS or question.status != Status.FINAL:
            return None
        qid = HexBytes(question_id).to_0x_hex()

        async def already_done() -> bool:
            return (await self.oracle.get_question(question_id)).settled

        return await self.manager.submit(
            TxRequest(
                key=f"settle:{qid}",
                to=self.oracle.address,
                data=self.oracle.encode("settle", question_id),
                already_done=already_done,
            )
        )

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

        return await self.manager.submit(
            TxRequest(
                key=f"payout:{qid}",
                to=adapter.address,
                data=adapter.encode("resolve", question_id),
                already_done=already_done,
            )
        )
