"""Reality.eth as the chain layer sees it: questions, answers with bonds, arbitration,
finalization and claims, on `RealityETH_v3_0` (native bonds), `Realitio_v2_1` (v2.1,
where Omen asks) and `RealityETH_ERC20_v3_0` (bonds in an ERC-20 token, each approved
exactly before it is posted); `reality_contract` picks the binding, and
`RealityETH.deployment_problem` says whether an address holds the contract configured.

A question is asked with `askQuestion` (its text only in the `LogNewQuestion` event, read
by `oracle.venues.reality.rules`); anyone answers with `submitAnswer(question_id, answer,
max_previous)` and a bond of at least the question's `min_bond`, then at least twice the
current bond; the last answer stands once `timeout` passes without another (FINALIZED),
unless the question's arbitrator is paid to rule (`LogNotifyOfArbitrationRequest`: frozen,
PENDING_ARBITRATION, until it answers, `LogFinalize`). Afterwards `claimWinnings` walks the
answer history back (`oracle.venues.reality.rules.claim_arguments`) and credits the winners inside
the contract; `withdraw` pays an account out.

* `RealityETH`: typed reads (the public `questions(bytes32)` struct as `QuestionView`, with
  the block time it was read at and so its `Phase`; `getBond`, `getBestAnswer`,
  `isFinalized`, `getFinalAnswer`, `getHistoryHash`, `balanceOf`), the history from
  `LogNewAnswer` logs, the arbitration requests and finalizations, and calldata.
* `QuestionSource`: `LogNewQuestion` events through `LogScanner` (confirmation depth,
  persisted checkpoint, reorg rewind), filtered by asker (an indexed topic, filtered by
  the node), arbitrator and template (filtered here), delivered once per question id. The
  question text is kept as bytes: the contract does not check it is UTF-8.
* `AnswerSource`: `LogNewAnswer` events (of some questions, or all) through `LogScanner`,
  each delivered once: a counter-answer to ours shows here.
* `RealityAnswerer`: `submitAnswer` through the `TxManager`, one intent per (question,
  round) under the key `reality-answer:<chain id>:<contract>:<question id>:<round>`, its
  subject `reality-round:<same>`. The round is the bond the answer replies to (0 for the
  first answer): bonds at least double, so each round has its own, and `max_previous` is
  that bond. The pre-send check is "the bond is no longer the one planned on, or the
  question is not open": an answer someone gave meanwhile is recorded as SKIPPED and
  reported, never sent. Never over our own standing answer with the same answer.
  A question not open now (before `opening_ts`, finalized or finalizing within
  `min_time_left`, pending arbitration) or a bond above `max_bond` is refused before
  anything is recorded (`AnswerRefused`), and the balance is checked (`BondShortfall`).
  `commit` posts the answer's hash instead (`submitAnswerCommitment`, for where answers
  get front-run; the same round, checks and refusals) with a nonce derived from the
  signer's EIP-712 signature, so `reveal` (`submitAnswerReveal`) can recompute it after a
  restart; a signer whose signatures vary is refused before anything is committed. An
  answer and a commitment of the same round share its subject: one of them is sent.
  `claim` rebuilds the history from the logs and sends `claimWinnings`, then `withdraw`,
  each once; `claim_many` claims several questions and withdraws in one
  `claimMultipleAndWithdrawBalance`. On the ERC-20 contract each answer or commitment is
  preceded by `approve(contract, bond)` of exactly its bond (`reality-approve:` intents).

The contracts are Reality.eth's own, compiled from `@reality.eth/contracts`
(`contracts/scripts/build-reality.js`) into `oracle/chain/artifacts/reality/`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any

from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak
from hexbytes import HexBytes

from oracle.chain.checkpoint import CheckpointStore
from oracle.chain.contracts import _Contract, load_artifact
from oracle.chain.deploy import creation_code
from oracle.chain.erc20 import Erc20
from oracle.chain.events import DecodedLog, EventDecoder, address_topic
from oracle.chain.intents import Intent, IntentState
from oracle.chain.keys import Signer
from oracle.chain.rpc import RpcPool, RpcUnavailable, Web3
from oracle.chain.scanner import LogScanner
from oracle.chain.settings import ScannerSettings
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import (
    AnswerRefused,
    BondShortfall,
    DeploymentError,
    RevealMissed,
    TxError,
)
from oracle.log import emit
from oracle.venues.reality.rules import (
    DEFAULT_TEMPLATES,
    NULL_HASH,
    HistoryEntry,
    Phase,
    RealityQuestion,
    answer_hash,
    batch_claim_arguments,
    bond_accepts,
    claim_arguments,
    commitment_id,
    history_hash,
    minimum_next_bond,
    parse_question,
    phase,
    question_id,
    question_id_v2_1,
)

logger = logging.getLogger(__name__)

REALITY_ETH = "reality/RealityETH_v3_0"
REALITY_ETH_V2_1 = "reality/Realitio_v2_1"  # Reality.eth v2.1: where Omen asks on Gnosis chain
REALITY_ETH_ERC20 = "reality/RealityETH_ERC20_v3_0"  # v3, bonds in an ERC-20 token
REALITY_ARBITRATOR = "reality/RealityArbitrator"  # the tests' arbitrator
REALITY_CONTRACTS = (REALITY_ETH, REALITY_ETH_V2_1, REALITY_ETH_ERC20, REALITY_ARBITRATOR)
VERSIONS = ("v3", "v2.1")  # the contract versions answered (ERC-20 bonds: v3 only)
NEW_QUESTION = "LogNewQuestion"
NEW_ANSWER = "LogNewAnswer"
ARBITRATION_REQUEST = "LogNotifyOfArbitrationRequest"
FINALIZE = "LogFinalize"
WITHDRAW = "LogWithdraw"
ANSWER_PREFIX = "reality-answer:"
COMMIT_PREFIX = "reality-commit:"
REVEAL_PREFIX = "reality-reveal:"
ROUND_PREFIX = "reality-round:"
CLAIM_PREFIX = "reality-claim:"
CLAIM_MANY_PREFIX = "reality-claim-many:"
APPROVE_PREFIX = "reality-approve:"
WITHDRAW_PREFIX = "reality-withdraw:"
ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
NATIVE = "native"  # the bond currency of RealityETH_v3_0 and v2.1: the chain's own
DEFAULT_MIN_TIME_LEFT = 30  # seconds: an answer this close to finalization may land too late


def _answer_bytes(answer: bytes) -> bytes:
    raw = bytes(answer)
    if len(raw) != 32:
        raise ValueError("answer: expected 32 bytes")
    return raw


def commitment_typed_data(
    chain_id: int, contract: str, question: bytes, answer: bytes, bond: int
) -> dict[str, Any]:
    """The EIP-712 document whose signature seeds a commitment's nonce (never sent)."""
    return {
        "types": {
            "EIP712Domain": [
                {"name": "name", "type": "string"},
                {"name": "version", "type": "string"},
                {"name": "chainId", "type": "uint256"},
                {"name": "verifyingContract", "type": "address"},
            ],
            "RealityCommitment": [
                {"name": "questionId", "type": "bytes32"},
                {"name": "answer", "type": "bytes32"},
                {"name": "bond", "type": "uint256"},
            ],
        },
        "primaryType": "RealityCommitment",
        "domain": {
            "name": "oracle: Reality.eth commitment nonce",
            "version": "1",
            "chainId": chain_id,
            "verifyingContract": to_checksum_address(contract),
        },
        "message": {"questionId": question, "answer": answer, "bond": bond},
    }


