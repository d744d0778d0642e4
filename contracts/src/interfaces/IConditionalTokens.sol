// SPDX-License-Identifier: MIT
pragma solidity ^0.8.24;

/// @title IConditionalTokens
/// @notice The part of Gnosis Conditional Tokens (`@gnosis.pm/conditional-tokens-contracts` 1.0.3) the adapter uses.
interface IConditionalTokens {
    /// @notice Prepares a condition; its id is `keccak256(abi.encodePacked(oracle, questionId, outcomeSlotCount))`.
    /// @param oracle The account that will report payouts.
    /// @param questionId The question id.
    /// @param outcomeSlotCount Number of outcome slots, 2 to 256.
    function prepareCondition(address oracle, bytes32 questionId, uint256 outcomeSlotCount) external;

    /// @notice Reports the payout vector; the caller is the condition's oracle.
    /// @param questionId The question id.
    /// @param payouts Payout numerators, one per outcome slot.
    function reportPayouts(bytes32 questionId, uint256[] calldata payouts) external;

    /// @notice The condition id for an oracle, question and slot count.
    /// @param oracle The oracle.
    /// @param questionId The question id.
    /// @param outcomeSlotCount Number of outcome slots.
    /// @return The condition id.
    function getConditionId(address oracle, bytes32 questionId, uint256 outcomeSlotCount)
        external
        pure
        returns (bytes32);

    /// @notice Number of outcome slots of a prepared condition (0 if not prepared).
    /// @param conditionId The condition id.
    /// @return The slot count.
    function getOutcomeSlotCount(bytes32 conditionId) external view returns (uint256);

    /// @notice A payout numerator.
    /// @param conditionId The condition id.
    /// @param index The outcome slot.
    /// @return The numerator.
    function payoutNumerators(bytes32 conditionId, uint256 index) external view returns (uint256);

    /// @notice The payout denominator; non-zero once reported.
    /// @param conditionId The condition id.
    /// @return The denominator.
    function payoutDenominator(bytes32 conditionId) external view returns (uint256);
}
