"""The oracle's contracts as the chain layer sees them: artifacts, deployments, calls.

* `load_artifact(name)`: ABI and bytecode exported by the contracts build into
  `oracle/chain/artifacts/<name>.json` (AgentOracle, ConditionalTokensAdapter,
  ConditionalTokens).
* `Deployment`: the file `oracle chain deploy` writes (addresses, chain id, block).
* `AgentOracle` / `ConditionalTokensAdapter`: typed reads through an `RpcPool` (many at
  once with `read_many` / `get_questions`: one JSON-RPC batch request) and offline
  calldata encoding for the transactions the submitters send.

Encodings (docs/contracts.md): an outcome is an index in [0, outcomeCount), binary
questions use 0 = YES and 1 = NO, and 65535 (`INVALID_OUTCOME`) marks a question that
cannot be resolved. The proof hash committed on-chain is `bytes20(sha256(proof))`: the
first 20 bytes of the consensus proof's SHA-256 checksum (`proof_hash`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from functools import cache, lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from eth_abi.abi import decode as abi_decode
from eth_abi.abi import encode as abi_encode
from eth_typing import ChecksumAddress, HexStr
from eth_utils.abi import collapse_if_tuple
from eth_utils.address import to_checksum_address
from eth_utils.crypto import keccak
from hexbytes import HexBytes
from pydantic import BaseModel, ConfigDict, ValidationError
from web3 import Web3 as OfflineWeb3

from oracle.chain.events import EventDecoder
from oracle.chain.revert import ErrorDecoder
from oracle.chain.rpc import RpcPool, Web3
from oracle.errors import DeploymentError

INVALID_OUTCOME = 65535
LIVENESS_FLOOR = 30  # seconds: the shortest liveness, requested or minimum, the contract accepts
MAX_LIVENESS = 90 * 86400
YES_INDEX = 0
NO_INDEX = 1
ORACLE = "AgentOracle"
ADAPTER = "ConditionalTokensAdapter"
CONDITIONAL_TOKENS = "ConditionalTokens"
_OFFLINE = OfflineWeb3()


class Status(IntEnum):
    NONE = 0
    REQUESTED = 1
    PROPOSED = 2
    DISPUTED = 3
    FINAL = 4
    FLAGGED = 5


class Role(IntEnum):
    REPORTER = 0
    OPERATOR = 1
    ARBITER = 2
    PAUSER = 3


@dataclass(frozen=True)
class Artifact:
    name: str
    abi: list[dict[str, Any]]
    bytecode: str


@cache
def load_artifact(name: str) -> Artifact:
    """The exported artifact `oracle/chain/artifacts/<name>.json` (`uma/Finder`: one of
    UMA's, in `artifacts/uma/`)."""
    try:
        parts = f"{name}.json".split("/")
        text = resources.files("oracle.chain").joinpath("artifacts", *parts).read_text()
    except (FileNotFoundError, OSError):
        raise DeploymentError(
            f"oracle/chain/artifacts/{name}.json: no such artifact (build the contracts)"
        ) from None
    try:
        document = json.loads(text)
        abi, bytecode = document["abi"], document["bytecode"]
    except (ValueError, KeyError, TypeError):
        raise DeploymentError(f"oracle/chain/artifacts/{name}.json: not an ABI artifact") from None
    if not bytecode.startswith("0x"):
        bytecode = "0x" + bytecode
    return Artifact(name, abi, bytecode)


@dataclass(frozen=True)
class _Function:
    """One ABI function, resolved once: web3 searches the whole ABI on every call."""

    selector: bytes
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]


@cache
def _functions(name: str) -> dict[str, _Function]:
    functions: dict[str, _Function] = {}
    for item in load_artifact(name).abi:
        if item.get("type") != "function":
            continue
        if item["name"] in functions:
            raise DeploymentError(f"{name}.{item['name']}: overloaded functions are not supported")
        inputs = tuple(collapse_if_tuple(i) for i in item["inputs"])
        functions[item["name"]] = _Function(
            selector=keccak(text=f"{item['name']}({','.join(inputs)})")[:4],
            inputs=inputs,
            outputs=tuple(collapse_if_tuple(o) for o in item["outputs"]),
        )
    return functions


def _function(name: str, function: str) -> _Function:
    try:
        return _functions(name)[function]
    except KeyError:
        raise DeploymentError(f"{name} has no function {function!r}") from None


@lru_cache(maxsize=4096)
def _checksum(address: str) -> ChecksumAddress:
    """EIP-55 form of an address read from the chain. Cached: each costs a keccak, and the
    same few (reporters, callbacks, the zero address) come back in every read."""
    return to_checksum_address(address)


def _checksummed(kind: str, value: Any) -> Any:
    """Addresses as web3 returns them (EIP-55 checksummed); other values unchanged."""
    if kind == "address":
        return _checksum(value)
    if kind == "address[]":
        return [_checksum(v) for v in value]
    return value