def question_bytes(value: bytes | str) -> bytes:
    raw = bytes(HexBytes(value))
    if len(raw) != 32:
        raise ValueError("question id: expected 32 bytes")
    return raw


def _hex(value: bytes) -> str:
    return HexBytes(value).to_0x_hex()


@dataclass(frozen=True)
class QuestionView:
    """A question as the public `questions(bytes32)` struct shows it, read at block time
    `now`."""

    question_id: bytes
    content_hash: bytes
    arbitrator: str
    opening_ts: int
    timeout: int
    finalize_ts: int
    pending_arbitration: bool
    bounty: int
    best_answer: bytes
    history_hash: bytes
    bond: int
    min_bond: int
    now: int

    @property
    def id_hex(self) -> str:
        return _hex(self.question_id)

    @property
    def phase(self) -> Phase:
        return phase(
            timeout=self.timeout,
            opening_ts=self.opening_ts,
            finalize_ts=self.finalize_ts,
            pending_arbitration=self.pending_arbitration,
            now=self.now,
        )

    @property
    def answered(self) -> bool:
        return self.finalize_ts != 0

    @property
    def next_bond(self) -> int:
        """The smallest bond the next answer may post."""
        return minimum_next_bond(self.bond, self.min_bond)


def _question_view(qid: bytes, row: tuple[Any, ...], now: int) -> QuestionView:
    return QuestionView(
        question_id=qid,
        content_hash=bytes(row[0]),
        arbitrator=to_checksum_address(row[1]),
        opening_ts=int(row[2]),
        timeout=int(row[3]),
        finalize_ts=int(row[4]),
        pending_arbitration=bool(row[5]),
        bounty=int(row[6]),
        best_answer=bytes(row[7]),
        history_hash=bytes(row[8]),
        bond=int(row[9]),
        min_bond=int(row[10]) if len(row) > 10 else 0,  # v2.1 has none
        now=now,
    )


@dataclass(frozen=True)
class AnswerLog:
    """One `LogNewAnswer`: the question, the history entry, the history hash after it,
    when and where."""

    question_id: bytes
    entry: HistoryEntry
    history_hash: bytes
    ts: int
    block_number: int
    tx_hash: str
    log_index: int

    @classmethod
    def from_log(cls, log: DecodedLog) -> AnswerLog:
        args = log.args
        return cls(
            question_id=bytes(args["question_id"]),
            entry=HistoryEntry(
                answer=bytes(args["answer"]),
                bond=int(args["bond"]),
                answerer=to_checksum_address(args["user"]),
                is_commitment=bool(args["is_commitment"]),
            ),
            history_hash=bytes(args["history_hash"]),
            ts=int(args["ts"]),
            block_number=log.block_number,
            tx_hash=log.tx_hash,
            log_index=log.log_index,
        )


class RealityETH(_Contract):
    """Reality.eth v3 with bonds in the native token (`RealityETH_v3_0`); the subclasses
    are the other contracts the daemon answers on (`reality_contract` picks one)."""

    artifact_name = REALITY_ETH
    version = "v3"
    bond_token: str | None = None  # None: bonds in the chain's own token
    reopenable = True  # `reopenQuestion` (v3's RealityETHReopenable)

    @property
    def currency(self) -> str:
        """The bond currency: `native`, or the ERC-20 token's address."""
        return NATIVE if self.bond_token is None else self.bond_token

    def derived_id(
        self,
        *,
        template_id: int,
        opening_ts: int,
        text: str,
        arbitrator: str,
        timeout: int,
        min_bond: int,
        asker: str,
        nonce: int,
    ) -> bytes:
        """The id this contract gives the question `asker` asks with these terms."""
        return question_id(
            template_id=template_id,
            opening_ts=opening_ts,
            question=text,
            arbitrator=arbitrator,
            timeout=timeout,
            min_bond=min_bond,
            contract=self.address,
            asker=asker,
            nonce=nonce,
        )

    @property
    def has_batch_claim(self) -> bool:
        """Whether claims of several questions go in one `claimMultipleAndWithdrawBalance`."""
        return any(
            entry.get("name") == "claimMultipleAndWithdrawBalance" for entry in self.artifact.abi
        )

    def at(self, address: str) -> RealityETH:
        """The same kind of contract at `address`."""
        return reality_contract(
            self.pool, address, version=self.version, bond_token=self.bond_token
        )

    def answer_call(self, question: bytes, answer: bytes, max_previous: int, bond: int) -> str:
        """`submitAnswer` calldata (the bond is the transaction's value)."""
        return self.encode("submitAnswer", question, answer, max_previous)

    def commitment_call(self, question: bytes, hashed: bytes, max_previous: int, bond: int) -> str:
        """`submitAnswerCommitment` calldata (the bond is the transaction's value)."""
        return self.encode("submitAnswerCommitment", question, hashed, max_previous, ZERO_ADDRESS)

    def bond_of(self, data: str, value: int) -> int:
        """The bond a transaction of ours to this contract posts (calldata, value)."""
        return value

    def value_of(self, bond: int) -> int:
        """The transaction value that posts `bond`."""
        return bond

    async def block_time(self) -> int:
        """The latest block's timestamp: the contract's idea of now."""

        async def run(w3: Web3) -> Any:
            return await w3.eth.get_block("latest")

        block = await self.pool.call("eth_getBlockByNumber", run)
        return int(block["timestamp"])

    async def get_question(self, qid: bytes | str) -> QuestionView:
        (view,) = await self.get_questions([qid])
        return view

    async def get_questions(self, qids: Sequence[bytes | str]) -> list[QuestionView]:
        """The questions `qids`, in order: one JSON-RPC batch of `questions(id)`, and the
        block time."""
        if not qids:
            return []
        ids = [question_bytes(q) for q in qids]
        rows, now = await asyncio.gather(
            self.read_many("questions", [(q,) for q in ids]), self.block_time()
        )
        return [_question_view(q, row, now) for q, row in zip(ids, rows, strict=True)]

    async def get_bond(self, qid: bytes | str) -> int:
        return int(await self.read("getBond", question_bytes(qid)))

    async def get_min_bond(self, qid: bytes | str) -> int:
        if self.version == "v2.1":
            return 0  # v2.1 has no minimum bond: any bond above zero
        return int(await self.read("getMinBond", question_bytes(qid)))

    async def get_best_answer(self, qid: bytes | str) -> bytes:
        return bytes(await self.read("getBestAnswer", question_bytes(qid)))

    async def get_history_hash(self, qid: bytes | str) -> bytes:
        return bytes(await self.read("getHistoryHash", question_bytes(qid)))

    async def is_finalized(self, qid: bytes | str) -> bool:
        return bool(await self.read("isFinalized", question_bytes(qid)))

    async def get_final_answer(self, qid: bytes | str) -> bytes | None:
        """The final answer; None while the question is not finalized (the contract's
        `getFinalAnswer` reverts then)."""
        if not await self.is_finalized(qid):
            return None
        return bytes(await self.read("getFinalAnswer", question_bytes(qid)))

    async def balance_of(self, account: str) -> int:
        """What the contract holds for `account`, to `withdraw`."""
        return int(await self.read("balanceOf", to_checksum_address(account)))

    async def logs(self, event: str, qid: bytes | str, from_block: int = 0) -> list[DecodedLog]:
        """The `event` logs of question `qid` (its first indexed argument), in order."""
        decoder = _decoder(event)
        params = {
            "address": self.address,
            "topics": [decoder.topic, _hex(question_bytes(qid))],
            "fromBlock": from_block,
            "toBlock": "latest",
        }

        async def run(w3: Web3) -> Any:
            return await w3.eth.get_logs(params)  # type: ignore[arg-type]

        raw = await self.pool.call("eth_getLogs", run)
        logs = [decoder.decode(entry) for entry in raw if not entry.get("removed")]
        return sorted(logs, key=lambda log: (log.block_number, log.log_index))

    async def history(self, qid: bytes | str, from_block: int = 0) -> list[AnswerLog]:
        """The question's answers, oldest first, from its `LogNewAnswer` logs."""
        return [AnswerLog.from_log(log) for log in await self.logs(NEW_ANSWER, qid, from_block)]

    async def arbitration_requests(self, qid: bytes | str, from_block: int = 0) -> list[str]:
        """Who requested arbitration (`LogNotifyOfArbitrationRequest`), in order."""
        logs = await self.logs(ARBITRATION_REQUEST, qid, from_block)
        return [to_checksum_address(log.args["user"]) for log in logs]

    async def finalizations(self, qid: bytes | str, from_block: int = 0) -> list[bytes]:
        """The arbitrator's answers (`LogFinalize`), in order."""
        return [bytes(log.args["answer"]) for log in await self.logs(FINALIZE, qid, from_block)]

    async def deployment_problem(self) -> str | None:
        """None when the contract at the address is the one this binding is for (its
        version, and its bond token); else what it is instead. Probed with the functions
        only some versions have: v3's `getMinBond`, the ERC-20 flavour's `token()`."""
        v3 = await _answers(RealityETH(self.pool, self.address), "getMinBond", NULL_HASH)
        token = await _answers(RealityETHERC20(self.pool, self.address, ZERO_ADDRESS), "token")
        if self.version == "v2.1":
            return "it has v3's getMinBond: not Reality.eth v2.1 (contract: v3)" if v3 else None
        if not v3:
            return "it has no getMinBond: not Reality.eth v3 (v2.1? contract: v2.1)"
        if self.bond_token is None:
            if token:
                return "it takes bonds in an ERC-20 token (token()): set bond_token"
            return None
        if not token:
            return "it has no token(): not RealityETH_ERC20 (bonds in the native token)"
        actual = await RealityETHERC20(self.pool, self.address, ZERO_ADDRESS).token()
        if actual != self.bond_token:
            return f"its bond token is {actual}, not bond_token {self.bond_token}"
        return None

    async def withdrawn_in(self, tx_hash: str) -> int:
        """What the contract paid out (`LogWithdraw`) in the transaction `tx_hash`."""

        async def run(w3: Web3) -> Any:
            return await w3.eth.get_transaction_receipt(HexBytes(tx_hash))

        receipt = await self.pool.call("eth_getTransactionReceipt", run)
        decoder = _decoder(WITHDRAW)
        return sum(
            int(decoder.decode(entry).args["amount"])
            for entry in receipt["logs"]
            if entry["address"].lower() == self.address.lower()
            and entry["topics"]
            and HexBytes(entry["topics"][0]).to_0x_hex() == decoder.topic
        )


