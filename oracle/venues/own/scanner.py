"""MarketSource: the questions asked on the oracle contract, from its `QuestionRequested` logs.

A thin layer over `LogScanner` (bounded ranges, confirmation depth, persisted checkpoint,
reorg-safe), deduplicating by question id, which the contract guarantees to be unique.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from hexbytes import HexBytes
from pydantic import BaseModel, ConfigDict

from oracle.chain.checkpoint import CheckpointStore
from oracle.chain.contracts import ORACLE, load_artifact
from oracle.chain.events import DecodedLog, EventDecoder
from oracle.chain.rpc import RpcPool
from oracle.chain.scanner import LogScanner
from oracle.chain.settings import ScannerSettings
from oracle.core.models import Market

QUESTION_EVENT = "QuestionRequested"
DISPUTE_EVENT = "AnswerDisputed"


class RequestedQuestion(BaseModel):
    """One `QuestionRequested` event."""

    model_config = ConfigDict(frozen=True)

    question_id: str
    requester: str
    outcome_count: int
    earliest_time: int
    liveness: int
    text: str
    text_hex: str
    block_number: int
    tx_hash: str

    @classmethod
    def from_log(cls, log: DecodedLog) -> RequestedQuestion:
        raw = bytes(log.args["text"])
        return cls(
            question_id=HexBytes(log.args["questionId"]).to_0x_hex(),
            requester=log.args["requester"],
            outcome_count=log.args["outcomeCount"],
            earliest_time=log.args["earliestTime"],
            liveness=log.args["liveness"],
            text=raw.decode("utf-8", errors="replace"),
            text_hex="0x" + raw.hex(),
            block_number=log.block_number,
            tx_hash=log.tx_hash,
        )

    def market(self) -> Market:
        """The question as the consensus core's `Market` (outcome names: YES/NO or indices)."""
        outcomes = (
            ("YES", "NO")
            if self.outcome_count == 2
            else tuple(str(i) for i in range(self.outcome_count))
        )
        return Market(id=self.question_id, question=self.text or "(empty)", outcomes=outcomes)


def _question_id(log: DecodedLog) -> str:
    return HexBytes(log.args["questionId"]).to_0x_hex()


class MarketSource:
    def __init__(
        self,
        pool: RpcPool,
        oracle_address: str,
        checkpoints: CheckpointStore,
        settings: ScannerSettings | None = None,
        *,
        start_block: int = 0,
        name: str = "questions",
    ) -> None:
        decoder = EventDecoder(load_artifact(ORACLE).abi, QUESTION_EVENT)
        self.scanner = LogScanner(
            pool,
            address=oracle_address,
            decoder=decoder,
            checkpoints=checkpoints,
            name=name,
            settings=settings,
            start_block=start_block,
            id_of=_question_id,
        )
        self.disputes = LogScanner(
            pool,
            address=oracle_address,
            decoder=EventDecoder(load_artifact(ORACLE).abi, DISPUTE_EVENT),
            checkpoints=checkpoints,
            name=f"{name}:disputes",
            settings=settings,
            start_block=start_block,
        )

    async def poll(
        self, handler: Callable[[list[RequestedQuestion]], Awaitable[None]] | None = None
    ) -> list[RequestedQuestion]:
        """New questions since the last poll; `handler` runs before the checkpoint moves."""
        return await self.scanner.poll_parsed(RequestedQuestion.from_log, handler)

    async def disputed(self, us: str) -> list[str]:
        """The questions disputed by anyone but `us` since the last call (each once)."""
        found = {
            HexBytes(log.args["questionId"]).to_0x_hex(): None
            for log in await self.disputes.poll()
            if str(log.args["disputer"]).lower() != us.lower()
        }
        return list(found)
