"""Arbitration of a Reality.eth v3 question, requested through its arbitrator.

A question names its arbitrator when it is asked (`questions(id).arbitrator`); whoever
pays that arbitrator's fee for the question (`getDisputeFee(question_id)`, Reality.eth's
`Arbitrator`: the fee the owner set for it, else its default; 0: it will not arbitrate
the question) through `requestArbitration(question_id, max_previous)` freezes the
question (`notifyOfArbitrationRequest`) until the arbitrator answers
(`submitAnswerByArbitrator` or `assignWinnerAndSubmitAnswerByArbitrator`), which
finalizes it; the requester is credited as the last answerer when the standing answer
was wrong. `max_previous` makes the request revert if a higher bond came in meanwhile.

`ArbitrationRequester.request` reads the arbitrator from the question and the fee from
that arbitrator at the moment it sends, never from configuration; refuses
(`ArbitrationRefused`) a fee of 0 (the arbitrator does not take the question), a fee above
`max_fee` (the venue's `arbitration.max_fee_wei`), a question not open, or one whose bond
moved since `max_previous`; then sends the request with the fee as value, once: one
intent per (question, round), keyed
`reality-arbitration:<chain id>:<contract>:<question id>:<max_previous>`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from eth_abi.exceptions import DecodingError
from eth_utils.address import to_checksum_address
from web3.exceptions import ContractLogicError

from oracle.chain.contracts import _Contract
from oracle.chain.deploy import creation_code
from oracle.chain.intents import Intent, IntentState
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import (
    ArbitrationRefused,
    ChainError,
    DeploymentError,
    TxError,
    TxReverted,
)
from oracle.log import emit
from oracle.venues.reality.binding import QuestionView, RealityETH, question_bytes
from oracle.venues.reality.rules import Phase

logger = logging.getLogger(__name__)

ARBITRATOR = "reality/Arbitrator"  # Reality.eth's own, flat/Arbitrator-development.sol
ARBITRATION_PREFIX = "reality-arbitration:"


class RealityArbitrator(_Contract):
    """A question's arbitrator, as Reality.eth's `Arbitrator` (its `IArbitrator`)."""

    artifact_name = ARBITRATOR

    async def dispute_fee(self, qid: bytes | str) -> int:
        """`getDisputeFee(question_id)`; ChainError when the arbitrator does not answer it
        (another interface, or no code at its address)."""
        try:
            return int(await self.read("getDisputeFee", question_bytes(qid)))
        except (ContractLogicError, DecodingError) as error:
            raise ChainError(
                f"arbitrator {self.address}: getDisputeFee does not answer ({error}): not "
                "Reality.eth's arbitrator interface"
            ) from None


@dataclass(frozen=True)
class ArbitrationRequest:
    """A request sent (or found sent): its intent, the arbitrator and the fee paid."""

    intent: Intent
    arbitrator: str
    fee: int

    @property
    def sent(self) -> bool:
        return self.intent.state == IntentState.CONFIRMED


async def _moved_on(reality: RealityETH, qid: bytes, max_previous: int) -> bool:
    """Whether a request for `qid` answered up to `max_previous` could no longer succeed."""
    view = await reality.get_question(qid)
    return view.phase != Phase.OPEN or view.bond != max_previous


def register_arbitration_check(manager: TxManager) -> None:
    """The pre-send check of arbitration requests found in the store after a restart,
    for every Reality.eth contract on the manager's chain: the key names the contract,
    the question and the round. Registered once per chain context when it makes the
    chain's manager (before any venue resumes its intents); registering it again changes
    nothing."""

    async def done(intent: Intent) -> bool:
        _, _, contract, question, max_previous = intent.key.rsplit(":", 4)
        reality = RealityETH(manager.pool, contract)
        return await _moved_on(reality, bytes.fromhex(question[2:]), int(max_previous))

    manager.register_precheck(ARBITRATION_PREFIX, done)


class ArbitrationRequester:
    """Requests arbitration of questions on one RealityETH_v3_0, through one `TxManager`."""

    def __init__(self, manager: TxManager, reality: RealityETH, *, max_fee: int) -> None:
        if max_fee <= 0:
            raise ValueError("max_fee: a positive amount in wei")
        self.manager = manager
        self.reality = reality
        self.max_fee = max_fee

    def key(self, qid: bytes | str, max_previous: int) -> str:
        where = f"{self.manager.chain_id}:{self.reality.address.lower()}"
        return f"{ARBITRATION_PREFIX}{where}:0x{question_bytes(qid).hex()}:{max_previous}"

    async def fee(self, qid: bytes | str) -> tuple[str, int]:
        """The question's arbitrator (from the question) and its fee for the question."""
        view = await self.reality.get_question(qid)
        arbitrator = RealityArbitrator(self.manager.pool, view.arbitrator)
        return arbitrator.address, await arbitrator.dispute_fee(qid)

    async def _done(self, qid: bytes, max_previous: int) -> bool:
        return await _moved_on(self.reality, qid, max_previous)

    async def _fee_to_pay(
        self, question: bytes, view: QuestionView, arbitrator: RealityArbitrator, max_previous: int
    ) -> int:
        """The arbitrator's fee for a new request; `ArbitrationRefused` when the question
        is not open, moved on since `max_previous`, or the fee is 0 or above the cap."""
        if view.phase != Phase.OPEN:
            raise ArbitrationRefused(f"0x{question.hex()}", f"it is {view.phase.value}")
        if view.bond != max_previous:
            raise ArbitrationRefused(
                f"0x{question.hex()}",
                f"it moved on (bond {max_previous} -> {view.bond} wei) since arbitration "
                "was decided",
            )
        fee = await arbitrator.dispute_fee(question)
        if fee == 0:
            raise ArbitrationRefused(
                f"0x{question.hex()}",
                f"its arbitrator {arbitrator.address} charges no fee for it: it does not "
                "arbitrate the question",
            )
        if fee > self.max_fee:
            raise ArbitrationRefused(
                f"0x{question.hex()}",
                f"the arbitrator's fee {fee} wei is above the cap of {self.max_fee}",
            )
        return fee

    async def request(self, qid: bytes | str, max_previous: int) -> ArbitrationRequest:
        """Pay the question's arbitrator its fee to arbitrate `qid`, answered up to the bond
        `max_previous`, once (see the module docstring)."""
        question = question_bytes(qid)
        key = self.key(question, max_previous)
        recorded = await self.manager.intent(key)
        view = await self.reality.get_question(question)
        arbitrator = RealityArbitrator(self.manager.pool, view.arbitrator)

        async def done() -> bool:
            return await self._done(question, max_previous)

        async def send() -> Intent:
            # A reverted or failed request is tried again with its fee, checked again
            # before it is sent (not refused: the pre-send check records it done).
            if recorded is not None:
                fee = recorded.value
            else:
                fee = await self._fee_to_pay(question, view, arbitrator, max_previous)
            try:
                return await self.manager.submit(
                    TxRequest(
                        key=key,
                        to=arbitrator.address,
                        data=arbitrator.encode("requestArbitration", question, max_previous),
                        value=fee,
                        already_done=done,
                        just_checked=recorded is None,
                        subjects=(key,),
                    )
                )
            except TxReverted as error:
                raise ArbitrationRefused(
                    f"0x{question.hex()}", f"the request would revert: {error.error}"
                ) from None

        intent = await self.manager.submit_once(key, send)
        fee = intent.value
        if intent.state not in (IntentState.CONFIRMED, IntentState.SKIPPED):
            raise TxError(f"{key}: ended {intent.state.value}: {intent.error}")
        emit(
            logger,
            logging.INFO,
            "reality.arbitration_requested",
            key=key,
            state=intent.state,
            arbitrator=arbitrator.address,
            fee=fee,
        )
        return ArbitrationRequest(intent, to_checksum_address(arbitrator.address), fee)