class RealitioV21(RealityETH):
    """Reality.eth v2.1 (`Realitio_v2_1`, native-token bonds): where Omen asks on Gnosis
    chain (0x79e32aE03fb27B07C89c0c568F80287C01ca2E57). As v3 for the daemon, but no
    minimum bond (its question struct has no `min_bond`), no `reopenQuestion`, question
    ids without the contract's address, and the bounty queued with the bonds when claimed
    (`claim_payouts(bounty_queued=True)`)."""

    artifact_name = REALITY_ETH_V2_1
    version = "v2.1"
    reopenable = False

    def derived_id(
        self,
        *,
        template_id: int,
        opening_ts: int,
        text: str,
        arbitrator: str,
        timeout: int,
        min_bond: int,
        asker: str,
        nonce: int,
    ) -> bytes:
        if min_bond:
            raise ValueError("min_bond: Reality.eth v2.1 has no minimum bond")
        return question_id_v2_1(
            template_id=template_id,
            opening_ts=opening_ts,
            question=text,
            arbitrator=arbitrator,
            timeout=timeout,
            asker=asker,
            nonce=nonce,
        )


class RealityETHERC20(RealityETH):
    """Reality.eth v3 with bonds in an ERC-20 token (`RealityETH_ERC20_v3_0`, its `token()`):
    an answer is `submitAnswerERC20(question_id, answer, max_previous, tokens)`, the
    contract pulling `tokens` with `transferFrom` (so the answerer approves exactly that
    first); claims and withdrawals pay tokens."""

    artifact_name = REALITY_ETH_ERC20

    def __init__(self, pool: RpcPool, address: str, bond_token: str) -> None:
        super().__init__(pool, address)
        self.bond_token = to_checksum_address(bond_token)

    def answer_call(self, question: bytes, answer: bytes, max_previous: int, bond: int) -> str:
        return self.encode("submitAnswerERC20", question, answer, max_previous, bond)

    def commitment_call(self, question: bytes, hashed: bytes, max_previous: int, bond: int) -> str:
        return self.encode(
            "submitAnswerCommitmentERC20", question, hashed, max_previous, ZERO_ADDRESS, bond
        )

    def bond_of(self, data: str, value: int) -> int:
        _, args = self.decode_call(data)
        return int(args.get("tokens", 0))

    def value_of(self, bond: int) -> int:
        return 0

    async def token(self) -> str:
        """The contract's bond token, as it says (`token()`)."""
        return to_checksum_address(await self.read("token"))


def reality_contract(
    pool: RpcPool, address: str, *, version: str = "v3", bond_token: str | None = None
) -> RealityETH:
    """The binding of a Reality.eth contract: `version` v3 (`RealityETH_v3_0`, or
    `RealityETH_ERC20_v3_0` with a `bond_token`) or v2.1 (`Realitio_v2_1`; native bonds
    only: the package has no ERC-20 v2.1)."""
    if version not in VERSIONS:
        raise ValueError(f"version: one of {', '.join(VERSIONS)}, got {version!r:.20}")
    if bond_token is not None:
        if version != "v3":
            raise ValueError("bond_token: ERC-20 bonds are answered on v3 only")
        return RealityETHERC20(pool, address, bond_token)
    return RealitioV21(pool, address) if version == "v2.1" else RealityETH(pool, address)


async def _answers(contract: RealityETH, function: str, *args: Any) -> bool:
    """Whether `function` answers a call (False: the contract reverts it)."""
    try:
        await contract.read(function, *args)
    except RpcUnavailable:
        raise
    except Exception:  # a revert, however web3 words it: the function is not there
        return False
    return True


