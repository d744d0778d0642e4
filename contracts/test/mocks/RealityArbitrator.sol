// SPDX-License-Identifier: MIT
pragma solidity ^0.8.6;

/// @notice The two arbitration functions of Reality.eth v3 that an arbitrator calls.
interface IRealityArbitration {
    function notifyOfArbitrationRequest(bytes32 question_id, address requester, uint256 max_previous) external;

    function assignWinnerAndSubmitAnswerByArbitrator(
        bytes32 question_id,
        bytes32 answer,
        address payee_if_wrong,
        bytes32 last_history_hash,
        bytes32 last_answer_or_commitment_id,
        address last_answerer
    ) external;
}

/// @notice A minimal arbitrator for tests against the real Reality.eth v3 (compiled with it by
/// scripts/build-reality.js): anyone who pays `fee` freezes a question pending arbitration, and the owner rules.
/// The winner when the last answer was wrong is whoever paid for the arbitration.
contract RealityArbitrator {
    IRealityArbitration public immutable reality;
    address public immutable owner;
    uint256 public immutable fee;
    mapping(bytes32 => address) public requesters;

    constructor(address reality_, uint256 fee_) {
        reality = IRealityArbitration(reality_);
        owner = msg.sender;
        fee = fee_;
    }

    /// @notice Pay `fee` to freeze `questionId`; reverts if a bond above `maxPrevious` (when nonzero) was posted.
    function requestArbitration(bytes32 questionId, uint256 maxPrevious) external payable {
        require(msg.value >= fee, "the arbitration fee was not paid");
        require(requesters[questionId] == address(0), "arbitration was already requested");
        requesters[questionId] = msg.sender;
        reality.notifyOfArbitrationRequest(questionId, msg.sender, maxPrevious);
    }

    /// @notice The owner's ruling; the last history entry is what Reality.eth checks against its history hash.
    function rule(bytes32 questionId, bytes32 answer, bytes32 lastHistoryHash, bytes32 lastAnswer, address lastAnswerer)
        external
    {
        require(msg.sender == owner, "only the owner rules");
        address requester = requesters[questionId];
        require(requester != address(0), "no arbitration was requested");
        reality.assignWinnerAndSubmitAnswerByArbitrator(
            questionId, answer, requester, lastHistoryHash, lastAnswer, lastAnswerer
        );
    }
}
