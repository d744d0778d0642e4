// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

import {IOracleConsumer} from "./IOracleConsumer.sol";

/// @title IConditionalTokensAdapter
/// @notice Bridges AgentOracle questions to Gnosis Conditional Tokens conditions: the adapter is the condition's
/// oracle, prepares the condition when a question is asked through it, and reports payouts once the answer is
/// final. Payouts: outcome i -> one-hot vector with 1 at index i (binary: YES = 0 -> [1,0], NO = 1 -> [0,1]);
/// INVALID -> all ones ([1,1] for binary).
interface IConditionalTokensAdapter is IOracleConsumer {
    /// @notice A question was asked through the adapter and its condition prepared.
    event QuestionPrepared(
        bytes32 indexed questionId, bytes32 indexed conditionId, address indexed creator, uint16 outcomeCount
    );

    /// @notice Payouts were reported to Conditional Tokens.
    event PayoutsReported(bytes32 indexed questionId, bytes32 indexed conditionId, uint16 outcome, uint256[] payouts);

    /// @notice `onOracleResult` from an account other than the oracle.
    error NotOracle(address caller);

    /// @notice An outcome that is neither an index below `outcomeCount` nor INVALID (65535).
    error OutcomeOutOfRange(uint16 outcomeCount, uint16 outcome);

    /// @notice The oracle id and the condition have different outcome counts (never for adapter-made questions).
    error ConditionNotPrepared(bytes32 conditionId);

    /// @notice Asks the oracle a question with the adapter as callback and prepares the matching condition.
    /// @dev The oracle salt is `keccak256(abi.encode(msg.sender, salt))`, so callers cannot take each other's ids.
    /// @param text The question text.
    /// @param outcomeCount Number of outcomes, 2 to 256.
    /// @param earliestTime Earliest proposal time.
    /// @param liveness Challenge window in seconds.
    /// @param salt Caller-chosen salt.
    /// @return questionId The oracle question id, also the Conditional Tokens question id.
    /// @return conditionId The Conditional Tokens condition id.
    function prepareQuestion(
        bytes calldata text,
        uint16 outcomeCount,
        uint32 earliestTime,
        uint32 liveness,
        bytes32 salt
    ) external returns (bytes32 questionId, bytes32 conditionId);

    /// @notice Anyone: reports payouts for a final question (use when the settle callback failed or was skipped).
    /// The settle callback (`onOracleResult`) then returns without effect, so a later `settle` completes.
    /// @param questionId The question.
    function resolve(bytes32 questionId) external;

    /// @notice The payout vector for an outcome.
    /// @param outcomeCount Number of outcomes.
    /// @param outcome Outcome index or 65535 (INVALID).
    /// @return payouts The vector.
    function payoutsFor(uint16 outcomeCount, uint16 outcome) external pure returns (uint256[] memory payouts);
}