_DECODERS: dict[str, EventDecoder] = {}


def _decoder(event: str) -> EventDecoder:
    decoder = _DECODERS.get(event)
    if decoder is None:
        decoder = EventDecoder(load_artifact(REALITY_ETH).abi, event, strings_as_bytes=True)
        _DECODERS[event] = decoder
    return decoder


# --- discovery ----------------------------------------------------------------------------


@dataclass(frozen=True)
class NewQuestion:
    """One `LogNewQuestion` event; `text` as logged (bytes: not checked to be UTF-8)."""

    question_id: bytes
    asker: str
    template_id: int
    text: bytes
    content_hash: bytes
    arbitrator: str
    timeout: int
    opening_ts: int
    nonce: int
    created: int
    block_number: int
    tx_hash: str
    log_index: int

    @property
    def id_hex(self) -> str:
        return _hex(self.question_id)

    def question(self, templates: Collection[int] = DEFAULT_TEMPLATES) -> RealityQuestion:
        """The text read as a question (`RealityQuestionError` when it cannot be)."""
        return parse_question(self.template_id, self.text, templates=templates)

    @classmethod
    def from_log(cls, log: DecodedLog) -> NewQuestion:
        args = log.args
        return cls(
            question_id=bytes(args["question_id"]),
            asker=to_checksum_address(args["user"]),
            template_id=int(args["template_id"]),
            text=bytes(args["question"]),
            content_hash=bytes(args["content_hash"]),
            arbitrator=to_checksum_address(args["arbitrator"]),
            timeout=int(args["timeout"]),
            opening_ts=int(args["opening_ts"]),
            nonce=int(args["nonce"]),
            created=int(args["created"]),
            block_number=log.block_number,
            tx_hash=log.tx_hash,
            log_index=log.log_index,
        )


def _question_id_of(log: DecodedLog) -> str:
    return _hex(bytes(log.args["question_id"]))


class QuestionSource:
    """Questions asked on a RealityETH_v3_0 by `askers` (None: anyone) with one of
    `arbitrators` (None: any) and one of `templates`, from its `LogNewQuestion` events
    (see `LogScanner`)."""

    def __init__(
        self,
        pool: RpcPool,
        reality_address: str,
        checkpoints: CheckpointStore,
        settings: ScannerSettings | None = None,
        *,
        arbitrators: Sequence[str] | None = None,
        templates: Collection[int] = DEFAULT_TEMPLATES,
        askers: Sequence[str] | None = None,
        start_block: int = 0,
        name: str = "reality-questions",
    ) -> None:
        for what, given in (("askers", askers), ("arbitrators", arbitrators)):
            if given is not None and not given:
                raise ValueError(f"{what}: name at least one, or None for any")
        if not templates:
            raise ValueError("templates: name at least one template id")
        self.askers = None if askers is None else frozenset(map(to_checksum_address, askers))
        self.arbitrators = (
            None if arbitrators is None else frozenset(map(to_checksum_address, arbitrators))
        )
        self.templates = frozenset(templates)
        # topics after the event's own: question_id (any), then user (the askers).
        topics: list[str | list[str] | None] = []
        if askers is not None:
            topics = [None, [address_topic(a) for a in askers]]
        self.scanner = LogScanner(
            pool,
            address=to_checksum_address(reality_address),
            decoder=_decoder(NEW_QUESTION),
            checkpoints=checkpoints,
            name=name,
            settings=settings,
            start_block=start_block,
            id_of=_question_id_of,
            topics=topics,
        )

    def _wanted(self, question: NewQuestion) -> bool:
        if self.askers is not None and question.asker not in self.askers:
            return False
        if self.arbitrators is not None and question.arbitrator not in self.arbitrators:
            return False
        return question.template_id in self.templates

    async def poll(
        self, handler: Callable[[list[NewQuestion]], Awaitable[None]] | None = None
    ) -> list[NewQuestion]:
        """New questions since the last poll; `handler` runs before the checkpoint moves."""
        return await self.scanner.poll_parsed(NewQuestion.from_log, handler, self._wanted)


class AnswerSource:
    """Answers given on a RealityETH_v3_0 (`LogNewAnswer`), to questions in `questions`
    (None: any; filtered by the node, the question id being the first indexed topic),
    through `LogScanner`, each delivered once: how the bond game is watched."""

    def __init__(
        self,
        pool: RpcPool,
        reality_address: str,
        checkpoints: CheckpointStore,
        settings: ScannerSettings | None = None,
        *,
        questions: Sequence[bytes | str] | None = None,
        start_block: int = 0,
        name: str = "reality-answers",
    ) -> None:
        if questions is not None and not questions:
            raise ValueError("questions: name at least one, or None for any")
        topics: list[str | list[str] | None] = []
        if questions is not None:
            topics = [[_hex(question_bytes(q)) for q in questions]]
        self.scanner = LogScanner(
            pool,
            address=to_checksum_address(reality_address),
            decoder=_decoder(NEW_ANSWER),
            checkpoints=checkpoints,
            name=name,
            settings=settings,
            start_block=start_block,
            topics=topics,
        )

    async def poll(
        self, handler: Callable[[list[AnswerLog]], Awaitable[None]] | None = None
    ) -> list[AnswerLog]:
        """New answers since the last poll, oldest first; `handler` runs before the
        checkpoint moves."""
        return await self.scanner.poll_parsed(AnswerLog.from_log, handler)


# --- answering and claiming -----------------------------------------------------------------


@dataclass(frozen=True)
class AnswerOutcome:
    """How answering a round ended. `intent`: ours (CONFIRMED: our answer is on-chain;
    SKIPPED: someone answered over the planned bond first, or the question closed, so
    nothing was sent; REVERTED: sent, and someone's answer was mined first, which
    `max_previous` turned into a revert costing only gas), or another signer's when a
    replica carries the round. `question`: as read afterwards."""

    intent: Intent
    question: QuestionView
    planned_bond: int  # the bond we replied to: the round
    bond: int  # the bond we posted (or would have)
    standing_answerer: str | None  # who gave the standing answer (None: nobody yet)
    account: str  # ours

    @property
    def answered(self) -> bool:
        return self.intent.state == IntentState.CONFIRMED

    @property
    def standing_ours(self) -> bool:
        """The answer that stands now is ours (whatever this call did)."""
        return (self.standing_answerer or "").lower() == self.account.lower()

    @property
    def superseded(self) -> bool:
        """Someone else answered this round first (not an error)."""
        return (
            not self.answered and not self.standing_ours and self.question.bond != self.planned_bond
        )


def _walk_starts(before: bytes, answer: bytes, bond: int, answerer: str) -> set[bytes]:
    """The history hash a claim walk whose newest entry is (answer, bond, answerer), after
    the hash `before`, starts from (the entry a commitment or not)."""
    return {
        history_hash(
            bytes(before),
            HistoryEntry(bytes(answer), int(bond), str(answerer), is_commitment=commitment),
        )
        for commitment in (False, True)
    }


@dataclass(frozen=True)
class BatchClaimOutcome:
    """Claims of several questions: the transactions sent (one
    `claimMultipleAndWithdrawBalance`, or each question's `claimWinnings` and `withdraw`
    where the contract has no batch), the questions claimed (0x ids), and what was
    withdrawn (the contract's `LogWithdraw`)."""

    intents: tuple[Intent, ...]
    claimed: tuple[str, ...]
    withdrawn: int


