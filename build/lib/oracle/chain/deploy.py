"""Deploying the contracts and asking questions, through a `TxManager`.

`deploy_contracts` deploys AgentOracle (and, on request, Conditional Tokens and the
adapter) from the exported artifacts, grants the reporter role, and returns the
`Deployment` that `oracle chain deploy` writes. `ask` sends `request` and returns the
question id, derived locally exactly as the contract derives it and checked against the
`QuestionRequested` event of the receipt.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eth_utils.abi import collapse_if_tuple
from eth_utils.address import to_checksum_address
from hexbytes import HexBytes
from web3 import Web3

from oracle.chain.contracts import (
    ADAPTER,
    CONDITIONAL_TOKENS,
    LIVENESS_FLOOR,
    ORACLE,
    AgentOracle,
    Deployment,
    Role,
    load_artifact,
    question_id,
)
from oracle.chain.intents import Intent, IntentState
from oracle.chain.txmanager import TxManager, TxRequest
from oracle.errors import DeploymentError, TxError

ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"
# The dispute bond when none is given: 0.1 ETH, as in contracts/script/Deploy.s.sol
# (the contract rejects a zero bond).
DEFAULT_BOND_WEI = 10**17
_OFFLINE = Web3()


def creation_code(name: str, *args: Any) -> str:
    """The artifact's bytecode followed by its ABI-encoded constructor arguments."""
    artifact = load_artifact(name)
    inputs: list[dict[str, Any]] = next(
        (e.get("inputs", []) for e in artifact.abi if e["type"] == "constructor"), []
    )
    if len(inputs) != len(args):
        raise DeploymentError(f"{name}: constructor takes {len(inputs)} arguments, got {len(args)}")
    kinds = [collapse_if_tuple(i) for i in inputs]  # a struct argument is a tuple
    encoded = _OFFLINE.codec.encode(kinds, list(args)) if inputs else b""
    return artifact.bytecode + encoded.hex()


def _confirmed(intent: Intent, what: str) -> Intent:
    if intent.state != IntentState.CONFIRMED:
        detail = f": {intent.error}" if intent.error else ""
        raise TxError(f"{what}: ended {intent.state.value}{detail}")
    return intent


async def _deploy(manager: TxManager, run: str, name: str, *args: Any) -> tuple[str, Intent]:
    intent = _confirmed(
        await manager.submit(
            TxRequest(key=f"deploy:{run}:{name}", to=None, data=creation_code(name, *args))
        ),
        f"deploying {name}",
    )
    assert intent.inclusion is not None
    if intent.inclusion.contract_address is None:
        raise DeploymentError(f"deploying {name}: the receipt has no contract address")
    return to_checksum_address(intent.inclusion.contract_address), intent