def encode_call(name: str, function: str, *args: Any) -> HexStr:
    """Calldata for `function(*args)` of the artifact `name`, without any node."""
    spec = _function(name, function)
    return HexStr("0x" + (spec.selector + abi_encode(list(spec.inputs), list(args))).hex())


def _decode_result(spec: _Function, raw: bytes) -> Any:
    """A view call's return data: one value, or a tuple for several outputs (as web3's)."""
    values = tuple(
        _checksummed(kind, value)
        for kind, value in zip(spec.outputs, abi_decode(list(spec.outputs), raw), strict=True)
    )
    return values[0] if len(values) == 1 else values


def error_decoder() -> ErrorDecoder:
    """Decodes the custom errors of every oracle contract (UMA's managed OOv2's too,
    through its test double's ABI, which keeps the real errors)."""
    abis = []
    for name in (ORACLE, ADAPTER, "ManagedOptimisticOracleV2Double"):
        try:
            abis.append(load_artifact(name).abi)
        except DeploymentError:
            continue
    return ErrorDecoder(*abis)


def proof_hash(checksum: str) -> bytes:
    """`bytes20(sha256(proof))` from the proof's hex SHA-256 checksum."""
    try:
        digest = bytes.fromhex(checksum.removeprefix("0x"))
    except ValueError:
        raise ValueError("proof checksum: not hex") from None
    if len(digest) != 32:
        raise ValueError("proof checksum: expected 32 bytes (64 hex digits)")
    return digest[:20]


def outcome_index(outcome: str, outcomes: Sequence[str] = ("YES", "NO")) -> int:
    """The on-chain encoding of a verdict: its index among `outcomes`, INVALID -> 65535."""
    if outcome == "INVALID":
        return INVALID_OUTCOME
    try:
        return list(outcomes).index(outcome)
    except ValueError:
        raise ValueError(f"outcome {outcome!r} is not one of {list(outcomes)}") from None


def outcome_name(index: int, outcome_count: int) -> str:
    if index == INVALID_OUTCOME:
        return "INVALID"
    if outcome_count == 2 and index in (YES_INDEX, NO_INDEX):
        return ("YES", "NO")[index]
    return str(index)


def question_id(
    requester: str,
    text: bytes,
    *,
    outcome_count: int,
    earliest_time: int,
    liveness: int,
    callback: str,
    salt: bytes,
) -> bytes:
    """`keccak256(abi.encode(requester, keccak256(text), outcomeCount, earliestTime,
    liveness, callback, salt))`, as the contract derives it."""
    encoded = _OFFLINE.codec.encode(
        ["address", "bytes32", "uint16", "uint32", "uint32", "address", "bytes32"],
        [requester, keccak(text), outcome_count, earliest_time, liveness, callback, salt],
    )
    return keccak(encoded)


# --- deployment files ---------------------------------------------------------------------


