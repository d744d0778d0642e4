// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title IOracleConsumer
/// @notice Implemented by contracts that want `AgentOracle.settle` to push final results to them.
/// @dev Delivery is at least attempted, never guaranteed: a consumer must also be able to pull the result itself
/// with `IAgentOracle.finalResult` (which reverts until the question is final).
interface IOracleConsumer {
    /// @notice Called by the oracle from `settle` with the whole `callbackGasLimit` allowance. It succeeds at most
    /// once per question: a revert (or running out of the allowance) is recorded in `Settled`, not propagated, and
    /// leaves the question unsettled so that anyone may call `settle` again later.
    /// @dev Check that `msg.sender` is the oracle. A consumer that also pulls results (`finalResult`) should return
    /// without effect for a question it already handled, so that a later `settle` completes; the call may re-enter
    /// the oracle, but a nested `settle` of the same question reverts `AlreadySettled`.
    /// @param questionId The question.
    /// @param outcome The final outcome index, or 65535 for INVALID.
    function onOracleResult(bytes32 questionId, uint16 outcome) external;
}
