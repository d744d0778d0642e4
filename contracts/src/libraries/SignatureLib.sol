// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IAgentOracle} from "../interfaces/IAgentOracle.sol";

/// @title SignatureLib
/// @notice EIP-712 hashing of proposals and recovery of packed 65-byte ECDSA signatures.
library SignatureLib {
    /// @notice `keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)")`.
    bytes32 internal constant DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    /// @notice The domain name, "AgentOracle".
    bytes32 internal constant NAME_HASH = keccak256("AgentOracle");
    /// @notice The domain version, "1".
    bytes32 internal constant VERSION_HASH = keccak256("1");
    /// @notice `Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)`.
    bytes32 internal constant PROPOSAL_TYPEHASH =
        keccak256("Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)");
    /// @notice `ProposalBatch(Proposal[] proposals)` followed by the `Proposal` type.
    bytes32 internal constant BATCH_TYPEHASH = keccak256(
        "ProposalBatch(Proposal[] proposals)Proposal(bytes32 questionId,uint8 round,uint16 outcome,bytes20 proofHash)"
    );

    /// @dev Half the secp256k1 group order: signatures with a larger `s` are malleable copies and are rejected.
    uint256 internal constant HALF_ORDER = 0x7fffffffffffffffffffffffffffffff5d576e7357a4501ddfe92f46681b20a0;

    /// @notice The EIP-712 domain separator for `verifyingContract` on `chainId`.
    function domainSeparator(uint256 chainId, address verifyingContract) internal pure returns (bytes32) {
        return keccak256(abi.encode(DOMAIN_TYPEHASH, NAME_HASH, VERSION_HASH, chainId, verifyingContract));
    }

    /// @notice `hashStruct(Proposal)`.
    function hashProposal(bytes32 questionId, uint8 round, uint16 outcome, bytes20 proofHash)
        internal
        pure
        returns (bytes32)
    {
        return keccak256(abi.encode(PROPOSAL_TYPEHASH, questionId, round, outcome, proofHash));
    }

    /// @notice `hashStruct(ProposalBatch)` from the proposals' struct hashes.
    function hashBatch(bytes32[] memory proposalHashes) internal pure returns (bytes32) {
        return keccak256(abi.encode(BATCH_TYPEHASH, keccak256(abi.encodePacked(proposalHashes))));
    }

    /// @notice The digest to sign: `keccak256("\x19\x01" ‖ domainSeparator ‖ structHash)`.
    function typedDataHash(bytes32 separator, bytes32 structHash) internal pure returns (bytes32 digest) {
        digest = keccak256(abi.encodePacked(hex"1901", separator, structHash));
    }

    /// @notice Recovers the signer of the `index`-th 65-byte signature (`r ‖ s ‖ v`) in `signatures`.
    /// @dev Reverts with `IAgentOracle.InvalidSignature` on v not in {27, 28}, s in the upper half, or a zero recovery.
    function recover(bytes32 digest, bytes calldata signatures, uint256 index) internal pure returns (address signer) {
        bytes32 r;
        bytes32 s;
        uint8 v;
        assembly ("memory-safe") {
            let p := add(signatures.offset, mul(index, 65))
            r := calldataload(p)
            s := calldataload(add(p, 32))
            v := byte(0, calldataload(add(p, 64)))
        }
        if (uint256(s) > HALF_ORDER || (v != 27 && v != 28)) revert IAgentOracle.InvalidSignature(index);
        signer = ecrecover(digest, v, r, s);
        if (signer == address(0)) revert IAgentOracle.InvalidSignature(index);
    }
}
