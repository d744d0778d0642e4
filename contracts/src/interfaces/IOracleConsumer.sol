// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title IOracleConsumer
/// @notice Implemented by contracts that want `AgentOracle.settle` to push final results to them.
interface IOracleConsumer {
    /// @notice Called by the oracle from `settle` with a fixed gas allowance; a revert is recorded, not propagated.
    /// @dev Check that `msg.sender` is the oracle.
    /// @param questionId The question.
    /// @param outcome The final outcome index, or 65535 for INVALID.
    function onOracleResult(bytes32 questionId, uint16 outcome) external;
}