@dataclass(frozen=True)
class ClaimOutcome:
    """`claimWinnings` (None: nothing left to claim) and `withdraw` (None: nothing to
    withdraw), and how much the withdrawal paid out."""

    claim: Intent | None
    withdraw: Intent | None
    withdrawn: int


class RealityAnswerer:
    """Answers questions on a RealityETH_v3_0 and claims, through one `TxManager`.

    `max_bond`: the largest bond one answer may post (None: no cap); `min_time_left`:
    seconds before finalization under which an answer is not sent; `signer`: the
    manager's signer, needed only to commit and reveal; `logs_from_block`: the block the
    answer history is read from (the contract's deployment).

    It never answers over its own standing answer with the same answer: asked to, it
    returns the round we answered (its intent, or a SKIPPED record when the intents were
    lost), or refuses when the caller named that bond."""

    def __init__(
        self,
        manager: TxManager,
        reality: RealityETH,
        *,
        max_bond: int | None = None,
        min_time_left: int = DEFAULT_MIN_TIME_LEFT,
        signer: Signer | None = None,
        logs_from_block: int = 0,
    ) -> None:
        if max_bond is not None and max_bond <= 0:
            raise ValueError("max_bond: a positive amount, or None for no cap")
        if min_time_left < 0:
            raise ValueError("min_time_left: seconds, at least 0")
        self.manager = manager
        self.reality = reality
        self.max_bond = max_bond
        self.min_time_left = min_time_left
        self.signer = signer  # the manager's own: only commit-reveal needs it
        self.logs_from_block = logs_from_block  # where the contract's logs start
        # For intents found in the store after a restart (no callback at hand).
        here = {"contract": reality.address}  # venues sharing the manager: each its own
        manager.register_precheck(ANSWER_PREFIX, self._recorded_answer_done, **here)
        manager.register_precheck(COMMIT_PREFIX, self._recorded_answer_done, **here)
        manager.register_precheck(REVEAL_PREFIX, self._recorded_reveal_done, **here)
        manager.register_precheck(CLAIM_PREFIX, self._recorded_claim_done, **here)
        manager.register_precheck(WITHDRAW_PREFIX, self._recorded_withdraw_done, **here)
        manager.register_precheck(CLAIM_MANY_PREFIX, self._recorded_claim_many_done, **here)
        # An approval is sent to the token; its key names the contract it is for.
        manager.register_precheck(APPROVE_PREFIX, self._recorded_approve_done)

    # -- keys -------------------------------------------------------------------------------

    def _where(self) -> str:
        return f"{self.manager.chain_id}:{self.reality.address.lower()}"

    def answer_key(self, qid: bytes | str, planned_bond: int) -> str:
        """The idempotency key of our answer over `planned_bond`."""
        return f"{ANSWER_PREFIX}{self._where()}:{_hex(question_bytes(qid))}:{planned_bond}"

    def commit_key(self, qid: bytes | str, planned_bond: int) -> str:
        """The idempotency key of our commitment over `planned_bond`."""
        return f"{COMMIT_PREFIX}{self._where()}:{_hex(question_bytes(qid))}:{planned_bond}"

    def round_subject(self, qid: bytes | str, planned_bond: int) -> str:
        """What an answer or a commitment over `planned_bond` acts on: one per round."""
        return f"{ROUND_PREFIX}{self._where()}:{_hex(question_bytes(qid))}:{planned_bond}"

    def claim_key(self, qid: bytes | str) -> str:
        return f"{CLAIM_PREFIX}{self._where()}:{_hex(question_bytes(qid))}"

    def withdraw_key(self, qid: bytes | str) -> str:
        return f"{WITHDRAW_PREFIX}{self._where()}:{_hex(question_bytes(qid))}"

    # -- pre-send checks --------------------------------------------------------------------

    async def _round_over(self, qid: bytes, planned_bond: int) -> bool:
        view = await self.reality.get_question(qid)
        return view.bond != planned_bond or view.phase != Phase.OPEN

    def _recorded_reality(self, intent: Intent) -> RealityETH:
        return self.reality.at(intent.to or self.reality.address)

    async def _recorded_answer_done(self, intent: Intent) -> bool:
        reality = self._recorded_reality(intent)
        _, args = reality.decode_call(intent.data)
        view = await reality.get_question(bytes(args["question_id"]))
        return view.bond != int(args["max_previous"]) or view.phase != Phase.OPEN

    async def _recorded_reveal_done(self, intent: Intent) -> bool:
        reality = self._recorded_reality(intent)
        _, args = reality.decode_call(intent.data)
        question, bond = bytes(args["question_id"]), int(args["bond"])
        hashed = answer_hash(bytes(args["answer"]), int(args["nonce"]))
        return await self._reveal_done(reality, commitment_id(question, hashed, bond))

    async def _recorded_claim_done(self, intent: Intent) -> bool:
        reality = self._recorded_reality(intent)
        _, args = reality.decode_call(intent.data)
        starts = _walk_starts(
            args["history_hashes"][0], args["answers"][0], args["bonds"][0], args["addrs"][0]
        )
        return await reality.get_history_hash(bytes(args["question_id"])) not in starts

    async def _recorded_claim_many_done(self, intent: Intent) -> bool:
        reality = self._recorded_reality(intent)
        _, args = reality.decode_call(intent.data)
        questions = [bytes(q) for q in args["question_ids"]]
        firsts = [sum(args["lengths"][:i]) for i in range(len(questions))]
        walks = [
            _walk_starts(
                args["hist_hashes"][i], args["answers"][i], args["bonds"][i], args["addrs"][i]
            )
            for i in firsts
        ]
        # Done (or moot) once any of its questions is no longer where the batch starts:
        # its walk there would revert the whole transaction.
        current = [await reality.get_history_hash(q) for q in questions]
        return any(now not in starts for now, starts in zip(current, walks, strict=True))

    async def _recorded_approve_done(self, intent: Intent) -> bool:
        """An approval found after a restart: not needed once the allowance is that bond,
        or once its round is over (answered by someone else, or the question closed)."""
        token = Erc20(self.manager.pool, intent.to or "")
        _, args = token.decode_call(intent.data)
        spender, amount = list(args.values())
        if await token.allowance(self.manager.address, spender) == int(amount):
            return True
        # reality-approve:<chain id>:<contract>:<question id>:<round>:<attempt>
        *_, contract, question, planned, _ = intent.key.split(":")
        view = await self.reality.at(contract).get_question(question)
        return view.bond != int(planned) or view.phase != Phase.OPEN

    async def _recorded_withdraw_done(self, intent: Intent) -> bool:
        return await self._recorded_reality(intent).balance_of(self.manager.address) == 0

    # -- answering --------------------------------------------------------------------------

    async def answer(
        self,
        qid: bytes | str,
        answer: bytes,
        *,
        planned_bond: int | None = None,
        bond: int | None = None,
    ) -> AnswerOutcome:
        """Answer `qid` with `answer` (bytes32, `oracle.venues.reality.rules.encode_answer`) over
        the current bond, or over `planned_bond` (the bond the caller decided against: if
        the question's bond has moved since, the round is recorded as SKIPPED and nothing
        is sent). `bond`: what to post, at least the smallest the contract takes (the
        default). A round already answered (or being answered) returns its intent."""
        raw = _answer_bytes(answer)

        async def calldata(question: bytes, planned: int, posted: int) -> str:
            return self.reality.answer_call(question, raw, planned, posted)

        return await self._round(
            ANSWER_PREFIX, qid, raw, calldata, planned_bond=planned_bond, bond=bond
        )

    async def commit(
        self,
        qid: bytes | str,
        answer: bytes,
        *,
        planned_bond: int | None = None,
        bond: int | None = None,
    ) -> AnswerOutcome:
        """`answer`'s commitment (`submitAnswerCommitment`), for where answers get
        front-run: as `answer` (the same round, pre-send check and refusals; a round holds
        one answer or one commitment), but what is posted is the hash of the answer and a
        nonce the signer derives (`commitment_nonce`), so it can be recomputed to `reveal`
        within the reveal window (a question's timeout / 8) after a restart."""
        raw = _answer_bytes(answer)

        async def calldata(question: bytes, planned: int, posted: int) -> str:
            nonce = await self.commitment_nonce(question, raw, posted)
            hashed = answer_hash(raw, nonce)
            return self.reality.commitment_call(question, hashed, planned, posted)

        return await self._round(
            COMMIT_PREFIX, qid, raw, calldata, planned_bond=planned_bond, bond=bond
        )

    async def commitment_nonce(self, question: bytes, answer: bytes, bond: int) -> int:
        """The nonce of our commitment of `answer` with `bond`: the hash of the signer's
        EIP-712 signature over them, secret and the same after a restart. Signed twice and
        compared: a signer whose signatures vary could never reveal, so it is refused
        before anything is committed."""
        if self.signer is None or self.signer.address != self.manager.address:
            raise TxError("commit-reveal needs the manager's own signer (signer=...)")
        document = commitment_typed_data(
            self.manager.chain_id, self.reality.address, question, answer, bond
        )
        first = await self.signer.sign_typed_data(document)
        if await self.signer.sign_typed_data(document) != first:
            raise TxError(
                "the signer's signatures are not deterministic, so a commitment's nonce "
                "could not be recomputed to reveal it: commit-reveal is refused"
            )
        return int.from_bytes(keccak(first), "big")

    async def reveal(self, qid: bytes | str, answer: bytes, bond: int) -> Intent:
        """Reveal our commitment of `answer` with `bond` (`submitAnswerReveal`), once.
        Recorded SKIPPED when it is revealed already; `AnswerRefused` when there is no such
        commitment, `RevealMissed` (one) when its reveal deadline passed."""
        question, raw = question_bytes(qid), _answer_bytes(answer)
        nonce = await self.commitment_nonce(question, raw, bond)
        commitment = commitment_id(question, answer_hash(raw, nonce), bond)
        deadline, revealed, _ = await self.reality.read("commitments", commitment)
        if int(deadline) == 0:
            raise AnswerRefused(_hex(question), f"no commitment of ours with bond {bond}")
        now = await self.reality.block_time()
        if not revealed and int(deadline) <= now:
            raise RevealMissed(_hex(question), f"the reveal deadline {deadline} has passed")
        key = f"{REVEAL_PREFIX}{self._where()}:{_hex(question)}:{bond}"

        async def done() -> bool:
            return await self._reveal_done(self.reality, commitment)

        intent = await self.manager.submit(
            TxRequest(
                key=key,
                to=self.reality.address,
                data=self.reality.encode("submitAnswerReveal", question, raw, nonce, bond),
                already_done=done,
                just_checked=not revealed,
                subjects=(key,),
            )
        )
        emit(logger, logging.INFO, "reality.reveal", key=key, state=intent.state)
        return intent

    async def _reveal_done(self, reality: RealityETH, commitment: bytes) -> bool:
        deadline, revealed, _ = await reality.read("commitments", commitment)
        return bool(revealed) or int(deadline) <= await reality.block_time()

    async def _round(
        self,
        prefix: str,
        qid: bytes | str,
        answer: bytes,
        calldata: Callable[[bytes, int, int], Awaitable[str]],
        *,
        planned_bond: int | None,
        bond: int | None,
    ) -> AnswerOutcome:
        question = question_bytes(qid)
        view = await self.reality.get_question(question)
        planned = view.bond if planned_bond is None else planned_bond
        if planned > view.bond:
            raise ValueError(
                f"planned_bond {planned} is above question {view.id_hex}'s bond {view.bond}: "
                "bonds only grow"
            )
        if view.bond and planned == view.bond:
            # About to answer over the standing answer: never over our own. Asked again
            # (after a restart), the round we answered is the one meant.
            ours = await self._round_of_ours(question, answer, prefix == COMMIT_PREFIX)
            if ours is not None:
                if planned_bond is not None:
                    raise AnswerRefused(
                        view.id_hex,
                        "the standing answer is ours: answering over it would only raise "
                        "our own bond",
                    )
                planned = ours
        key = f"{prefix}{self._where()}:{_hex(question)}:{planned}"
        posted = minimum_next_bond(planned, view.min_bond) if bond is None else bond

        async def done() -> bool:
            return await self._round_over(question, planned)

        async def send() -> Intent:
            data = await calldata(question, planned, posted)

            def tx(just_checked: bool) -> TxRequest:
                return TxRequest(
                    key=key,
                    to=self.reality.address,
                    data=data,
                    value=self.reality.value_of(posted),
                    already_done=done,
                    just_checked=just_checked,
                    subjects=(self.round_subject(question, planned),),
                )

            if view.bond != planned:
                # Someone answered since the caller planned: recorded, never sent.
                return await self.manager.submit(tx(just_checked=False))
            self._refuse_unless_open(view, posted)
            token = self.reality.bond_token
            balance = (
                await self.manager.balance()
                if token is None
                else await Erc20(self.manager.pool, token).balance_of(self.manager.address)
            )
            if balance < posted:
                emit(
                    logger,
                    logging.WARNING,
                    "reality.bond_shortfall",
                    key=key,
                    token=self.reality.currency,
                    needed=posted,
                    balance=balance,
                )
                raise BondShortfall(key, self.reality.currency, posted, balance)
            if token is not None:
                await self._approve_exactly(question, planned, posted)
            return await self.manager.submit_or_skip(tx(just_checked=True))

        # A round held by another intent (ours under this key in a replica, or our
        # commitment where an answer was asked for, or the reverse) is that intent's.
        intent = await self.manager.submit_once(key, send)
        return await self._ended(question, intent, planned)

    def approve_key(self, qid: bytes | str, planned_bond: int, attempt: int = 0) -> str:
        """The idempotency key of the token approval for our bond over `planned_bond`."""
        where = f"{self._where()}:{_hex(question_bytes(qid))}:{planned_bond}"
        return f"{APPROVE_PREFIX}{where}:{attempt}"

    async def _approve_exactly(self, question: bytes, planned: int, bond: int) -> Intent | None:
        """Let the contract pull exactly `bond` of the bond token (ERC-20 contracts): an
        approval of that amount, never more, unless the allowance is that already (None).
        One intent per round; a later attempt in the same round (the answer reverted, the
        allowance left or spent) gets the next key."""
        token = Erc20(self.manager.pool, self.reality.bond_token or "")
        us, spender = self.manager.address, self.reality.address

        async def exact() -> bool:
            return await token.allowance(us, spender) == bond

        async def needless() -> bool:
            return await exact() or await self._round_over(question, planned)

        if await exact():
            return None
        attempt = 0
        while True:  # the first key not yet used: a confirmed approval was spent since
            key = self.approve_key(question, planned, attempt)
            recorded = await self.manager.carrier(key)
            if recorded is None:
                break
            if not recorded.final:
                recorded = await self.manager.wait(key)
                if await exact():
                    return recorded
            attempt += 1
        intent = await self.manager.submit(
            TxRequest(
                key=key,
                to=token.address,
                data=token.encode("approve", spender, bond),
                already_done=needless,
                just_checked=True,
                subjects=(key,),
            )
        )
        if intent.state not in (IntentState.CONFIRMED, IntentState.SKIPPED):
            raise TxError(f"{key}: the approval ended {intent.state.value}: {intent.error}")
        emit(
            logger,
            logging.INFO,
            "reality.approve",
            key=key,
            token=token.address,
            spender=spender,
            amount=bond,
            state=intent.state,
        )
        return intent

    def _refuse_unless_open(self, view: QuestionView, bond: int) -> None:
        current = view.phase
        if current != Phase.OPEN:
            when = (
                f" (opens at {view.opening_ts}, now {view.now})"
                if current == Phase.NOT_OPEN
                else ""
            )
            raise AnswerRefused(view.id_hex, f"the question is {current.value}{when}")
        if view.answered and view.finalize_ts - view.now < self.min_time_left:
            raise AnswerRefused(
                view.id_hex,
                f"it finalizes in {view.finalize_ts - view.now}s, under the "
                f"{self.min_time_left}s an answer is given to land",
            )
        if not bond_accepts(bond, view.bond, view.min_bond):
            raise AnswerRefused(
                view.id_hex, f"a bond of {bond} is below the {view.next_bond} the contract takes"
            )
        if self.max_bond is not None and bond > self.max_bond:
            raise AnswerRefused(view.id_hex, f"the bond {bond} is above the cap of {self.max_bond}")

    async def _ended(self, question: bytes, intent: Intent, planned: int) -> AnswerOutcome:
        view = await self.reality.get_question(question)
        standing = await self._standing(question) if view.bond else None
        outcome = AnswerOutcome(
            intent,
            view,
            planned,
            self.reality.bond_of(intent.data, intent.value),
            standing.entry.answerer if standing is not None else None,
            self.manager.address,
        )
        emit(
            logger,
            logging.INFO if outcome.answered or not outcome.superseded else logging.WARNING,
            "reality.answer" if not outcome.superseded else "reality.answered_by_other",
            key=intent.key,
            state=intent.state,
            question=view.id_hex,
            planned_bond=planned,
            bond=view.bond,
            best_answer=_hex(view.best_answer),
            standing_answerer=outcome.standing_answerer,
        )
        return outcome

    async def _standing(self, question: bytes) -> AnswerLog | None:
        """The last bonded entry of the question's history (an arbitrator's bears none)."""
        history = await self.reality.history(question, self.logs_from_block)
        return next((h for h in reversed(history) if h.entry.bond > 0), None)

    async def _round_of_ours(self, question: bytes, answer: bytes, commitment: bool) -> int | None:
        """When the standing answer is ours and this one (or, for a commitment, a
        commitment of ours): the round it answered (the bond before it)."""
        history = await self.reality.history(question, self.logs_from_block)
        bonded = [h.entry for h in history if h.entry.bond > 0]
        if not bonded or bonded[-1].answerer.lower() != self.manager.address.lower():
            return None
        same = bonded[-1].is_commitment if commitment else bonded[-1].answer == answer
        if not same:
            return None  # ours, but another answer: correcting it is the caller's call
        if bonded[-1].is_commitment:
            deadline, revealed, _ = await self.reality.read("commitments", bonded[-1].answer)
            if not revealed and int(deadline) <= await self.reality.block_time():
                return None  # lost unrevealed: it stands for nothing, answering over it may
        return bonded[-2].bond if len(bonded) > 1 else 0

    # -- claiming ---------------------------------------------------------------------------

    async def claim(self, qid: bytes | str, *, from_block: int = 0) -> ClaimOutcome | None:
        """Once `qid` is finalized: rebuild its history from the `LogNewAnswer` logs (from
        `from_block`), `claimWinnings` (skipped when the history is claimed already), then
        `withdraw` what the contract holds for us (skipped when nothing). None while the
        question is not finalized."""
        question = question_bytes(qid)
        view = await self.reality.get_question(question)
        if view.phase != Phase.FINALIZED:
            return None
        claim: Intent | None = None
        if view.history_hash != NULL_HASH:
            history = await self.reality.history(question, from_block)
            try:
                arguments = claim_arguments([h.entry for h in history], view.history_hash)
            except ValueError as error:
                raise TxError(f"{self.claim_key(question)}: {error}") from None
            claimed_from = view.history_hash

            async def claimed() -> bool:
                return await self.reality.get_history_hash(question) != claimed_from

            claim = await self.manager.submit(
                TxRequest(
                    key=self.claim_key(question),
                    to=self.reality.address,
                    data=self.reality.encode("claimWinnings", *arguments.args(question)),
                    already_done=claimed,
                    just_checked=True,
                    subjects=(self.claim_key(question),),
                )
            )
            emit(
                logger,
                logging.INFO,
                "reality.claim",
                key=claim.key,
                state=claim.state,
                entries=len(arguments.bonds),
            )
        withdraw: Intent | None = None
        withdrawn = 0
        balance = await self.reality.balance_of(self.manager.address)
        if balance > 0:

            async def nothing_held() -> bool:
                return await self.reality.balance_of(self.manager.address) == 0

            withdraw = await self.manager.submit(
                TxRequest(
                    key=self.withdraw_key(question),
                    to=self.reality.address,
                    data=self.reality.encode("withdraw"),
                    already_done=nothing_held,
                    just_checked=True,
                    subjects=(self.withdraw_key(question),),
                )
            )
            if withdraw.state == IntentState.CONFIRMED:
                withdrawn = balance
            emit(
                logger,
                logging.INFO,
                "reality.withdraw",
                key=withdraw.key,
                state=withdraw.state,
                amount=withdrawn,
            )
        return ClaimOutcome(claim, withdraw, withdrawn)

    def claim_many_key(self, walks: Sequence[tuple[bytes, bytes]]) -> str:
        """The idempotency key of one batched claim: the questions and the history hash
        each walk starts from, hashed."""
        digest = keccak(b"".join(question + start for question, start in walks)).hex()
        return f"{CLAIM_MANY_PREFIX}{self._where()}:0x{digest}"

    async def claim_many(self, questions: Sequence[tuple[bytes | str, int]]) -> BatchClaimOutcome:
        """Claim every finalized question of `questions` (each with the block its
        `LogNewAnswer` logs are read from) whose history is not claimed yet, and withdraw:
        one `claimMultipleAndWithdrawBalance` where the contract has it, with each
        question's walk rebuilt from its logs as `claim` does; else `claim` one by one.
        Questions not finalized, or claimed already, are left out. The batch is sent once
        (its key names the questions and where each walk starts); should any of them be
        claimed by someone else before it is sent, it is recorded SKIPPED and nothing is
        sent (its walk there would revert the batch): call again."""
        if not self.reality.has_batch_claim:
            intents: list[Intent] = []
            done: list[str] = []
            withdrawn = 0
            for qid, from_block in questions:
                outcome = await self.claim(qid, from_block=from_block)
                if outcome is None:
                    continue
                intents += [i for i in (outcome.claim, outcome.withdraw) if i is not None]
                if outcome.claim is not None and outcome.claim.state == IntentState.CONFIRMED:
                    done.append(_hex(question_bytes(qid)))
                withdrawn += outcome.withdrawn
            return BatchClaimOutcome(tuple(intents), tuple(done), withdrawn)
        blocks = {question_bytes(q): block for q, block in questions}
        views = await self.reality.get_questions(list(blocks))
        walks = []
        for view in views:
            if view.phase != Phase.FINALIZED or view.history_hash == NULL_HASH:
                continue
            history = await self.reality.history(view.question_id, blocks[view.question_id])
            try:
                arguments = claim_arguments([h.entry for h in history], view.history_hash)
            except ValueError as error:
                raise TxError(f"{self.claim_key(view.question_id)}: {error}") from None
            walks.append((view, arguments))
        if not walks:
            return BatchClaimOutcome((), (), 0)
        batch = batch_claim_arguments([(view.question_id, a) for view, a in walks])
        starts = [(view.question_id, view.history_hash) for view, _ in walks]
        key = self.claim_many_key(starts)

        async def moved() -> bool:
            hashes = await asyncio.gather(
                *(self.reality.get_history_hash(question) for question, _ in starts)
            )
            return any(now != start for now, (_, start) in zip(hashes, starts, strict=True))

        intent = await self.manager.submit(
            TxRequest(
                key=key,
                to=self.reality.address,
                data=self.reality.encode("claimMultipleAndWithdrawBalance", *batch.args()),
                already_done=moved,
                just_checked=True,
                subjects=(key, *(self.claim_key(question) for question, _ in starts)),
            )
        )
        confirmed = intent.state == IntentState.CONFIRMED and intent.inclusion is not None
        withdrawn = (
            await self.reality.withdrawn_in(intent.inclusion.tx_hash)
            if confirmed and intent.inclusion is not None
            else 0
        )
        emit(
            logger,
            logging.INFO,
            "reality.claim_many",
            key=key,
            state=intent.state,
            questions=len(walks),
            entries=len(batch.bonds),
            withdrawn=withdrawn,
        )
        claimed = tuple(view.id_hex for view, _ in walks) if confirmed else ()
        return BatchClaimOutcome((intent,), claimed, withdrawn)


