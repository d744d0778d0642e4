// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IAgentOracle} from "../interfaces/IAgentOracle.sol";
import {IConditionalTokens} from "../interfaces/IConditionalTokens.sol";
import {IConditionalTokensAdapter} from "../interfaces/IConditionalTokensAdapter.sol";
import {IOracleConsumer} from "../interfaces/IOracleConsumer.sol";
import {PayoutLib} from "../libraries/PayoutLib.sol";

/// @title ConditionalTokensAdapter
/// @notice The oracle of Conditional Tokens conditions whose questions AgentOracle answers. See
/// `IConditionalTokensAdapter`.
contract ConditionalTokensAdapter is IConditionalTokensAdapter {
    /// @notice The oracle that answers the questions.
    IAgentOracle public immutable oracle;
    /// @notice The Conditional Tokens contract.
    IConditionalTokens public immutable conditionalTokens;

    /// @notice Deploys the adapter.
    /// @param oracle_ The AgentOracle.
    /// @param conditionalTokens_ The ConditionalTokens contract.
    constructor(IAgentOracle oracle_, IConditionalTokens conditionalTokens_) {
        oracle = oracle_;
        conditionalTokens = conditionalTokens_;
    }

    /// @inheritdoc IConditionalTokensAdapter
    function prepareQuestion(
        bytes calldata text,
        uint16 outcomeCount,
        uint32 earliestTime,
        uint32 liveness,
        bytes32 salt
    ) external returns (bytes32 questionId, bytes32 conditionId) {
        questionId = oracle.request(
            text, outcomeCount, earliestTime, liveness, address(this), keccak256(abi.encode(msg.sender, salt))
        );
        conditionId = conditionalTokens.getConditionId(address(this), questionId, outcomeCount);
        // Anyone can prepare a condition for any oracle; if someone front-ran us with the same (identical)
        // condition, use it instead of reverting.
        if (conditionalTokens.getOutcomeSlotCount(conditionId) == 0) {
            conditionalTokens.prepareCondition(address(this), questionId, outcomeCount);
        }
        emit QuestionPrepared(questionId, conditionId, msg.sender, outcomeCount);
    }

    /// @inheritdoc IOracleConsumer
    function onOracleResult(bytes32 questionId, uint16 outcome) external {
        if (msg.sender != address(oracle)) revert NotOracle(msg.sender);
        // Already reported through `resolve`: the result is delivered, so let settlement complete (a revert would
        // leave the question open to retries that can never succeed).
        (uint16 outcomeCount, bytes32 conditionId) = _condition(questionId);
        if (conditionalTokens.payoutDenominator(conditionId) != 0) return;
        _report(questionId, outcome, outcomeCount, conditionId);
    }

    /// @inheritdoc IConditionalTokensAdapter
    function resolve(bytes32 questionId) external {
        (uint16 outcome,,) = oracle.finalResult(questionId);
        (uint16 outcomeCount, bytes32 conditionId) = _condition(questionId);
        _report(questionId, outcome, outcomeCount, conditionId);
    }

    /// @inheritdoc IConditionalTokensAdapter
    function payoutsFor(uint16 outcomeCount, uint16 outcome) external pure returns (uint256[] memory) {
        return PayoutLib.payouts(outcomeCount, outcome);
    }

    /// @dev The question's outcome count and the id of its condition with this adapter as oracle.
    function _condition(bytes32 questionId) internal view returns (uint16 outcomeCount, bytes32 conditionId) {
        outcomeCount = oracle.getQuestion(questionId).outcomeCount;
        conditionId = conditionalTokens.getConditionId(address(this), questionId, outcomeCount);
    }

    function _report(bytes32 questionId, uint16 outcome, uint16 outcomeCount, bytes32 conditionId) internal {
        if (outcomeCount == 0 || conditionalTokens.getOutcomeSlotCount(conditionId) == 0) {
            revert ConditionNotPrepared(conditionId);
        }
        uint256[] memory payouts = PayoutLib.payouts(outcomeCount, outcome);
        conditionalTokens.reportPayouts(questionId, payouts);
        emit PayoutsReported(questionId, conditionId, outcome, payouts);
    }
}
