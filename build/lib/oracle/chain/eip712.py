"""EIP-712 operator signatures for the oracle's multi-operator mode.

Domain: name "AgentOracle", version "1", the chain id and the oracle's address. Operators
sign `Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)` for
`proposeSigned`, or `ProposalBatch(Proposal[] proposals)` for `proposeBatchSigned`; the
round is the question's current round (`getQuestion(...).round`), so a signature cannot
be replayed after the arbiter reopens a question. Signatures are 65 bytes `r || s || v`
(v 27 or 28, low s), concatenated in any order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from eth_account.messages import _hash_eip191_message, encode_typed_data

from oracle.chain.keys import Signer

DOMAIN_NAME = "AgentOracle"
DOMAIN_VERSION = "1"
_DOMAIN_FIELDS = [
    {"name": "name", "type": "string"},
    {"name": "version", "type": "string"},
    {"name": "chainId", "type": "uint256"},
    {"name": "verifyingContract", "type": "address"},
]
_PROPOSAL_FIELDS = [
    {"name": "questionId", "type": "bytes32"},
    {"name": "round", "type": "uint8"},
    {"name": "outcome", "type": "uint16"},
    {"name": "proofHash", "type": "bytes20"},
]
SECP256K1_HALF_ORDER = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0


@dataclass(frozen=True)
class SignedProposal:
    """What operators sign for one question (`round` is the question's current round)."""

    question_id: bytes
    round: int
    outcome: int
    proof_hash: bytes

    def message(self) -> dict[str, Any]:
        return {
            "questionId": self.question_id,
            "round": self.round,
            "outcome": self.outcome,
            "proofHash": self.proof_hash,
        }


def _domain(chain_id: int, contract: str) -> dict[str, Any]:
    return {
        "name": DOMAIN_NAME,
        "version": DOMAIN_VERSION,
        "chainId": chain_id,
        "verifyingContract": contract,
    }


def proposal_typed_data(chain_id: int, contract: str, proposal: SignedProposal) -> dict[str, Any]:
    return {
        "types": {"EIP712Domain": _DOMAIN_FIELDS, "Proposal": _PROPOSAL_FIELDS},
        "primaryType": "Proposal",
        "domain": _domain(chain_id, contract),
        "message": proposal.message(),
    }


def batch_typed_data(
    chain_id: int, contract: str, proposals: Sequence[SignedProposal]
) -> dict[str, Any]:
    return {
        "types": {
            "EIP712Domain": _DOMAIN_FIELDS,
            "ProposalBatch": [{"name": "proposals", "type": "Proposal[]"}],
            "Proposal": _PROPOSAL_FIELDS,
        },
        "primaryType": "ProposalBatch",
        "domain": _domain(chain_id, contract),
        "message": {"proposals": [p.message() for p in proposals]},
    }


def digest(typed_data: dict[str, Any]) -> bytes:
    """The 32-byte hash that is signed (the contract's `proposalDigest` / `batchDigest`)."""
    return bytes(_hash_eip191_message(encode_typed_data(full_message=typed_data)))


def check_signature(signature: bytes) -> None:
    """The contract accepts only 65-byte signatures with v in {27, 28} and a low s."""
    if len(signature) != 65:
        raise ValueError("signature must be 65 bytes")
    if signature[64] not in (27, 28):
        raise ValueError("signature v must be 27 or 28")
    if int.from_bytes(signature[32:64], "big") > SECP256K1_HALF_ORDER:
        raise ValueError("signature s must be in the lower half of the curve order")


async def operator_signatures(operators: Sequence[Signer], typed_data: dict[str, Any]) -> bytes:
    """Every operator's signature over `typed_data`, checked and concatenated."""
    signatures = []
    for operator in operators:
        signature = await operator.sign_typed_data(typed_data)
        check_signature(signature)
        signatures.append(signature)
    return b"".join(signatures)