# --- deployment (development chains and tests) ----------------------------------------------


async def _deploy(manager: TxManager, key: str, name: str, *args: Any) -> str:
    intent = await manager.submit(TxRequest(key=key, to=None, data=creation_code(name, *args)))
    if intent.state != IntentState.CONFIRMED:
        raise TxError(f"deploying {name}: ended {intent.state.value}: {intent.error}")
    if intent.inclusion is None or intent.inclusion.contract_address is None:
        raise DeploymentError(f"deploying {name}: the receipt has no contract address")
    return to_checksum_address(intent.inclusion.contract_address)


async def deploy_reality(
    manager: TxManager, *, run: str, version: str = "v3", bond_token: str | None = None
) -> str:
    """Deploy RealityETH_v3_0, Realitio_v2_1 (`version="v2.1"`) or, with a `bond_token`,
    RealityETH_ERC20_v3_0 with its token set (`setToken`, once): each constructor creates
    the built-in templates. `run` makes the deployment's intent keys unique."""
    contract = reality_contract(manager.pool, ZERO_ADDRESS, version=version, bond_token=bond_token)
    address = await _deploy(manager, f"reality-deploy:{run}", contract.artifact_name)
    if bond_token is not None:
        intent = await manager.submit(
            TxRequest(
                key=f"reality-deploy:{run}:token",
                to=address,
                data=contract.encode("setToken", to_checksum_address(bond_token)),
            )
        )
        if intent.state != IntentState.CONFIRMED:
            raise TxError(f"setting the bond token: ended {intent.state.value}: {intent.error}")
    return address