async def deploy_contracts(
    manager: TxManager,
    *,
    owner: str | None = None,
    treasury: str | None = None,
    bond_token: str = ZERO_ADDRESS,
    bond_amount: int = DEFAULT_BOND_WEI,
    min_liveness: int = 7200,
    reporters: Sequence[str] | None = None,
    conditional_tokens: str | None = None,
    deploy_conditional_tokens: bool = False,
    adapter: bool = True,
) -> Deployment:
    """Deploy AgentOracle (+ Conditional Tokens adapter) and grant the reporter role.

    The deployer owns the contract while it grants the reporter role (reporters default
    to the deployer; the first becomes the primary reporter) and, if `owner` is another
    account, then starts the two-step ownership transfer, which `owner` must accept.
    """
    run = secrets.token_hex(6)
    deployer = manager.address
    final_owner = to_checksum_address(owner) if owner else deployer
    oracle_address, first = await _deploy(
        manager,
        run,
        ORACLE,
        deployer,
        to_checksum_address(treasury) if treasury else deployer,
        to_checksum_address(bond_token),
        bond_amount,
        min_liveness,
    )
    contracts = {ORACLE: oracle_address}
    transactions = {ORACLE: first.latest.tx_hash}
    assert first.inclusion is not None
    oracle = AgentOracle(manager.pool, oracle_address)
    accounts = [
        to_checksum_address(r) for r in (reporters if reporters is not None else [deployer])
    ]
    for account in accounts:
        _confirmed(
            await manager.submit(
                TxRequest(
                    key=f"deploy:{run}:grant-reporter:{account}",
                    to=oracle_address,
                    data=oracle.encode("grantRole", account, int(Role.REPORTER)),
                )
            ),
            f"granting the reporter role to {account}",
        )
    if accounts:
        # The primary reporter's proposals skip the role lookup (docs/contracts.md).
        _confirmed(
            await manager.submit(
                TxRequest(
                    key=f"deploy:{run}:primary-reporter",
                    to=oracle_address,
                    data=oracle.encode("setPrimaryReporter", accounts[0]),
                )
            ),
            f"making {accounts[0]} the primary reporter",
        )
    if deploy_conditional_tokens and conditional_tokens is None:
        conditional_tokens, intent = await _deploy(manager, run, CONDITIONAL_TOKENS)
        contracts[CONDITIONAL_TOKENS] = conditional_tokens
        transactions[CONDITIONAL_TOKENS] = intent.latest.tx_hash
    if adapter and conditional_tokens is not None:
        tokens = to_checksum_address(conditional_tokens)
        contracts.setdefault(CONDITIONAL_TOKENS, tokens)
        address, intent = await _deploy(manager, run, ADAPTER, oracle_address, tokens)
        contracts[ADAPTER] = address
        transactions[ADAPTER] = intent.latest.tx_hash
    if final_owner != deployer:
        _confirmed(
            await manager.submit(
                TxRequest(
                    key=f"deploy:{run}:transfer-ownership",
                    to=oracle_address,
                    data=oracle.encode("transferOwnership", final_owner),
                )
            ),
            "starting the ownership transfer",
        )
    return Deployment(
        chain_id=manager.chain_id,
        block_number=first.inclusion.block_number,
        deployer=deployer,
        contracts=contracts,
        transactions=transactions,
    )


@dataclass(frozen=True)
class Asked:
    question_id: str
    tx_hash: str
    block_number: int


async def ask(
    manager: TxManager,
    oracle_address: str,
    *,
    text: str,
    earliest_time: int,
    outcomes: int = 2,
    liveness: int = LIVENESS_FLOOR,
    callback: str = ZERO_ADDRESS,
    salt: bytes | None = None,
) -> Asked:
    """Ask a question (`request`); returns its id once the request is confirmed.

    `liveness` is raised to the contract's minimum, so the default (the contract's floor,
    30 seconds) means "the minimum liveness".
    """
    oracle = AgentOracle(manager.pool, oracle_address)
    salt = salt if salt is not None else secrets.token_bytes(32)
    raw = text.encode("utf-8")
    qid = question_id(
        manager.address,
        raw,
        outcome_count=outcomes,
        earliest_time=earliest_time,
        liveness=liveness,
        callback=to_checksum_address(callback),
        salt=salt,
    )
    data = oracle.encode(
        "request", raw, outcomes, earliest_time, liveness, to_checksum_address(callback), salt
    )
    qid_hex = HexBytes(qid).to_0x_hex()

    async def already_done() -> bool:
        return (await oracle.get_question(qid)).exists

    intent = await manager.submit(
        TxRequest(key=f"ask:{qid_hex}", to=oracle.address, data=data, already_done=already_done)
    )
    if intent.state != IntentState.SKIPPED:
        _confirmed(intent, "asking the question")
    if not (await oracle.get_question(qid)).exists:
        raise DeploymentError(f"question {qid_hex} is not on-chain after its request")
    inclusion = intent.inclusion
    return Asked(
        qid_hex,
        inclusion.tx_hash if inclusion else "",
        inclusion.block_number if inclusion else 0,
    )