class Deployment(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    chain_id: int
    block_number: int
    deployer: str
    contracts: dict[str, str]  # name -> address
    transactions: dict[str, str] = {}  # name -> deployment tx hash

    def address(self, name: str) -> str:
        try:
            return self.contracts[name]
        except KeyError:
            raise DeploymentError(f"deployment has no {name} address") from None

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.model_dump_json(indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> Deployment:
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise DeploymentError(
                f"{path}: no deployment file (run `oracle chain deploy`)"
            ) from None
        except (OSError, ValidationError, ValueError):
            raise DeploymentError(f"{path}: not a deployment file") from None


# --- typed contract access ----------------------------------------------------------------


class QuestionView(BaseModel):
    model_config = ConfigDict(frozen=True)

    status: Status
    outcome_count: int
    round: int
    settled: bool
    outcome: int
    proposer: str
    proof_hash: str
    liveness: int
    earliest_time: int
    deadline: int
    finalized_at: int
    callback: str

    @property
    def exists(self) -> bool:
        return self.status != Status.NONE

    def describe(self) -> dict[str, Any]:
        data = self.model_dump(mode="json")
        data["status"] = self.status.name
        data["outcome_name"] = (
            outcome_name(self.outcome, self.outcome_count)
            if self.status in (Status.PROPOSED, Status.DISPUTED, Status.FINAL)
            else None
        )
        return data


class OracleConfig(BaseModel):
    model_config = ConfigDict(frozen=True)

    paused: bool
    threshold: int
    operator_count: int
    min_liveness: int
    callback_gas_limit: int
    safety_period: int


def _bytes32(value: bytes | str) -> bytes:
    raw = bytes(HexBytes(value))
    if len(raw) != 32:
        raise ValueError("question id: expected 32 bytes")
    return raw


class _Contract:
    artifact_name = ""

    def __init__(self, pool: RpcPool, address: str) -> None:
        self.pool = pool
        self.address = to_checksum_address(address)
        self.artifact = load_artifact(self.artifact_name)

    def encode(self, function: str, *args: Any) -> HexStr:
        return encode_call(self.artifact_name, function, *args)

    def decode_call(self, data: str) -> tuple[str, dict[str, Any]]:
        """(function name, arguments by name) of calldata for this contract."""
        contract = _OFFLINE.eth.contract(abi=self.artifact.abi)
        function, args = contract.decode_function_input(data)
        return str(function.fn_name), dict(args)

    async def read(self, function: str, *args: Any) -> Any:
        """A view call: one value, or a tuple for several outputs (as web3 returns them)."""
        (value,) = await self.read_many(function, [args])
        return value

    async def read_many(self, function: str, calls: Sequence[Sequence[Any]]) -> list[Any]:
        """`read(function, *args)` for every `args` in `calls`, in order, in one JSON-RPC
        batch request per `rpc.max_batch_size` calls."""
        spec = _function(self.artifact_name, function)
        calldata = [self.encode(function, *args) for args in calls]
        raws = await self.pool.eth_calls(f"{self.artifact_name}.{function}", self.address, calldata)
        return [_decode_result(spec, raw) for raw in raws]


def _question_view(q: tuple[Any, ...]) -> QuestionView:
    """A question as `getQuestion` returns it, typed."""
    return QuestionView(
        status=Status(q[0]),
        outcome_count=q[1],
        round=q[2],
        settled=q[3],
        outcome=q[4],
        proposer=_checksum(q[5]),
        proof_hash=HexBytes(q[6]).to_0x_hex(),
        liveness=q[7],
        earliest_time=q[8],
        deadline=q[9],
        finalized_at=q[10],
        callback=_checksum(q[11]),
    )


class AgentOracle(_Contract):
    artifact_name = ORACLE

    async def get_question(self, qid: bytes | str) -> QuestionView:
        (question,) = await self.get_questions([qid])
        return question

    async def get_questions(self, qids: Sequence[bytes | str]) -> list[QuestionView]:
        """The questions `qids`, in order (no request at all for none)."""
        rows = await self.read_many("getQuestion", [(_bytes32(qid),) for qid in qids])
        return [_question_view(row) for row in rows]

    async def config(self) -> OracleConfig:
        c = await self.read("config")
        return OracleConfig(
            paused=c[0],
            threshold=c[1],
            operator_count=c[2],
            min_liveness=c[3],
            callback_gas_limit=c[4],
            safety_period=c[5],
        )

    async def has_role(self, account: str, role: Role) -> bool:
        return bool(await self.read("hasRole", to_checksum_address(account), int(role)))

    async def proposal_digest(
        self, qid: bytes, round_: int, outcome: int, proof_hash_: bytes
    ) -> bytes:
        return bytes(await self.read("proposalDigest", qid, round_, outcome, proof_hash_))

    async def batch_digest(self, proposals: Sequence[tuple[bytes, int, bytes]]) -> bytes:
        return bytes(await self.read("batchDigest", list(proposals)))

    async def proposal_transaction(self, qid: bytes | str, from_block: int = 0) -> str | None:
        """The transaction of the question's latest `AnswerProposed` event since
        `from_block` (None: no proposal): where its standing answer came from."""
        decoder = _answer_proposed()
        params = {
            "address": self.address,
            "topics": [decoder.topic, HexBytes(_bytes32(qid)).to_0x_hex()],
            "fromBlock": from_block,
            "toBlock": "latest",
        }

        async def run(w3: Web3) -> Any:
            return await w3.eth.get_logs(params)  # type: ignore[arg-type]

        logs = await self.pool.call("eth_getLogs", run)
        return HexBytes(logs[-1]["transactionHash"]).to_0x_hex() if logs else None


@cache
def _answer_proposed() -> EventDecoder:
    return EventDecoder(load_artifact(ORACLE).abi, "AnswerProposed")


class ConditionalTokensAdapter(_Contract):
    artifact_name = ADAPTER

    async def conditional_tokens(self) -> str:
        return to_checksum_address(await self.read("conditionalTokens"))


class ConditionalTokens(_Contract):
    artifact_name = CONDITIONAL_TOKENS

    async def condition_id(self, oracle: str, qid: bytes, outcome_count: int) -> bytes:
        return bytes(
            await self.read("getConditionId", to_checksum_address(oracle), qid, outcome_count)
        )

    async def payout_denominator(self, condition: bytes) -> int:
        return int(await self.read("payoutDenominator", condition))

    async def payouts(self, condition: bytes, outcome_count: int) -> list[int]:
        return [
            int(await self.read("payoutNumerators", condition, index))
            for index in range(outcome_count)
        ]


def event_abi(abi: Sequence[Mapping[str, Any]], name: str) -> Mapping[str, Any]:
    for entry in abi:
        if entry.get("type") == "event" and entry.get("name") == name:
            return entry
    raise DeploymentError(f"the ABI has no event {name}")