async def ask_question(
    manager: TxManager,
    reality: str,
    *,
    template_id: int,
    text: str,
    arbitrator: str,
    timeout: int,
    opening_ts: int = 0,
    nonce: int = 0,
    min_bond: int = 0,
    bounty: int = 0,
    contract: RealityETH | None = None,
) -> bytes:
    """Ask a question once; returns its id, derived as the contract derives it. A question
    already asked is not asked again. On v3 `askQuestionWithMinBond` (`bounty` as value);
    on v2.1 `askQuestion` (no minimum bond); on an ERC-20 contract (`contract`, made by
    `reality_contract`) `askQuestionWithMinBondERC20`, the bounty in tokens, approved
    exactly first."""
    if contract is None:
        contract = RealityETH(manager.pool, reality)
    where = f"reality-ask:{manager.chain_id}:{contract.address.lower()}"
    arbitrator = to_checksum_address(arbitrator)
    qid = contract.derived_id(
        template_id=template_id,
        opening_ts=opening_ts,
        text=text,
        arbitrator=arbitrator,
        timeout=timeout,
        min_bond=min_bond,
        asker=manager.address,
        nonce=nonce,
    )

    async def asked() -> bool:
        return (await contract.get_question(qid)).phase != Phase.NOT_ASKED

    args = (template_id, text, arbitrator, timeout, opening_ts, nonce)
    value = bounty
    if contract.version == "v2.1":
        data = contract.encode("askQuestion", *args)
    elif contract.bond_token is not None:
        if bounty:
            token = Erc20(manager.pool, contract.bond_token)
            approval = await manager.submit(
                TxRequest(
                    key=f"{where}:{_hex(qid)}:approve",
                    to=token.address,
                    data=token.encode("approve", contract.address, bounty),
                    already_done=asked,
                )
            )
            if approval.state not in (IntentState.CONFIRMED, IntentState.SKIPPED):
                raise TxError(f"approving the bounty: ended {approval.state.value}")
        data = contract.encode("askQuestionWithMinBondERC20", *args, min_bond, bounty)
        value = 0
    else:
        data = contract.encode("askQuestionWithMinBond", *args, min_bond)
    intent = await manager.submit(
        TxRequest(
            key=f"{where}:{_hex(qid)}",
            to=contract.address,
            data=data,
            value=value,
            already_done=asked,
        )
    )
    if intent.state not in (IntentState.CONFIRMED, IntentState.SKIPPED):
        raise TxError(f"asking {_hex(qid)}: ended {intent.state.value}: {intent.error}")
    return qid


async def deploy_arbitrator(manager: TxManager, reality: str, fee: int, *, run: str) -> str:
    """Deploy the tests' `RealityArbitrator` for `reality`, owned by the manager's signer."""
    return await _deploy(
        manager, f"reality-deploy:{run}:arbitrator", REALITY_ARBITRATOR, reality, fee
    )