async def deploy_reality_arbitrator(manager: TxManager, reality: str, fee: int, *, run: str) -> str:
    """Deploy Reality.eth's `Arbitrator` for `reality` (development chains and tests),
    owned by the manager's signer, its default dispute fee `fee`."""
    created = await manager.submit(
        TxRequest(
            key=f"reality-deploy:{run}:npm-arbitrator", to=None, data=creation_code(ARBITRATOR)
        )
    )
    if created.state != IntentState.CONFIRMED or created.inclusion is None:
        raise TxError(f"deploying {ARBITRATOR}: ended {created.state.value}: {created.error}")
    address = created.inclusion.contract_address
    if address is None:
        raise DeploymentError(f"deploying {ARBITRATOR}: the receipt has no contract address")
    arbitrator = RealityArbitrator(manager.pool, address)
    for function, argument in (
        ("setRealitio", to_checksum_address(reality)),
        ("setDisputeFee", fee),
    ):
        intent = await manager.submit(
            TxRequest(
                key=f"reality-deploy:{run}:npm-arbitrator:{function}",
                to=arbitrator.address,
                data=arbitrator.encode(function, argument),
            )
        )
        if intent.state != IntentState.CONFIRMED:
            raise TxError(f"{ARBITRATOR}.{function}: ended {intent.state.value}: {intent.error}")
    return arbitrator.address
